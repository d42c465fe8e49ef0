package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// MCP Tasks (issue 30), both eras, written by hand so that tests control when a task ends. With
// --tasks the server offers these tools, each declaring execution.taskSupport:
//
//   - task_slow (required): completes after `polls` tasks/get (default 2), or once `seconds` have
//     passed since it was created, or once the file `file` exists; its statusMessage counts the
//     polls ("step 1 of 2").
//   - task_ask (required): moves to input_required at its first poll with a form question
//     (askSchema); the answer completes it. 2025-11-25: the question is an elicitation/create sent
//     while tasks/result is open; 2026-07-28: inputRequests in tasks/get, answered by tasks/update.
//   - task_fail (required): fails at its first poll (2025-11-25: tasks/result answers with the
//     JSON-RPC error; 2026-07-28: the error is in tasks/get).
//   - task_optional (optional): as task_slow; called without a task it answers at once.
//   - task_nag (required): a hostile task that asks forever: 2026-07-28, a new question (a new
//     inputRequests key, or "many" of them at once) at every poll, however often it is answered; 2025-11-25, a new
//     elicitation/create after every accepted answer, until an answer is not accept (then it
//     completes saying how many it got).
//
// 2025-11-25 is served on an initialized session (tools/call with a "task" member); 2026-07-28 on
// any request whose _meta names it (resultType "task", requestState rotated at every message and
// checked when echoed). Tasks are kept in --task-state FILE when given, so a server started again
// (a host that was killed and restarted) still knows them; --task-poll-ms and --task-ttl-ms are
// the pollInterval and ttl it announces. tasks/cancel cancels a task that has not ended. Tasks are
// served over stdio and streamable HTTP (taskhttp.go).

const taskIDPrefix = "mcptest-task-"

// taskRecord is one task, as kept in --task-state.
type taskRecord struct {
	ID        string         `json:"id"`
	Tool      string         `json:"tool"`
	Args      map[string]any `json:"args"`
	Modern    bool           `json:"modern"`
	Status    string         `json:"status"`
	Message   string         `json:"message"`
	Polls     int            `json:"polls"`
	Created   time.Time      `json:"created"`
	Answer    any            `json:"answer,omitempty"` // task_ask's answer
	Asked     bool           `json:"asked,omitempty"`
	Asks      int            `json:"asks,omitempty"`  // task_nag (2025-11-25): questions answered accept
	State     string         `json:"state,omitempty"` // the requestState last sent (modern)
	Cancelled bool           `json:"cancelled,omitempty"`
}

type taskStore struct {
	o    options
	logf func(string, ...any)

	mu      sync.Mutex
	tasks   map[string]*taskRecord
	next    int
	waiting map[string]chan json.RawMessage // answers to our elicitation/create, by request id
	reqSeq  int
}

func newTaskStore(o options, logf func(string, ...any)) *taskStore {
	ts := &taskStore{o: o, logf: logf, tasks: map[string]*taskRecord{}, waiting: map[string]chan json.RawMessage{}}
	if o.taskState != "" {
		if b, err := os.ReadFile(o.taskState); err == nil {
			var saved struct {
				Next  int                    `json:"next"`
				Tasks map[string]*taskRecord `json:"tasks"`
			}
			if json.Unmarshal(b, &saved) == nil && saved.Tasks != nil {
				ts.tasks, ts.next = saved.Tasks, saved.Next
			}
		}
	}
	return ts
}

// saveLocked writes --task-state (temp file and rename).
func (ts *taskStore) saveLocked() {
	if ts.o.taskState == "" {
		return
	}
	b, _ := json.Marshal(map[string]any{"next": ts.next, "tasks": ts.tasks}) // ignore error: plain values
	tmp := ts.o.taskState + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, ts.o.taskState) // ignore error: a test sees the task missing
	}
}

// addTaskTools lists the task tools in the mcp-go server (their calls never reach it: the stdio
// filter answers them).
func (s *testServer) addTaskTools() {
	add := func(name, desc, support string, opts ...mcp.ToolOption) {
		opts = append([]mcp.ToolOption{mcp.WithDescription(desc), mcp.WithTaskSupport(mcp.TaskSupport(support))}, opts...)
		s.mcp.AddTool(mcp.NewTool(name, opts...), textHandler("answered without a task"))
	}
	add("task_slow", "A long task: completes after polls tasks/get, after seconds, or once file exists.", "required",
		mcp.WithNumber("polls"), mcp.WithNumber("seconds"), mcp.WithString("file"))
	add("task_ask", "A task that asks the user a question (input_required), then completes with the answer.", "required",
		mcp.WithString("message"))
	add("task_fail", "A task that fails.", "required", mcp.WithString("message"))
	add("task_optional", "A tool that may run as a task: as task_slow.", "optional", mcp.WithNumber("polls"))
	add("task_nag", "A task that asks the user one more question at every poll, forever (2026-07-28: many at once with many).", "required",
		mcp.WithString("message"), mcp.WithNumber("many"))
}

// taskMessage is what the filter needs of a client message.
type taskMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name           string                     `json:"name"`
		Arguments      map[string]any             `json:"arguments"`
		Task           json.RawMessage            `json:"task"`
		TaskID         string                     `json:"taskId"`
		RequestState   *string                    `json:"requestState"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		Meta           map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (m taskMessage) modern() bool {
	return strings.Contains(string(m.Params.Meta[mcp.MetaKeyProtocolVersion]), mcp.ProtocolVersion20260728)
}

func isTaskTool(name string) bool {
	switch name {
	case "task_slow", "task_ask", "task_fail", "task_optional", "task_nag":
		return true
	}
	return false
}

// handle answers m when it is the task server's business; write sends one line to the client.
// false: pass it on to the mcp-go server.
func (ts *taskStore) handle(m taskMessage, write func([]byte)) bool {
	if m.Method == "" && len(m.ID) > 0 {
		var id string
		if json.Unmarshal(m.ID, &id) == nil && strings.HasPrefix(id, taskIDPrefix+"req-") {
			ts.mu.Lock()
			ch := ts.waiting[id]
			delete(ts.waiting, id)
			ts.mu.Unlock()
			if ch != nil {
				ch <- m.Result
			}
			return true
		}
		return false
	}
	switch m.Method {
	case "tools/call":
		if !isTaskTool(m.Params.Name) {
			return false
		}
		ts.mu.Lock()
		next := ts.next
		ts.mu.Unlock()
		write(ts.call(m))
		ts.mu.Lock()
		created := ts.next != next
		ts.mu.Unlock()
		if created {
			ts.notifyStatus(fmt.Sprintf("%s%d", ts.o.taskPrefix, next+1), write)
		}
	case "tasks/get", "tasks/cancel", "tasks/update":
		before := ts.status(m.Params.TaskID)
		write(ts.onTask(m))
		if ts.status(m.Params.TaskID) != before {
			ts.notifyStatus(m.Params.TaskID, write)
		}
	case "tasks/list":
		write(ts.list(m))
	case "tasks/result":
		go func() { write(ts.result(m, write)) }() // it may wait for the client's answer
	default:
		return false
	}
	return true
}

// list is tasks/list (2025-11-25): every task this server knows, in one page.
func (ts *taskStore) list(m taskMessage) []byte {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ids := make([]string, 0, len(ts.tasks))
	for id := range ts.tasks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		out = append(out, ts.wireLocked(ts.tasks[id], false))
	}
	return reply(m.ID, map[string]any{"tasks": out})
}

// status is task id's status ("" unknown).
func (ts *taskStore) status(id string) string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t := ts.tasks[id]; t != nil {
		return t.Status
	}
	return ""
}

// notifyStatus sends notifications/tasks/status for task id when --task-status is set.
func (ts *taskStore) notifyStatus(id string, write func([]byte)) {
	if !ts.o.taskStatus {
		return
	}
	ts.mu.Lock()
	t := ts.tasks[id]
	var b []byte
	if t != nil {
		b, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": ts.wireLocked(t, false)}) // ignore error: plain values
	}
	ts.mu.Unlock()
	if b != nil {
		write(b)
	}
}

func reply(id json.RawMessage, result any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result}) // ignore error: plain values
	return b
}

func replyError(id json.RawMessage, code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}}) // ignore error: plain values
	return b
}

func (ts *taskStore) call(m taskMessage) []byte {
	modern := m.modern()
	asTask := modern || len(m.Params.Task) > 0 && string(m.Params.Task) != "null"
	if !asTask {
		if m.Params.Name == "task_optional" {
			return reply(m.ID, mcp.NewToolResultText("done at once (no task)"))
		}
		return replyError(m.ID, mcp.METHOD_NOT_FOUND, fmt.Sprintf("Tool %s requires task augmentation", m.Params.Name))
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.next++
	t := &taskRecord{ID: fmt.Sprintf("%s%d", ts.o.taskPrefix, ts.next), Tool: m.Params.Name, Args: m.Params.Arguments, Modern: modern,
		Status: "working", Message: "started", Created: time.Now()}
	ts.tasks[t.ID] = t
	ts.saveLocked()
	ts.logf("task %s created (%s)", t.ID, t.Tool)
	if modern {
		res := ts.wireLocked(t, false)
		res["resultType"] = "task"
		return reply(m.ID, res)
	}
	return reply(m.ID, map[string]any{"task": ts.wireLocked(t, false)})
}

// wireLocked is t as sent; detailed adds the 2026-07-28 inline members (result, error,
// inputRequests) and a new requestState.
func (ts *taskStore) wireLocked(t *taskRecord, detailed bool) map[string]any {
	w := map[string]any{"taskId": t.ID, "status": t.Status, "statusMessage": t.Message,
		"createdAt": t.Created.UTC().Format(time.RFC3339), "lastUpdatedAt": time.Now().UTC().Format(time.RFC3339)}
	poll := ts.o.taskPollMs
	if poll <= 0 {
		poll = 1000
	}
	var ttl any
	if t.Modern {
		if ts.o.taskTTLMs > 0 {
			ttl = ts.o.taskTTLMs / 1000
		}
		w["ttlSeconds"], w["pollIntervalMilliseconds"] = ttl, poll
		t.State = fmt.Sprintf("state-%s-%d", t.ID, t.Polls)
		w["requestState"] = t.State
	} else {
		if ts.o.taskTTLMs > 0 {
			ttl = ts.o.taskTTLMs
		}
		w["ttl"], w["pollInterval"] = ttl, poll
	}
	if !detailed || !t.Modern {
		return w
	}
	switch t.Status {
	case "completed":
		w["result"] = ts.resultLocked(t)
	case "failed":
		w["error"] = map[string]any{"code": -32603, "message": failMessage(t)}
	case "input_required":
		key := "q1"
		if t.Tool == "task_nag" {
			key = fmt.Sprintf("q%d", t.Polls) // a new question each time
		}
		reqs := map[string]any{key: map[string]any{"method": "elicitation/create", "params": ts.question(t)}}
		if many, _ := t.Args["many"].(float64); t.Tool == "task_nag" && many > 1 {
			for i := 1; i < int(many); i++ { // as many questions at once
				reqs[fmt.Sprintf("%s-%d", key, i)] = map[string]any{"method": "elicitation/create", "params": ts.question(t)}
			}
		}
		w["inputRequests"] = reqs
	}
	w["resultType"] = "complete"
	return w
}

func failMessage(t *taskRecord) string {
	if s, ok := t.Args["message"].(string); ok && s != "" {
		return s
	}
	return "the research database is unreachable"
}

func (ts *taskStore) question(t *taskRecord) map[string]any {
	msg, _ := t.Args["message"].(string)
	if msg == "" {
		msg = "Which topic did you mean?"
	}
	return map[string]any{"message": msg, "requestedSchema": askSchema}
}

func (ts *taskStore) resultLocked(t *taskRecord) *mcp.CallToolResult {
	res := mcp.NewToolResultText(fmt.Sprintf("%s done after %d polls", t.Tool, t.Polls))
	if t.Tool == "task_ask" {
		b, _ := json.Marshal(t.Answer) // ignore error: decoded values
		res = mcp.NewToolResultText("answer: " + string(b))
	}
	if t.Tool == "task_nag" && !t.Modern {
		res = mcp.NewToolResultText(fmt.Sprintf("task_nag: %d questions answered, then %v", t.Asks, t.Answer))
	}
	if ts.o.hostile {
		res = mcp.NewToolResultText(res.Content[0].(mcp.TextContent).Text + " " + hostileText)
	}
	return res
}

// advanceLocked moves t on at a poll; with --hostile its status message carries terminal escapes.
func (ts *taskStore) advanceLocked(t *taskRecord) {
	if t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled" {
		return
	}
	if ts.o.hostile {
		defer func() { t.Message += " " + hostileText }()
	}
	t.Polls++
	num := func(k string) float64 { f, _ := t.Args[k].(float64); return f }
	switch t.Tool {
	case "task_fail":
		t.Status, t.Message = "failed", failMessage(t)
	case "task_nag":
		if t.Modern || t.Answer == nil {
			t.Status, t.Message = "input_required", fmt.Sprintf("question %d", t.Polls)
		} else {
			t.Status, t.Message = "completed", "answered"
		}
	case "task_ask":
		if t.Answer != nil {
			t.Status, t.Message = "completed", "answered"
		} else {
			t.Status, t.Message = "input_required", "waiting for your answer"
		}
	default:
		polls := int(num("polls"))
		file, _ := t.Args["file"].(string)
		secs := num("seconds")
		switch {
		case file != "":
			if _, err := os.Stat(file); err == nil {
				t.Status, t.Message = "completed", "done"
			} else {
				t.Message = fmt.Sprintf("step %d, waiting for %s", t.Polls, filepath.Base(file))
			}
		case secs > 0:
			if time.Since(t.Created).Seconds() >= secs {
				t.Status, t.Message = "completed", "done"
			} else {
				t.Message = fmt.Sprintf("%.0f of %.0f s", time.Since(t.Created).Seconds(), secs)
			}
		default:
			if polls <= 0 {
				polls = 2
			}
			if t.Polls >= polls {
				t.Status, t.Message = "completed", "done"
			} else {
				t.Message = fmt.Sprintf("step %d of %d", t.Polls, polls)
			}
		}
	}
}

func (ts *taskStore) onTask(m taskMessage) []byte {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.tasks[m.Params.TaskID]
	if t == nil {
		if m.modern() && m.Method != "tasks/get" {
			return reply(m.ID, map[string]any{"resultType": "complete"}) // the extension acknowledges any id
		}
		return replyError(m.ID, mcp.INVALID_PARAMS, "unknown task "+m.Params.TaskID)
	}
	if t.Modern {
		got := ""
		if m.Params.RequestState != nil {
			got = *m.Params.RequestState
		}
		// One this server issued for this task, echoed as it was sent (a client that drops or
		// re-encodes it is seen). Not only the latest: a client killed in the middle of a poll
		// never saw the latest.
		if !strings.HasPrefix(got, "state-"+t.ID+"-") {
			return replyError(m.ID, mcp.INVALID_PARAMS, fmt.Sprintf("requestState %q was not issued for this task (latest %q)", got, t.State))
		}
	}
	defer ts.saveLocked()
	switch m.Method {
	case "tasks/cancel":
		if t.Status != "completed" && t.Status != "failed" && t.Status != "cancelled" {
			t.Status, t.Message, t.Cancelled = "cancelled", "cancelled by the client", true
			ts.logf("task %s cancelled", t.ID)
		}
		if t.Modern {
			return reply(m.ID, map[string]any{"resultType": "complete"})
		}
		return reply(m.ID, ts.wireLocked(t, false))
	case "tasks/update":
		if raw, ok := m.Params.InputResponses["q1"]; ok && t.Status == "input_required" {
			var ans struct {
				Action  string `json:"action"`
				Content any    `json:"content"`
			}
			_ = json.Unmarshal(raw, &ans) // ignore error: the answer is shown as decoded
			t.Answer = map[string]any{"action": ans.Action, "content": ans.Content}
			t.Status, t.Message = "working", "answer received"
		}
		return reply(m.ID, map[string]any{"resultType": "complete"})
	}
	ts.advanceLocked(t)
	return reply(m.ID, ts.wireLocked(t, true))
}

// result is tasks/result (2025-11-25): it waits until the task ends, asking its question first
// when it needs input.
func (ts *taskStore) result(m taskMessage, write func([]byte)) []byte {
	for {
		ts.mu.Lock()
		t := ts.tasks[m.Params.TaskID]
		if t == nil {
			ts.mu.Unlock()
			return replyError(m.ID, mcp.INVALID_PARAMS, "unknown task "+m.Params.TaskID)
		}
		switch t.Status {
		case "completed":
			res := ts.resultLocked(t)
			res.Meta = mcp.WithRelatedTask(t.ID)
			ts.mu.Unlock()
			return reply(m.ID, res)
		case "failed":
			ts.mu.Unlock()
			return replyError(m.ID, -32603, failMessage(t))
		case "cancelled":
			ts.mu.Unlock()
			return replyError(m.ID, mcp.INVALID_PARAMS, "task cancelled")
		case "input_required":
			if !t.Asked {
				t.Asked = true
				ts.reqSeq++
				id := fmt.Sprintf("%sreq-%d", taskIDPrefix, ts.reqSeq)
				ch := make(chan json.RawMessage, 1)
				ts.waiting[id] = ch
				params := ts.question(t)
				params["_meta"] = map[string]any{mcp.RelatedTaskMetaKey: mcp.RelatedTaskMeta(t.ID)}
				ts.mu.Unlock()
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params}) // ignore error: plain values
				write(b)
				raw := <-ch
				var ans struct {
					Action  string `json:"action"`
					Content any    `json:"content"`
				}
				_ = json.Unmarshal(raw, &ans) // ignore error: shown as decoded
				ts.mu.Lock()
				if t.Tool == "task_nag" && ans.Action == "accept" {
					t.Asks++
					t.Asked = false // and ask again
					ts.mu.Unlock()
					continue
				}
				t.Answer = map[string]any{"action": ans.Action, "content": ans.Content}
				t.Status, t.Message = "completed", "answered"
				ts.saveLocked()
				ts.mu.Unlock()
				continue
			}
		}
		ts.mu.Unlock()
		time.Sleep(50 * time.Millisecond) // the server's own wait for its client's polls, not a test's
	}
}
