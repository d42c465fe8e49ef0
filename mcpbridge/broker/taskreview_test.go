//go:build unix

package broker

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// More attacks on the boundary between windows for tasks (see taskwindows_test.go), from a review
// with fresh eyes.

// TestTaskNamedInAnotherCaseNotSkipped: the daemon reads a frame's related-task only when the
// frame may name one, and so must never skip one that it would refuse read in full. A server's
// task ids need not say "task" (mcp-go's are UUIDs): a window then names another window's task as
// "io.modelcontextprotocol/related-TASK" {"TaskId": ...}, or with the Kelvin sign or the long s
// (which Go's encoding/json folds to k and s when it matches a struct field), and a server's log
// line does the same: the daemon's own reading calls each ambiguous, and none may go as though it
// named no task.
func TestTaskNamedInAnotherCaseNotSkipped(t *testing.T) {
	w := twoWindows(t, "--tasks", "--task-prefix", "id-", "--say")
	a, b, record := w.a, w.b, w.record
	task := startTask(t, a, "1", 1000)
	if strings.Contains(strings.ToLower(task), "task") {
		t.Fatalf("task id %q says task", task)
	}
	metas := []string{
		`"_meta":{"io.modelcontextprotocol/related-TASK":{"TASKID":%q}}`,
		`"_meta":{"io.modelcontextprotocol/related-Task":{"TaskId":%q}}`,
		`"_META":{"IO.MODELCONTEXTPROTOCOL/RELATED-TASK":{"TASKID":%q}}`,
		"\"_meta\":{\"io.modelcontextprotocol/related-tas\u212a\":{\"tas\u212aId\":%q}}",
		"\"_meta\":{\"io.modelcontextprotocol/related-ta\u017fk\":{\"ta\u017fkId\":%q}}",
	}
	for i, m := range metas {
		meta := fmt.Sprintf(m, task)
		id := fmt.Sprint(10 + i)
		b.send(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"mallory %d"},%s}}`, id, i, meta)
		if f := b.until(id); f[len(f)-1].Error == nil {
			t.Errorf("B's call naming A's task as %s: %s, want refused", meta, f[len(f)-1].raw)
		}
	}
	b.sync()
	data, _ := os.ReadFile(record)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "> ") && strings.Contains(l, "mallory") {
			t.Errorf("the server read a call of B's naming A's task: %s", l)
		}
	}

	// The server's log lines naming A's task so: to no one (as when named ambiguously in lower
	// case), and never to B.
	var lines []string
	for i, m := range metas {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"news %d",%s}}`, i, fmt.Sprintf(m, task)))
	}
	fb := append(say(b, "20", lines...), b.sync()...)
	fa := a.sync()
	for i := range metas {
		notSeen(t, "A", fa, fmt.Sprintf("news %d", i))
		notSeen(t, "B", fb, fmt.Sprintf("news %d", i))
	}
}

// TestOneWindowsTasksUnchanged: what a window does with its own tasks, and with methods of its
// server's own, still works on a shared server: the input_required flow of a 2025-11-25 task
// with its tasks/result and its answer naming the task, the server's progress and log lines
// naming the window's own task, and vendor methods (relayed as before, the server answering).
func TestOneWindowsTasksUnchanged(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	record := dir + "/record"
	req := request(launch("--tasks", "--say", "--record", record))
	a := attachWin(t, "A", cfg, req)
	a.initialize()

	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_ask","arguments":{"message":"your name?"},"task":{}}}`)
	fs := a.until("1")
	task := ""
	if r := fs[len(fs)-1].Result; r != nil {
		var h struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		if json.Unmarshal(r, &h) == nil {
			task = h.Task.TaskID
		}
	}
	if task == "" {
		t.Fatalf("task_ask as a task: %s", fs[len(fs)-1].raw)
	}
	if f := taskAsk(a, "2", "tasks/get", task); !strings.Contains(string(f.Result), "input_required") {
		t.Fatalf("task_ask after a poll: %s, want input_required", f.raw)
	}
	a.send(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":%q,%s}}`, task, relatedMeta(task))
	q := nextMethod(a, "elicitation/create")
	a.send(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"alice","agree":true},%s}}`, q.ID, relatedMeta(task))
	fs = a.until("3")
	if got := text(fs[len(fs)-1]); !strings.Contains(got, "alice") {
		t.Errorf("the task's result %q (%s), want the window's answer", got, fs[len(fs)-1].raw)
	}

	// The server's news of the window's own task, on the window's own progress token.
	fs = append(say(a, "4",
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":$TOKEN,"progress":1,"message":"own progress",`+relatedMeta(task)+`}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"own log",`+relatedMeta(task)+`}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"plain log"}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	), a.sync()...)
	for _, s := range []string{"own progress", "own log", "plain log", "notifications/tools/list_changed"} {
		if !slices.ContainsFunc(fs, func(f frame) bool { return strings.Contains(string(f.raw), s) }) {
			t.Errorf("the window was not given %q: %v", s, methods(fs))
		}
	}

	// Vendor methods reach the server (mcptest knows none: it answers method not found).
	for i, m := range []string{"myserver/doThing", "acme.tasker/run", "x-tasklist/get", "vendor/notifications"} {
		id := fmt.Sprint(10 + i)
		a.send(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{"text":"vendor %d"}}`, id, m, i)
		fs := a.until(id)
		if e := string(fs[len(fs)-1].Error); e == "" || strings.Contains(e, "not relayed") {
			t.Errorf("vendor method %s: %s, want the server's answer", m, fs[len(fs)-1].raw)
		}
		if recorded(t, record, m) == 0 {
			t.Errorf("vendor method %s never reached the server", m)
		}
	}
}

// TestManySmallWindowsKeepAWindowsTasks: windows that each hold fewer tasks than A (one fewer than
// minWindowTasks), together more than an instance keeps: A holds the most, and lost its oldest
// one by one (the window with the most loses one), down to as few as theirs. An attached window
// keeps minWindowTasks whatever others start.
func TestManySmallWindowsKeepAWindowsTasks(t *testing.T) {
	dir, _ := serveInProcess(t, 5*time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	req := request(launch("--tasks"))
	a := attachWin(t, "A", cfg, req)
	a.initialize()
	const k = minWindowTasks
	var mine []string
	for i := range k {
		mine = append(mine, startTask(t, a, fmt.Sprint(i+1), 1000))
	}
	for w := range maxTasks/(k-1) + 1 {
		b := attachWin(t, fmt.Sprintf("B%d", w), cfg, req)
		b.initialize()
		for j := range k - 1 {
			b.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"task_slow","arguments":{"polls":1000},"task":{}}}`, j+1)
		}
		for range k - 1 {
			for f := b.next(); f.Method != ""; f = b.next() {
			}
		}
	}
	for i, task := range mine {
		if f := taskAsk(a, fmt.Sprint(1000+i), "tasks/get", task); f.Error != nil {
			t.Errorf("A's task %d of %d after many small windows' tasks: %s, want still A's", i+1, k, f.raw)
		}
	}
}

// TestNotificationAsRequestNotRelayed: a window sends notifications/cancelled as a request (with
// an id of its own). The daemon translates a window's cancellation to the upstream id of that
// window's own call; sent as a request it was relayed untranslated, and its requestId is the
// instance's counter, which any window can guess: a server that acts on a notification's method
// whatever the id would cancel another window's call, or its task's tasks/result. No MCP request
// method begins with notifications/: none reaches the server.
func TestNotificationAsRequestNotRelayed(t *testing.T) {
	w := twoWindows(t, "--tasks")
	a, b, record := w.a, w.b, w.record
	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":300}}}`)
	waitFor(t, "A's call read by the server", func() bool { return recorded(t, record, "tools/call") == 1 })
	for i, m := range []string{"notifications/cancelled", "notifications/initialized", "notifications/tasks/status", "Notifications/Cancelled", "notifications.cancelled"} {
		id := fmt.Sprint(10 + i)
		for up := 1; up <= 3; up++ {
			b.send(`{"jsonrpc":"2.0","id":"%s-%d","method":%q,"params":{"requestId":%d,"reason":"mallory","taskId":"x"}}`, id, up, m, up)
			if f := b.until(fmt.Sprintf(`"%s-%d"`, id, up)); f[len(f)-1].Error == nil {
				t.Errorf("B's request %s: %s, want refused", m, f[len(f)-1].raw)
			}
		}
	}
	b.sync()
	data, _ := os.ReadFile(record)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "> ") && strings.Contains(l, "mallory") {
			t.Errorf("the server read a window's notification sent as a request: %s", l)
		}
	}
	a.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
}

// TestTaskBoundaryJSONTricks: a second window names the first window's task in ways a server's
// JSON reader and the daemon's scanner might read differently (a member twice, escaped names,
// the id escaped, a number, a batch, a large frame), attaches again to look like a new window,
// and a server asks about the task so; none of it reaches the server or the wrong window. An
// ordinary _meta inside a call's arguments is the tool's, not the call's: it is relayed.
func TestTaskBoundaryJSONTricks(t *testing.T) {
	w := twoWindows(t, "--tasks", "--say")
	a, b, cfg, req, record := w.a, w.b, w.cfg, w.req, w.record
	task := startTask(t, a, "1", 1000)
	mine := startTask(t, b, "1", 1000)
	escaped := strings.ReplaceAll(jsonString(task), "-", `\u002d`)
	big := strings.Repeat("x", 2<<20)
	for i, r := range []string{
		`"method":"tools/call","params":{"name":"echo","arguments":{"text":"mallory"},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + mine + `"},"io.modelcontextprotocol/related-task":{"taskId":"` + task + `"}}}`,
		`"method":"tools/call","params":{"name":"echo","arguments":{"text":"mallory"},"\u005fmeta":{"io.modelcontextprotocol/related-task":{"taskId":"` + task + `"}}}`,
		`"method":"tools/call","params":{"name":"echo","arguments":{"text":"mallory"},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":` + escaped + `}}}`,
		`"method":"tools/call","params":{"name":"echo","arguments":{"text":"mallory"},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":1}}}`,
		`"method":"tools/call","params":{"name":"echo","arguments":{"text":"mallory` + big + `"},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + task + `"}}}`,
		`"method":"tasks/get","params":{"taskId":` + escaped + `}`,
		`"method":"tasks/cancel","params":{"taskId":"` + mine + `","TaskId":"` + task + `","reason":"mallory"}`,
		`"method":"tasks/cancel","params":{"taskId":1,"reason":"mallory"}`,
		`"method":"tasks/cancel","params":{"taskId":["` + task + `"],"reason":"mallory"}`,
	} {
		id := fmt.Sprint(10 + i)
		b.send(`{"jsonrpc":"2.0","id":%s,%s}`, id, r)
		if f := b.until(id); f[len(f)-1].Error == nil {
			t.Errorf("B's request %.200s: %.200s, want refused", r, f[len(f)-1].raw)
		}
	}
	// A batch: not one JSON-RPC message, dropped whole.
	b.send(`[{"jsonrpc":"2.0","id":30,"method":"tasks/cancel","params":{"taskId":%q,"reason":"mallory"}}]`, task)
	// B again, as a new window (its process the same): still not A's task.
	b2 := attachWin(t, "B2", cfg, req)
	b2.initialize()
	if f := taskAsk(b2, "1", "tasks/cancel", task); f.Error == nil {
		t.Errorf("B attached again, cancelling A's task: %s, want refused", f.raw)
	}
	// The server asks about A's task, naming it so that its own reader may take it: to no one,
	// though B alone has a call in flight.
	fb := say(b, "40",
		`{"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"message":"secret one","requestedSchema":{"type":"object"},"_meta":{"io.modelcontextprotocol/related-TASK":{"TASKID":"`+task+`"}}}}`,
		`{"jsonrpc":"2.0","id":"q2","method":"elicitation/create","params":{"message":"secret two","requestedSchema":{"type":"object"},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":`+escaped+`,"taskId":"`+mine+`"}}}}`,
	)
	fb = append(fb, b.sync()...)
	fa := a.sync()
	for _, s := range []string{"secret one", "secret two"} {
		notSeen(t, "A", fa, s)
		notSeen(t, "B", fb, s)
	}
	for _, q := range []string{"q1", "q2"} {
		serverRead(t, record, q, `"error"`)
	}
	// A _meta inside the arguments is the tool's business.
	b.send(`{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"echo","arguments":{"text":"fine","_meta":{"io.modelcontextprotocol/related-task":{"taskId":%q}}}}}`, task)
	if f := b.until("50"); !strings.Contains(text(f[len(f)-1]), "fine") {
		t.Errorf("B's call with a _meta in its arguments: %.300s, want relayed", f[len(f)-1].raw)
	}
	if f := taskAsk(a, "2", "tasks/get", task); !strings.Contains(string(f.Result), "working") {
		t.Errorf("A's task after B's tricks: %s, want still working", f.raw)
	}
	data, _ := os.ReadFile(record)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "> ") && strings.Contains(l, "mallory") {
			t.Errorf("the server read a frame of B's naming A's task: %.300s", l)
		}
	}
}

// TestRequestWithResultNotRelayed: a window sends requests that also carry a result (an answer
// to a form). The daemon reads a frame with a method as a request and relays it under the next
// upstream id; a server that takes any frame with an id and a result for the answer to its own
// request of that id (mcp-go's stdio server: method unread) takes it as the answer to the question
// it put to another window, when its own ids run ahead of the daemon's (it asked the windows
// things before): a window would answer another window's question, about its task or not. A
// frame with an id, a method and a result or an error is no JSON-RPC message: it reaches no one.
func TestRequestWithResultNotRelayed(t *testing.T) {
	w := twoWindows(t, "--elicit", "--roots", "--say")
	a, b, record := w.a, w.b, w.record
	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"message":"A's question","warm":40}}}`)
	q := nextMethod(a, "elicitation/create")
	for i := range 60 {
		b.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","result":{"action":"accept","content":{"name":"mallory","agree":true}}}`, i+1)
	}
	// The server's frames forged the same way go to no window either.
	fb := say(b, "99", `{"jsonrpc":"2.0","id":"q9","method":"elicitation/create","params":{"message":"secret nine","requestedSchema":{"type":"object"}},"result":{}}`)
	notSeen(t, "B", append(fb, b.sync()...), "secret nine")
	a.send(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"alice","agree":true}}}`, q.ID)
	fs := a.until("1")
	if got := text(fs[len(fs)-1]); !strings.Contains(got, "alice") {
		t.Errorf("A's ask answered %q, want A's own answer", got)
	}
	data, _ := os.ReadFile(record)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "> ") && strings.Contains(l, "mallory") {
			t.Errorf("the server read a window's request carrying a result: %.300s", l)
		}
	}
}

// TestServerCannotGiveAnothersTask: a server answers a window's call with a task handle whose id
// is another window's live task (it forges the answer to whichever upstream id is in flight): the
// task stays the first window's, the second is refused when it follows it, and does not see it
// listed.
func TestServerCannotGiveAnothersTask(t *testing.T) {
	w := twoWindows(t, "--tasks", "--say")
	a, b := w.a, w.b
	task := startTask(t, a, "1", 1000)
	var lines []string
	for up := 1; up <= 20; up++ { // B's say is the one upstream id in flight
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"task":{"taskId":%q,"status":"working","createdAt":"2026-01-01T00:00:00Z","ttl":60000}}}`, up, task))
	}
	fs := say(b, "2", lines...)
	if !strings.Contains(string(fs[len(fs)-1].Result), task) {
		t.Fatalf("the forged handle did not reach B (the test is wrong): %s", fs[len(fs)-1].raw)
	}
	if f := taskAsk(b, "3", "tasks/get", task); f.Error == nil {
		t.Errorf("B following the task the server said was its, A's: %s, want refused", f.raw)
	}
	b.send(`{"jsonrpc":"2.0","id":4,"method":"tasks/list"}`)
	fs = b.until("4")
	if slices.Contains(listed(t, fs[len(fs)-1]), task) {
		t.Errorf("B lists A's task: %s", fs[len(fs)-1].raw)
	}
	if f := taskAsk(a, "2", "tasks/get", task); f.Result == nil {
		t.Errorf("A's task after the server gave its id to B: %s, want still A's", f.raw)
	}
}
