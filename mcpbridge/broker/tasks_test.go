//go:build unix

package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// startTask calls task_slow as a 2025-11-25 task in w (polls: how many tasks/get it takes to
// complete) and returns the task id the server gave.
func startTask(t *testing.T, w *win, id string, polls int) string {
	t.Helper()
	w.send(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"task_slow","arguments":{"polls":%d},"task":{}}}`, id, polls)
	fs := w.until(id)
	var r struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if err := json.Unmarshal(fs[len(fs)-1].Result, &r); err != nil || r.Task.TaskID == "" {
		t.Fatalf("%s: tools/call as a task: %s", w.name, fs[len(fs)-1].raw)
	}
	return r.Task.TaskID
}

// taskAsk sends one tasks/* request naming task and returns its response.
func taskAsk(w *win, id, method, task string) frame {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{"taskId":%q}}`, id, method, task)
	fs := w.until(id)
	return fs[len(fs)-1]
}

// listed is the task ids of a tasks/list response.
func listed(t *testing.T, f frame) []string {
	t.Helper()
	var r struct {
		Tasks []struct {
			TaskID string `json:"taskId"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(f.Result, &r); err != nil || f.Result == nil {
		t.Fatalf("tasks/list: %s", f.raw)
	}
	var ids []string
	for _, x := range r.Tasks {
		ids = append(ids, x.TaskID)
	}
	return ids
}

// instanceWindows is how many windows the daemon in dir counts on its one instance.
func instanceWindows(t *testing.T, dir string) int {
	t.Helper()
	s, err := GetStatus(context.Background(), Config{Dir: dir, Build: "test"})
	if err != nil || len(s.Instances) != 1 {
		t.Fatalf("status: %v %+v", err, s)
	}
	return s.Instances[0].Windows
}

// TestTasksStayWithTheirWindow: a window that knows (or guesses) the id of a task another live
// window started can neither follow it (tasks/get), take its result (tasks/result), cancel it
// (tasks/cancel, tasks/update) nor see it listed (tasks/list); nothing of it reaches the server.
// The task's status notifications go to its window only. Once that window is gone, a window of
// the same server (a reloaded editor following its predecessor's task) claims it, and from then on
// it is that window's alone.
func TestTasksStayWithTheirWindow(t *testing.T) {
	w := twoWindows(t, "--tasks", "--task-status")
	a, b, cfg, req, record, dir := w.a, w.b, w.cfg, w.req, w.record, w.dir

	task := startTask(t, a, "1", 1000)
	mine := startTask(t, b, "1", 1000)
	// A's status notification comes after its task's handle, before the answer to a later
	// request of A's (the server writes them in that order).
	a.send(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":%q}}`, task)
	fa := a.until("3")

	refused := func(w *win, f frame, what string) {
		t.Helper()
		if f.Error == nil || !strings.Contains(string(f.Error), "another window") {
			t.Errorf("%s: %s of another window's task: %s, want an error saying whose it is", w.name, what, f.raw)
		}
	}
	for i, m := range []string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/update"} {
		refused(b, taskAsk(b, fmt.Sprint(10+i), m, task), m)
	}
	// The same id named twice, or in another case: the server might read the other one.
	b.send(`{"jsonrpc":"2.0","id":20,"method":"tasks/get","params":{"taskId":%q,"taskID":%q}}`, mine, task)
	if f := b.until("20"); f[len(f)-1].Error == nil {
		t.Errorf("B: tasks/get naming its task and A's: %s, want refused", f[len(f)-1].raw)
	}
	if f := taskAsk(b, "21", "tasks/get", "mcptest-task-999"); f.Error == nil {
		t.Errorf("B: tasks/get of a task no window started: %s, want refused", f.raw)
	}
	b.send(`{"jsonrpc":"2.0","id":22,"method":"tasks/list","params":{}}`)
	fb := b.until("22")
	if got := listed(t, fb[len(fb)-1]); !slices.Equal(got, []string{mine}) {
		t.Errorf("B's tasks/list = %v, want only its own %s", got, mine)
	}
	a.send(`{"jsonrpc":"2.0","id":4,"method":"tasks/list"}`)
	fa = append(fa, a.until("4")...)
	if got := listed(t, fa[len(fa)-1]); !slices.Equal(got, []string{task}) {
		t.Errorf("A's tasks/list = %v, want only its own %s", got, task)
	}
	for _, m := range []string{"tasks/result", "tasks/cancel", "tasks/update"} {
		if n := recorded(t, record, m); n > 0 {
			t.Errorf("the server read %d %s: a window's request about another window's task reached it", n, m)
		}
	}
	if f := taskAsk(a, "5", "tasks/get", task); f.Result == nil || !strings.Contains(string(f.Result), `"working"`) {
		t.Errorf("A's own task after B's attempts: %s, want it working", f.raw)
	}

	// Status notifications: each window hears of its own task only.
	statusOf := func(fs []frame) []string {
		var ids []string
		for _, f := range fs {
			if f.Method == "notifications/tasks/status" {
				var p struct {
					TaskID string `json:"taskId"`
				}
				json.Unmarshal(f.Params, &p)
				ids = append(ids, p.TaskID)
			}
		}
		return ids
	}
	// A was told of its task's creation (the server said so right after the handle).
	if got := statusOf(append(a.drain(), fa...)); !slices.Contains(got, task) || slices.Contains(got, mine) {
		t.Errorf("A's status notifications name %v, want its own task %s only", got, task)
	}
	if got := statusOf(append(fb, b.sync()...)); slices.Contains(got, task) {
		t.Errorf("B was told about A's task: %v", got)
	}

	// A goes away (an editor reload): its task is left running, and a window of the same server
	// follows it; another live window still may not.
	a.c.Close()
	waitFor(t, "A detached", func() bool { return instanceWindows(t, dir) == 1 })
	if f := taskAsk(b, "30", "tasks/get", task); f.Result == nil {
		t.Fatalf("B following the task A left: %s", f.raw)
	}
	c := attachWin(t, "C", cfg, req)
	c.initialize()
	refused(c, taskAsk(c, "1", "tasks/get", task), "tasks/get after B claimed it")
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tasks/list"}`)
	fc := c.until("2")
	if got := listed(t, fc[len(fc)-1]); len(got) > 0 {
		t.Errorf("C's tasks/list = %v, want none of the others' tasks", got)
	}
	// B goes too: a window that names the server otherwise (another entry with the same
	// launch) did not start it and would not follow it (tasks.json names the server): refused.
	b.c.Close()
	waitFor(t, "B detached", func() bool { return instanceWindows(t, dir) == 1 })
	other := req
	other.Name = "u"
	d := attachWin(t, "D", cfg, other)
	d.initialize()
	if f := taskAsk(d, "1", "tasks/get", task); f.Error == nil {
		t.Errorf("D (server %q) claimed a task of server %q: %s", other.Name, req.Name, f.raw)
	}
	if f := taskAsk(c, "3", "tasks/cancel", task); f.Result == nil {
		t.Errorf("C cancelling the task B left: %s", f.raw)
	}
}

// TestEndedTaskStaysItsWindows: a task that has completed keeps its owner: its window fetches the
// result (2025-11-25: tasks/result after tasks/get said completed), another window still may not.
// Once the instance stops, its tasks are forgotten with it: the next instance's windows name none.
func TestEndedTaskStaysItsWindows(t *testing.T) {
	w := twoWindows(t, "--tasks", "--crash-after", "1")
	a, b, cfg, req := w.a, w.b, w.cfg, w.req
	task := startTask(t, a, "1", 1)
	if f := taskAsk(a, "2", "tasks/get", task); !strings.Contains(string(f.Result), `"completed"`) {
		t.Fatalf("A's task after one poll: %s, want completed", f.raw)
	}
	if f := taskAsk(b, "1", "tasks/result", task); f.Error == nil || !strings.Contains(string(f.Error), "another window") {
		t.Errorf("B fetching the result of A's ended task: %s, want refused", f.raw)
	}
	if f := taskAsk(a, "3", "tasks/result", task); f.Result == nil {
		t.Errorf("A fetching its own ended task's result: %s", f.raw)
	}
	// The server dies (in its second echo); a new instance starts for the next window.
	a.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	a.until("4")
	a.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	a.until("5")
	select { // (30 s: a hang, not a timing)
	case <-a.ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not crash")
	}
	c := attachWin(t, "C", cfg, req)
	c.initialize()
	if f := taskAsk(c, "1", "tasks/get", task); f.Error == nil {
		t.Errorf("a window of the new instance naming the old one's task: %s, want refused", f.raw)
	}
}

// TestTaskIDCraftedRefused: a window that knows another live window's task id tries the
// spellings a reader other than the daemon might take for it: the name escaped, the id escaped,
// the method escaped, the id only under _meta, a number, a batch, a notification, a tasks/ method
// the daemon does not know. None reaches the server; the owner's own escaped spelling still works.
func TestTaskIDCraftedRefused(t *testing.T) {
	w := twoWindows(t, "--tasks")
	a, b, record := w.a, w.b, w.record
	task := startTask(t, a, "1", 1000)
	// The id with its first letter escaped: the same string once decoded.
	esc := `\u00` + fmt.Sprintf("%02x", task[0]) + task[1:]

	for i, params := range []string{
		`{"\u0074askId":"` + task + `"}`,
		`{"taskId":"` + esc + `"}`,
		`{"_meta":{"taskId":"` + task + `"}}`,
		`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + task + `"}}}`,
		`{"taskId":1}`,
		`{"taskId":null,"TASKID":"` + task + `"}`,
		`["` + task + `"]`,
	} {
		id := fmt.Sprint(100 + i)
		b.send(`{"jsonrpc":"2.0","id":%s,"method":"tasks/cancel","params":%s}`, id, params)
		if f := b.until(id); f[len(f)-1].Error == nil {
			t.Errorf("B: tasks/cancel with params %s: %s, want refused", params, f[len(f)-1].raw)
		}
	}
	b.send(`{"jsonrpc":"2.0","id":200,"method":"tasks\/cancel","params":{"taskId":%q}}`, task)
	if f := b.until("200"); f[len(f)-1].Error == nil {
		t.Errorf("B: tasks\\/cancel (escaped method): %s, want refused", f[len(f)-1].raw)
	}
	b.send(`{"jsonrpc":"2.0","id":201,"method":"tasks/delete","params":{"taskId":%q}}`, task)
	if f := b.until("201"); f[len(f)-1].Error == nil {
		t.Errorf("B: tasks/delete: %s, want refused", f[len(f)-1].raw)
	}
	b.send(`[{"jsonrpc":"2.0","id":202,"method":"tasks/cancel","params":{"taskId":%q}}]`, task)
	b.send(`{"jsonrpc":"2.0","method":"tasks/cancel","params":{"taskId":%q}}`, task)
	b.sync()
	if n := recorded(t, record, "tasks/cancel"); n > 0 {
		t.Errorf("the server read %d tasks/cancel from a window naming another window's task", n)
	}
	a.send(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"%s"}}`, esc)
	if f := a.until("2"); f[len(f)-1].Result == nil || !strings.Contains(string(f[len(f)-1].Result), `"working"`) {
		t.Errorf("A: tasks/get of its own task, id escaped: %s, want it working", f[len(f)-1].raw)
	}
}
