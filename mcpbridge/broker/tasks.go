package broker

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/jsonscan"
)

// MCP tasks (2025-11-25, and the 2026-07-28 extension) on a shared instance. A task id is the
// server's, one namespace for every window of the instance, and names the task in tasks/get,
// tasks/result, tasks/cancel and tasks/update: a window that knew or guessed another window's id
// could follow that window's call, take its result or cancel it. So the daemon keeps who owns
// each task:
//
//   - The owner is the attachment whose tools/call the handle (CreateTaskResult, or a result of
//     resultType "task") answered, recorded before the handle reaches the window.
//   - A tasks/* request naming a task is relayed only for its owner. A task whose owner is gone
//     (detached, or its process exited) may be claimed by a window that names the server as the
//     owner did (Request.Name): that is how a reloaded editor, or a window after `switchboard
//     call`, follows a task its predecessor left running (host/tasks.go finds it in tasks.json,
//     which keys it by that name; the daemon cannot read tasks.json). It is then that window's.
//     A task of another live window, or one the daemon never saw created, is refused.
//   - tasks/list answers with the window's own tasks only (the server's page, filtered; its
//     cursor kept): the server lists every window's.
//   - notifications/tasks/status goes to the task's owner only.
//
// An ended task (a terminal status seen, or a tasks/result answered) stays its owner's among the
// last maxEndedTasks, so that the 2025-11-25 client can still fetch its result after tasks/get
// said it completed; then it is forgotten, and so are all of an instance's when it stops. A window
// of an older build sends nothing new: its own tasks work as before.

// Limits of the task table (per instance).
const (
	maxTasks      = 4096 // tasks kept, running or ended: the oldest go first beyond it
	maxEndedTasks = 1024 // ended tasks kept for their owner's tasks/result
)

// Kinds of a window's request whose response the daemon reads (pending.kind).
const (
	kindPlain    uint8 = iota
	kindCall           // tools/call: its result may be a task's handle
	kindTask           // tasks/get, tasks/result, tasks/cancel, tasks/update: the status
	kindTaskList       // tasks/list: filtered to the window's own tasks
)

// task is one task started through the daemon.
type task struct {
	owner *attachment // the window that started it, or claimed it since
	name  string      // the server's name in the window that started it
	ended bool
}

// taskRequest checks a window's tasks/* request and forwards it when the task is the window's
// (or claimable); anything else is answered with an error and never reaches the server.
func (in *instance) taskRequest(a *attachment, m *msg) {
	switch m.method {
	case "tasks/list":
		in.forwardAs(a, m, nil, kindTaskList, "")
		return
	case "tasks/get", "tasks/result", "tasks/cancel", "tasks/update":
	default:
		// A request the daemon cannot tell the task of: it might name another window's.
		a.send(errorResponse(m.id, codeMethodNotFound, m.method+": not relayed to a shared server (the daemon cannot tell whose task it is about)"))
		return
	}
	v, ambiguous := lookup(m.params, "taskId")
	id, ok := "", false
	if !ambiguous && v != nil && v[0] == '"' {
		id, ok = stringMember(m.params, "taskId")
	}
	if !ok {
		a.send(errorResponse(m.id, codeInvalidParams, m.method+": params need exactly one taskId, a string"))
		return
	}
	in.mu.Lock()
	why := in.mayUseLocked(a, id)
	in.mu.Unlock()
	if why != "" {
		a.send(errorResponse(m.id, codeInvalidParams, m.method+": "+why))
		return
	}
	in.forwardAs(a, m, nil, kindTask, id)
}

// mayUseLocked says why a may not name task id ("": it may; a claim is made here). in.mu held.
func (in *instance) mayUseLocked(a *attachment, id string) string {
	if in.tasks == nil {
		return "the shared server is not running"
	}
	t := in.tasks[id]
	q := strconv.Quote(id)
	switch {
	case t == nil:
		return "no window started task " + q + " on this shared server (or it ended long ago)"
	case t.owner == a:
		return ""
	case in.ownerLiveLocked(t):
		return "task " + q + " belongs to another window using this shared server; only that window may follow, fetch or cancel it"
	case t.name != a.req.Name:
		return fmt.Sprintf("task %s was started by another window for its server %s, not %s", q, strconv.Quote(t.name), strconv.Quote(a.req.Name))
	}
	in.d.log.Info("broker: a window took over a task the window that started it left", "name", in.req.Name, "task", id)
	t.owner = a
	return ""
}

// ownerLiveLocked: t's owner is attached and its process runs. A window whose process has exited
// may not have been detached yet (its end of file still on its way to the relay loop), while its
// successor, which waited for that exit (host/ownerwait.go), already asks for the task.
func (in *instance) ownerLiveLocked(t *task) bool {
	if _, ok := in.atts[t.owner]; !ok {
		return false
	}
	return !processGone(t.owner.pid)
}

// taskResponse reads what the daemon keeps from the response m to p (a window's request of a
// kind other than plain), before it is relayed.
func (in *instance) taskResponse(p *pending, m *msg) {
	switch p.kind {
	case kindCall:
		// Cheap first: nearly every result is no task, and may be large.
		if !bytes.Contains(m.data, []byte("task")) && !bytes.Contains(m.data, []byte(`\u`)) {
			return
		}
		res := member(m.data, "result")
		if res == nil {
			return
		}
		h := member(res, "task") // 2025-11-25: {"task": {...}}
		if h == nil {
			if rt, _ := stringMember(res, "resultType"); rt != "task" { // 2026-07-28
				return
			}
			h = res
		}
		id, ok := stringMember(h, "taskId")
		if !ok {
			return
		}
		status, _ := stringMember(h, "status")
		in.recordTask(p.att, id, status)
	case kindTask:
		status := ""
		if res := member(m.data, "result"); res != nil {
			status, _ = stringMember(res, "status")
		}
		// tasks/result answers once the task has ended; an error names a task the server no
		// longer has.
		if status == "" && (p.method == "tasks/result" || member(m.data, "error") != nil) {
			status = "completed"
		}
		in.mu.Lock()
		in.taskStatusLocked(p.task, status)
		in.mu.Unlock()
	}
}

// recordTask makes a the owner of the task id that a's call created.
func (in *instance) recordTask(a *attachment, id, status string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.tasks == nil {
		return
	}
	if t := in.tasks[id]; t != nil && t.owner != a && in.ownerLiveLocked(t) {
		// The server gave a second call the id of a task another window follows: the first
		// keeps it (the second window is refused, as the server confused the two).
		in.d.log.Warn("broker: the server gave a new task the id of another window's task; it stays with that window", "name", in.req.Name, "task", id)
		return
	}
	if _, had := in.tasks[id]; !had {
		in.taskOrder = append(in.taskOrder, id)
	}
	in.tasks[id] = &task{owner: a, name: a.req.Name}
	for len(in.tasks) > maxTasks && len(in.taskOrder) > 0 {
		delete(in.tasks, in.taskOrder[0])
		in.taskOrder = in.taskOrder[1:]
	}
	if len(in.taskOrder) > 2*maxTasks { // ids of tasks forgotten as they ended
		live := in.taskOrder[:0]
		for _, x := range in.taskOrder {
			if in.tasks[x] != nil {
				live = append(live, x)
			}
		}
		in.taskOrder = live
	}
	in.taskStatusLocked(id, status)
}

// taskStatusLocked notes task id's status: a terminal one ends it. in.mu held.
func (in *instance) taskStatusLocked(id, status string) {
	t := in.tasks[id]
	if t == nil || t.ended || (status != "completed" && status != "failed" && status != "cancelled") {
		return
	}
	t.ended = true
	in.endedTasks = append(in.endedTasks, id)
	for len(in.endedTasks) > maxEndedTasks {
		old := in.endedTasks[0]
		in.endedTasks = in.endedTasks[1:]
		if x := in.tasks[old]; x != nil && x.ended {
			delete(in.tasks, old)
		}
	}
}

// taskStatus routes notifications/tasks/status to the task's owner, if it is attached; a task
// the daemon does not know is nobody's business.
func (in *instance) taskStatus(m *msg) {
	id, ok := stringMember(m.params, "taskId")
	if !ok {
		return
	}
	status, _ := stringMember(m.params, "status")
	in.mu.Lock()
	var to *attachment
	if t := in.tasks[id]; t != nil {
		if _, attached := in.atts[t.owner]; attached {
			to = t.owner
		}
		in.taskStatusLocked(id, status)
	}
	in.mu.Unlock()
	if to != nil {
		to.send(m.data)
	}
}

// filterTaskList is the response m to a's tasks/list with the window's own tasks only, and the
// window's id down; nil when the server's answer cannot be read for sure (the window gets an
// error instead: relaying it whole would show it every window's tasks).
func (in *instance) filterTaskList(a *attachment, m *msg, down string) []byte {
	res, ambiguous := lookup(m.data, "result")
	if ambiguous {
		return nil
	}
	if res == nil {
		return replace(m.data, m.id, down) // an error: nothing listed
	}
	list, ambiguous := lookup(res, "tasks")
	if ambiguous || (list != nil && list[0] != '[') {
		return nil
	}
	edits := []edit{{at: off(m.data, m.id), n: len(m.id), with: down}}
	if list != nil {
		var kept []string
		in.mu.Lock()
		ok := jsonscan.Elements(list, func(v []byte) bool {
			id, ambiguous := lookup(v, "taskId")
			if ambiguous {
				return true // dropped: no reader can be sure whose it is
			}
			s, ok := stringMember(v, "taskId")
			if t := in.tasks[s]; ok && id != nil && t != nil && t.owner == a {
				kept = append(kept, string(v))
			}
			return true
		})
		in.mu.Unlock()
		if !ok {
			return nil
		}
		edits = append(edits, edit{at: off(m.data, list), n: len(list), with: "[" + strings.Join(kept, ",") + "]"})
	}
	return splice(m.data, edits...)
}
