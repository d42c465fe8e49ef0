package broker

import (
	"bytes"
	"fmt"
	"slices"
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
//   - A server's question (elicitation/create, sampling/createMessage) that names a task in its
//     _meta (related-task) is put to that task's owner, whether or not it has a call in flight,
//     and to no one else: the window with a call in flight may be another one. A question about
//     a task the daemon does not know, whose owner is gone and that no window has taken over, or
//     that names its task so that another reader may take another one, is answered with an
//     error and shown to no window.
//
// An ended task (a terminal status seen, or a tasks/result answered) stays its owner's, so that
// the 2025-11-25 client can still fetch its result after tasks/get said it completed; all of an
// instance's are forgotten when it stops. The table is bounded per window (maxWindowTasks) before
// it is per instance (maxTasks): a window that starts task after task forgets its own oldest,
// ended ones first, never another window's. Beyond the instance's bound the window with the most
// loses one, but an attached window never below minWindowTasks: windows are not counted, and many
// windows holding a few tasks each would otherwise take a window's tasks down to as few as theirs
// (the table then holds at most minWindowTasks per attached window more). A window of an older
// build sends nothing new: its own tasks work as before.

// Limits of the task table.
const (
	maxTasks       = 4096 // tasks kept per instance, running or ended: beyond, the window with the most loses one
	maxWindowTasks = 1024 // tasks kept per window: beyond, its own oldest ended one goes, or else its oldest
	minWindowTasks = 16   // tasks an attached window keeps whatever other windows start
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
		if why := in.foreignTask(a, m.params); why != "" {
			a.send(errorResponse(m.id, codeInvalidParams, m.method+": not relayed to a shared server: "+why))
			return
		}
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
	if rid, named := relatedTask(m.params); named && (rid == "" || rid != id) {
		// The server might read the task from _meta rather than taskId.
		a.send(errorResponse(m.id, codeInvalidParams, m.method+": _meta "+relatedTaskKey+" names another task than taskId, or names it ambiguously"))
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
	in.setOwnerLocked(id, t, a)
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
	if t := in.tasks[id]; t != nil {
		if t.owner != a && in.ownerLiveLocked(t) {
			// The server gave a second call the id of a task another window follows: the first
			// keeps it (the second window is refused, as the server confused the two).
			in.d.log.Warn("broker: the server gave a new task the id of another window's task; it stays with that window", "name", in.req.Name, "task", id)
			return
		}
		in.dropTaskLocked(id) // recorded anew, as the newest
	}
	in.tasks[id] = &task{owner: a, name: a.req.Name}
	in.taskOrder = append(in.taskOrder, id)
	in.owned[a]++
	in.boundTasksLocked(a, id)
	in.taskStatusLocked(id, status)
}

// setOwnerLocked gives task id (t) to a, which took it over; in.mu held.
func (in *instance) setOwnerLocked(id string, t *task, a *attachment) {
	in.disownLocked(t.owner)
	t.owner = a
	in.owned[a]++
	in.boundTasksLocked(a, id)
}

// boundTasksLocked keeps the table within its limits after a gained task id: beyond a window's
// bound its own tasks go; beyond the instance's (several windows, or windows gone, each near its
// bound), those of the window with the most, a first among equals (the one that gained, and so
// the one flooding, not another it ties with), but an attached window's only while it has more
// than minWindowTasks; id itself stays. in.mu held.
func (in *instance) boundTasksLocked(a *attachment, id string) {
	if in.owned[a] > maxWindowTasks {
		in.evictLocked(a, id)
	}
	for len(in.tasks) > maxTasks {
		var most *attachment
		for w, n := range in.owned {
			if _, attached := in.atts[w]; attached && n <= minWindowTasks {
				continue
			}
			if most == nil || n > in.owned[most] || (n == in.owned[most] && w == a) {
				most = w
			}
		}
		if most == nil || !in.evictLocked(most, id) {
			return
		}
	}
}

// evictLocked forgets owner's oldest ended task, or else its oldest, but never keep; false when
// it has none other. in.mu held.
func (in *instance) evictLocked(owner *attachment, keep string) bool {
	victim := ""
	for _, ended := range []bool{true, false} {
		for _, x := range in.taskOrder {
			if t := in.tasks[x]; x != keep && t.owner == owner && (t.ended || !ended) {
				victim = x
				break
			}
		}
		if victim != "" {
			break
		}
	}
	if victim == "" {
		return false
	}
	in.d.log.Debug("broker: forgot a window's oldest task (it has too many)", "name", in.req.Name, "task", victim)
	in.dropTaskLocked(victim)
	return true
}

// dropTaskLocked forgets task id. in.mu held.
func (in *instance) dropTaskLocked(id string) {
	t := in.tasks[id]
	if t == nil {
		return
	}
	delete(in.tasks, id)
	if i := slices.Index(in.taskOrder, id); i >= 0 {
		in.taskOrder = slices.Delete(in.taskOrder, i, i+1)
	}
	in.disownLocked(t.owner)
}

// disownLocked counts one task fewer for owner. in.mu held.
func (in *instance) disownLocked(owner *attachment) {
	if in.owned[owner]--; in.owned[owner] <= 0 {
		delete(in.owned, owner)
	}
}

// taskStatusLocked notes task id's status: a terminal one ends it. in.mu held.
func (in *instance) taskStatusLocked(id, status string) {
	t := in.tasks[id]
	if t == nil || t.ended || (status != "completed" && status != "failed" && status != "cancelled") {
		return
	}
	t.ended = true
}

// taskStatus routes notifications/tasks/status to the task's owner, if it is attached and may
// hear of it (taskFilter); a task the daemon does not know is nobody's business.
func (in *instance) taskStatus(m *msg, may func(*attachment) bool) {
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
	if to != nil && may(to) {
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

// relatedTaskKey is the _meta member by which a message names the task it is about (MCP
// 2025-11-25 tasks).
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// relatedTask is the task id a message's params (or result) name in _meta; named is false when
// they name none. id is "" when it names one in a way another reader might take for another id (a
// member twice, escaped or in another case, not a string): then no window may be asked.
func relatedTask(params []byte) (id string, named bool) {
	meta, ambiguous := lookup(params, "_meta")
	if ambiguous {
		return "", true
	}
	if meta == nil {
		return "", false
	}
	rt, ambiguous := lookup(meta, relatedTaskKey)
	if ambiguous {
		return "", true
	}
	if rt == nil {
		return "", false
	}
	v, ambiguous := lookup(rt, "taskId")
	if ambiguous || v == nil || v[0] != '"' {
		return "", true
	}
	id, ok := stringMember(rt, "taskId")
	if !ok {
		return "", true
	}
	return id, true
}

// taskQuestion puts the server's question m about task id to the task's owner, whether or not
// it has a call in flight (a 2025-11-25 server may ask while its window only polls), and to no
// other window. Anyone else may be another window: the question about a task that no window
// started, or whose window has gone with no window taking it over yet, is answered with an error
// (the server may ask again once a reloaded window follows the task: its tasks/result is then
// in flight), not cancelled as if a person had said so.
func (in *instance) taskQuestion(m *msg, id string) {
	in.mu.Lock()
	why := ""
	var to *attachment
	t := in.tasks[id]
	q := strconv.Quote(id)
	switch {
	case id == "":
		why = "it names its task (_meta " + relatedTaskKey + ") ambiguously"
	case t == nil:
		why = "no window started task " + q + " on this shared server"
	case !in.ownerLiveLocked(t):
		why = "the window that started task " + q + " has closed, and no window has taken the task over yet"
	default:
		to = t.owner
	}
	if to != nil {
		f := in.askLocked(to, m)
		in.mu.Unlock()
		to.send(f)
		return
	}
	in.mu.Unlock()
	go in.writeUp(errorResponse(m.id, codeInvalidParams, m.method+": not put to any window: "+why))
	in.logRefused("broker: refused a question about a task no window follows (said once per server)", "method", m.method, "why", why)
}

// ownMethods are the methods of a window's request that the daemon answers itself, keeps per
// window or reads the answer of.
var ownMethods = []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "tools/call"}

// misspelt says why a window's request with method is not relayed ("": it may be): a method
// that a server reading names leniently (folding case, trimming or dropping what is not a letter,
// normalising Unicode) might take for a task method or for one of ownMethods, without being
// that method exactly. The daemon would relay it as any other method, and such a server act on
// another window's task, list every window's tasks, or change what every window's server logs.
// MCP method names are case-sensitive ASCII: a name outside printable ASCII is refused whole,
// since Unicode folds too many letters into ASCII ones (the Kelvin sign into k, a ligature into
// st, fullwidth forms) to list them; within ASCII, a name with the same letters and digits as one
// of those methods, case aside, is refused.
func misspelt(method string) string {
	if _, ok := knownMethods[method]; ok {
		return "" // the common case, spelt exactly
	}
	why := ""
	for i := 0; i < len(method); i++ {
		if c := method[i]; c <= ' ' || c >= 0x7f {
			why = "MCP method names are ASCII letters and punctuation only"
			break
		}
	}
	if why == "" && skeletonHasPrefix(method, "tasks") && !strings.HasPrefix(method, "tasks/") {
		why = "spelt otherwise, a task method names a task the daemon cannot tell the window of"
	}
	for _, x := range ownMethods {
		if why == "" && method != x && sameSkeleton(method, x) {
			why = "it is " + x + " spelt otherwise, which the daemon would not read as " + x
		}
	}
	if why == "" {
		return ""
	}
	return "method " + strconv.QuoteToASCII(method) + " not relayed to a shared server: " + why
}

// skeleton calls f with each ASCII letter (lower-cased) and digit of s, in order, until f says
// stop.
func skeleton(s string, f func(c byte) bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		default:
			continue
		}
		if !f(c) {
			return
		}
	}
}

// sameSkeleton: a and b have the same letters and digits, case aside.
func sameSkeleton(a, b string) bool {
	var sa, sb []byte
	var buf [2][64]byte
	sa, sb = buf[0][:0], buf[1][:0]
	skeleton(a, func(c byte) bool { sa = append(sa, c); return true })
	skeleton(b, func(c byte) bool { sb = append(sb, c); return true })
	return string(sa) == string(sb)
}

// skeletonHasPrefix: the letters and digits of s, case aside, begin with prefix (lower case).
func skeletonHasPrefix(s, prefix string) bool {
	i := 0
	skeleton(s, func(c byte) bool {
		if c != prefix[i] {
			return false
		}
		i++
		return i < len(prefix)
	})
	return i == len(prefix)
}

// mayNameTask: params may name a related task (cheap first: nearly every frame names none). It
// must be true of every frame that relatedTask reads as naming one, ambiguously included: a name
// hidden by escapes has a \u in it, and one in another case (which lookup, and encoding/json
// matching a struct field, take for the name) has "task" with each letter in either case, the s
// maybe the long s and the k the Kelvin sign (the letters Unicode folds to s and k). A server's
// task ids need not say "task" (mcp-go's are UUIDs): "related-TASK" {"TASKID": ...} may be the
// only spelling of it in a frame.
func mayNameTask(params []byte) bool {
	return bytes.Contains(params, []byte("task")) || bytes.Contains(params, []byte(`\u`)) || foldedTask(params)
}

// kelvin is the Kelvin sign, which folds to k.
var kelvin = []byte("\u212a")

// foldedTask: p has "task" in some case, maybe with the long s or the Kelvin sign. It looks for
// each k first (a rare letter, found a word at a time), then at what comes before it.
func foldedTask(p []byte) bool {
	for _, k := range [...]byte{'k', 'K', 0} {
		for i := 0; ; {
			var j, n int
			if k != 0 {
				j, n = bytes.IndexByte(p[i:], k), 1
			} else {
				j, n = bytes.Index(p[i:], kelvin), len(kelvin)
			}
			if j < 0 {
				break
			}
			if endsTas(p[:i+j]) {
				return true
			}
			i += j + n
		}
	}
	return false
}

// endsTas: p ends with t, a and s, each in either case, the s maybe the long s.
func endsTas(p []byte) bool {
	n := len(p)
	switch {
	case n >= 1 && p[n-1]|0x20 == 's':
		n--
	case n >= 2 && p[n-2] == 0xc5 && p[n-1] == 0xbf: // U+017F, the long s
		n -= 2
	default:
		return false
	}
	return n >= 2 && p[n-1]|0x20 == 'a' && p[n-2]|0x20 == 't'
}

// taskFilter says which windows may get a server's notification with params: any, when it names
// no task; when it names one (_meta related-task), only that task's owner, by the daemon's
// records; when it names an unknown task, or one ambiguously, none. A server cannot so send one
// window's task news to another by a notification whose own routing (a progress token, a task
// id, a subscription, a broadcast) points elsewhere than the task it names.
func (in *instance) taskFilter(params []byte) func(*attachment) bool {
	if !mayNameTask(params) {
		return anyWindow
	}
	id, named := relatedTask(params)
	if !named {
		return anyWindow
	}
	var owner *attachment
	in.mu.Lock()
	if t := in.tasks[id]; id != "" && t != nil {
		owner = t.owner
	}
	in.mu.Unlock()
	if owner == nil {
		in.d.log.Debug("broker: dropped a notification about a task no window follows", "name", in.req.Name, "task", id)
	}
	return func(a *attachment) bool { return owner != nil && a == owner }
}

func anyWindow(*attachment) bool { return true }

// foreignTask says why a window's frame with params (a request's params, an answer's result)
// may not reach the server ("": it may): it names (_meta related-task) a task that is not a's,
// or names one ambiguously. A server that reads related-task would take a's request, or a's
// answer to its question, as part of another window's task.
func (in *instance) foreignTask(a *attachment, params []byte) string {
	if !mayNameTask(params) {
		return ""
	}
	id, named := relatedTask(params)
	switch {
	case !named:
		return ""
	case id == "":
		return "it names its task (_meta " + relatedTaskKey + ") ambiguously"
	}
	in.mu.Lock()
	t := in.tasks[id]
	mine := t != nil && t.owner == a
	in.mu.Unlock()
	if !mine {
		return "it names task " + strconv.Quote(id) + " (_meta " + relatedTaskKey + "), which is not this window's"
	}
	return ""
}
