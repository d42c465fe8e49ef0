//go:build unix

package broker

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The boundary between windows for tasks, attacked by a second window and by a server that forges
// what it says about tasks (mcptest --say writes whatever frames a test gives it).

// say makes w call mcptest's say: the server writes lines to the daemon as they are, then answers.
// Every frame the daemon routed from those lines is in the windows' queues before w's answer.
func say(w *win, id string, lines ...string) []frame {
	w.t.Helper()
	b, _ := json.Marshal(lines)
	w.send(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"say","arguments":{"lines":%s},"_meta":{"progressToken":"say"}}}`, id, b)
	return w.until(id)
}

// relatedMeta is the _meta of a frame about task (MCP 2025-11-25 tasks: related-task).
func relatedMeta(task string) string {
	return fmt.Sprintf(`"_meta":{"io.modelcontextprotocol/related-task":{"taskId":%q}}`, task)
}

// elicitFor is a server's elicitation/create with id qid, about task, asking msg.
func elicitFor(qid, task, msg string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"elicitation/create","params":{"message":%q,"requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}},%s}}`,
		qid, msg, relatedMeta(task))
}

// notSeen fails the test when any of fs carries secret.
func notSeen(t *testing.T, who string, fs []frame, secret string) {
	t.Helper()
	for _, f := range fs {
		if strings.Contains(string(f.raw), secret) {
			t.Errorf("%s was shown %q: %s", who, secret, f.raw)
		}
	}
}

// serverRead waits until the server has read a frame with id qid (a window's answer, or the
// daemon's) that contains want.
func serverRead(t *testing.T, record, qid, want string) {
	t.Helper()
	waitFor(t, "the server reading the answer to "+qid+" with "+want, func() bool {
		data, _ := os.ReadFile(record)
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "> ") && strings.Contains(l, `"id":"`+qid+`"`) && strings.Contains(l, want) {
				return true
			}
		}
		return false
	})
}

// nextMethod returns the next frame of w with method, skipping others.
func nextMethod(w *win, method string) frame {
	w.t.Helper()
	for {
		if f := w.next(); f.Method == method {
			return f
		}
	}
}

// TestTaskQuestionAskedOfItsOwner: a server's question that names a task (related-task in its
// _meta) is put to the window whose task it is, even when another window is the only one with a
// call in flight; a question about a task whose window has gone, about a task no window started,
// or naming its task ambiguously, is put to no one (the server is answered with an error), and a
// window that took the task over is asked from then on.
func TestTaskQuestionAskedOfItsOwner(t *testing.T) {
	w := twoWindows(t, "--tasks", "--say")
	a, b, cfg, req, record, dir := w.a, w.b, w.cfg, w.req, w.record, w.dir
	task := startTask(t, a, "1", 1000)
	mine := startTask(t, b, "1", 1000)

	// B's say is the only call in flight when the server asks about A's task.
	fb := say(b, "2", elicitFor("q1", task, "secret one of A"),
		`{"jsonrpc":"2.0","id":"q2","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"secret two of A"}}],"maxTokens":5,`+relatedMeta(task)+`}}`)
	notSeen(t, "B", append(fb, b.sync()...), "of A")
	q := nextMethod(a, "elicitation/create")
	if !strings.Contains(string(q.Params), "secret one of A") {
		t.Fatalf("A was asked %s", q.raw)
	}
	a.send(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"alice"}}}`, q.ID)
	serverRead(t, record, "q1", "alice")
	q = nextMethod(a, "sampling/createMessage")
	a.send(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"A's model"},"model":"a"}}`, q.ID)
	serverRead(t, record, "q2", "A's model")

	// A task no window started, and a task named twice or in a way another reader takes
	// otherwise: nobody is asked, the server hears an error.
	bad := []string{
		elicitFor("q3", "mcptest-task-999", "secret three"),
		`{"jsonrpc":"2.0","id":"q4","method":"elicitation/create","params":{"message":"secret four","requestedSchema":{"type":"object"},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + mine + `","taskId":"` + task + `"}}}}`,
		`{"jsonrpc":"2.0","id":"q5","method":"elicitation/create","params":{"message":"secret five","requestedSchema":{"type":"object"},"_meta":{"io.modelcontextprotocol/related-task":{"\u0074askId":"` + task + `"}}}}`,
		`{"jsonrpc":"2.0","id":"q6","method":"elicitation/create","params":{"message":"secret six","requestedSchema":{"type":"object"},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + mine + `"},"io.modelcontextprotocol/related-task":{"taskId":"` + task + `"}}}}`,
	}
	fb = say(b, "3", bad...)
	fb = append(fb, b.sync()...)
	fa := a.sync()
	for _, s := range []string{"secret three", "secret four", "secret five", "secret six"} {
		notSeen(t, "A", fa, s)
		notSeen(t, "B", fb, s)
	}
	for _, qid := range []string{"q3", "q4", "q5", "q6"} {
		serverRead(t, record, qid, `"error"`)
	}

	// A goes (an editor reload): its task's question goes to no one until a window of the same
	// server takes the task over; then to that window.
	a.c.Close()
	waitFor(t, "A detached", func() bool { return instanceWindows(t, dir) == 1 })
	fb = say(b, "4", elicitFor("q7", task, "secret seven"))
	notSeen(t, "B", append(fb, b.sync()...), "secret seven")
	serverRead(t, record, "q7", `"error"`)
	c := attachWin(t, "C", cfg, req)
	c.initialize()
	if f := taskAsk(c, "1", "tasks/get", task); f.Result == nil {
		t.Fatalf("C taking over the task A left: %s", f.raw)
	}
	fb = say(b, "5", elicitFor("q8", task, "secret eight"))
	notSeen(t, "B", append(fb, b.sync()...), "secret eight")
	if q := nextMethod(c, "elicitation/create"); !strings.Contains(string(q.Params), "secret eight") {
		t.Errorf("C was asked %s, want the question about the task it took over", q.raw)
	}
}

// TestTaskQuestionWhileOthersBusy: a 2025-11-25 task asks its question while its window waits in
// tasks/result and another window has a call in flight too. Without the task named in the
// question the daemon could not tell whose it is and refused it; named, it goes to the task's
// window, whose answer completes the task.
func TestTaskQuestionWhileOthersBusy(t *testing.T) {
	w := twoWindows(t, "--tasks")
	a, b := w.a, w.b
	b.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":300}}}`)
	b.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	b.until("10")

	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_ask","arguments":{"message":"secret of A"},"task":{}}}`)
	fs := a.until("1")
	var r struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if json.Unmarshal(fs[len(fs)-1].Result, &r) != nil || r.Task.TaskID == "" {
		t.Fatalf("task_ask as a task: %s", fs[len(fs)-1].raw)
	}
	if f := taskAsk(a, "2", "tasks/get", r.Task.TaskID); !strings.Contains(string(f.Result), "input_required") {
		t.Fatalf("task_ask after a poll: %s, want input_required", f.raw)
	}
	a.send(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":%q}}`, r.Task.TaskID)
	var q frame
	for q = a.next(); q.Method != "elicitation/create"; q = a.next() {
		if string(q.ID) == "3" {
			t.Fatalf("tasks/result answered without asking A: %s", q.raw)
		}
	}
	a.send(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"alice","agree":true}}}`, q.ID)
	fs = a.until("3")
	if got := text(fs[len(fs)-1]); !strings.Contains(got, "alice") {
		t.Errorf("A's task result %q, want A's answer", got)
	}
	notSeen(t, "B", b.sync(), "secret of A")
	b.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
}

// TestTaskMethodSpellingsRefused: a window that knows another window's task id sends task
// methods spelt as a lenient server might still read them: another case, spaces or invisible
// characters around or inside, Unicode that folds or normalises to ASCII (the Kelvin sign, the
// long s, a ligature, fullwidth letters), a look-alike letter, a doubled slash. MCP method names
// are case-sensitive ASCII, but a server that folds case would act on another window's task (or
// list every window's tasks, or change every window's log level): none reaches the server.
func TestTaskMethodSpellingsRefused(t *testing.T) {
	w := twoWindows(t, "--tasks")
	a, b, record := w.a, w.b, w.record
	task := startTask(t, a, "1", 1000)

	methods := []string{
		"Tasks/get", "tasks/GET", "TASKS/CANCEL", "tasks/Result", "tasks/Update", " tasks/cancel",
		"tasks/cancel ", "tasks/cancel\t", "tasks/cancel\u0000", "tasks/cancel\u200b", "\u200etasks/cancel",
		"tas\u212as/cancel", "ta\u017fks/cancel", "tasks/li\ufb06", "\uff54\uff41\uff53\uff4b\uff53/cancel",
		"tasks/canc\u0435l", "tasks//cancel", "tasks.cancel", "Tasks/List", "TASKS/LIST",
	}
	for i, m := range methods {
		id := fmt.Sprint(100 + i)
		b.send(`{"jsonrpc":"2.0","id":%s,"method":%s,"params":{"taskId":%q}}`, id, jsonString(m), task)
		if f := b.until(id); f[len(f)-1].Error == nil {
			t.Errorf("B: method %q naming A's task: %s, want refused", m, f[len(f)-1].raw)
		}
	}
	// Other methods the daemon answers itself or keeps per window, spelt otherwise.
	for i, m := range []string{"Logging/SetLevel", "logging/setlevel", "Resources/Subscribe", "TOOLS/CALL", "Initialize"} {
		id := fmt.Sprint(200 + i)
		b.send(`{"jsonrpc":"2.0","id":%s,"method":%s,"params":{"level":"debug","uri":"x","name":"echo","arguments":{"text":"x"}}}`, id, jsonString(m))
		if f := b.until(id); f[len(f)-1].Error == nil {
			t.Errorf("B: method %q: %s, want refused", m, f[len(f)-1].raw)
		}
	}
	b.sync()
	data, _ := os.ReadFile(record)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "> ") && (strings.Contains(l, task) || strings.Contains(strings.ToLower(l), "setlevel") ||
			strings.Contains(strings.ToLower(l), "subscribe") || strings.Contains(l, `"TOOLS/CALL"`) || strings.Contains(l, `"Initialize"`)) {
			t.Errorf("the server read a window's request spelt otherwise: %s", l)
		}
	}
	// The exact spelling still works for the task's own window.
	if f := taskAsk(a, "2", "tasks/get", task); f.Result == nil {
		t.Errorf("A: tasks/get of its own task: %s", f.raw)
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestOrphanTaskClaimedOnce: a window leaves tasks running; two windows of the same server
// (two editors reloaded at once) race to take each of them over. Each task goes to exactly one of
// them: the other is refused, and neither lists or hears of the other's.
func TestOrphanTaskClaimedOnce(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	req := request(launch("--tasks", "--task-status"))
	a := attachWin(t, "A", cfg, req)
	a.initialize()
	const n = 32
	var tasks []string
	for i := range n {
		tasks = append(tasks, startTask(t, a, fmt.Sprint(i+1), 1000))
	}
	c := attachWin(t, "C", cfg, req)
	d := attachWin(t, "D", cfg, req)
	c.initialize()
	d.initialize()
	a.c.Close()
	waitFor(t, "A detached", func() bool { return instanceWindows(t, dir) == 2 })

	var wg sync.WaitGroup
	for _, w := range []*win{c, d} {
		wg.Go(func() { // both at once: the two windows' frames interleave in the daemon
			for i, task := range tasks {
				w.send(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":%q}}`, i+1, task)
			}
		})
	}
	wg.Wait()
	got := map[string][]string{} // window -> tasks it was given
	for _, w := range []*win{c, d} {
		for range tasks {
			f := w.next()
			for f.Method != "" {
				f = w.next()
			}
			var i int
			if json.Unmarshal(f.ID, &i) != nil || i < 1 || i > n {
				t.Fatalf("%s: a response to no request of its own: %s", w.name, f.raw)
			}
			if f.Result != nil {
				got[w.name] = append(got[w.name], tasks[i-1])
			} else if !strings.Contains(string(f.Error), "another window") {
				t.Errorf("%s: tasks/get of %s: %s, want its status or refused as another window's", w.name, tasks[i-1], f.raw)
			}
		}
	}
	for _, task := range tasks {
		if slices.Contains(got["C"], task) == slices.Contains(got["D"], task) {
			t.Errorf("task %s: C follows it %v, D follows it %v; want exactly one", task, slices.Contains(got["C"], task), slices.Contains(got["D"], task))
		}
	}
	// Each window now lists, follows and hears of its own only.
	for _, w := range []*win{c, d} {
		other := map[string]string{"C": "D", "D": "C"}[w.name]
		w.send(`{"jsonrpc":"2.0","id":"list","method":"tasks/list"}`)
		fs := w.until(`"list"`)
		ids := listed(t, fs[len(fs)-1])
		slices.Sort(ids)
		mine := slices.Sorted(slices.Values(got[w.name]))
		if !slices.Equal(ids, mine) {
			t.Errorf("%s lists %v, want the %d tasks it took over", w.name, ids, len(mine))
		}
		for _, task := range got[other] {
			if f := taskAsk(w, `"again"`, "tasks/get", task); f.Error == nil {
				t.Errorf("%s following %s's task %s: %s, want refused", w.name, other, task, f.raw)
			}
		}
		for _, f := range append(fs, w.sync()...) {
			if f.Method == "notifications/tasks/status" {
				var p struct {
					TaskID string `json:"taskId"`
				}
				json.Unmarshal(f.Params, &p)
				if slices.Contains(got[other], p.TaskID) {
					t.Errorf("%s heard of %s's task: %s", w.name, other, f.raw)
				}
			}
		}
	}
}

// TestServerCannotRedirectTaskNews: a server that lies about tasks cannot make the daemon tell
// one window about another's. A notification that names a task (_meta related-task) reaches that
// task's window, by the daemon's records, or no one: not the window its own routing (a progress
// token, a task id, a broadcast) points to when that is another one, never every window; a task
// named twice, or so that another reader takes another one, or unknown, goes to no one.
func TestServerCannotRedirectTaskNews(t *testing.T) {
	w := twoWindows(t, "--tasks", "--say")
	a, b := w.a, w.b
	task := startTask(t, a, "1", 1000)
	mine := startTask(t, b, "1", 1000)
	status := func(params string) string {
		return `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + params + `}`
	}
	logLine := func(text, meta string) string {
		return `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + text + `"` + meta + `}}`
	}
	progress := func(tok, text, meta string) string {
		return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tok + `,"progress":1,"message":"` + text + `"` + meta + `}}`
	}
	fb := say(b, "2",
		status(`{"taskId":"`+task+`","status":"working","statusMessage":"news A1"}`),
		logLine("news A2", ","+relatedMeta(task)),
		logLine("news AB", ""), // names no task: every window's
		progress("$TOKEN", "news B1", ","+relatedMeta(mine)),
		// A's task, dressed as B's, and the other way round: to no one.
		status(`{"taskId":"`+task+`","status":"working","statusMessage":"news one",`+relatedMeta(mine)+`}`),
		progress("$TOKEN", "news two", ","+relatedMeta(task)),
		// Named twice or ambiguously: to no one.
		status(`{"taskId":"`+mine+`","taskId":"`+task+`","status":"working","statusMessage":"news three"}`),
		status(`{"taskID":"`+mine+`","taskId":"`+task+`","status":"working","statusMessage":"news four"}`),
		status(`{"\u0074askId":"`+task+`","status":"working","statusMessage":"news five"}`),
		status(`{"taskId":"`+task+`","status":"working","statusMessage":"news six"},"params":{"taskId":"`+mine+`"}`),
		logLine("news seven", `,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"`+task+`","taskId":"`+mine+`"}}`),
		logLine("news eight", `,"_meta":{"io.modelcontextprotocol\u002frelated-task":{"taskId":"`+task+`"}}`),
		// Unknown task: to no one.
		status(`{"taskId":"mcptest-task-999","status":"working","statusMessage":"news nine"}`),
		status(`{"status":"working","statusMessage":"news ten",`+relatedMeta(task)+`}`),
		logLine("news eleven", ","+relatedMeta("mcptest-task-999")),
		progress(`"nobody"`, "news twelve", ","+relatedMeta(task)),
		// No routing rule: to no one.
		`{"jsonrpc":"2.0","method":"notifications/tasks/created","params":{"taskId":"`+task+`","statusMessage":"news thirteen"}}`,
	)
	fb = append(fb, b.sync()...)
	fa := a.sync()
	has := func(fs []frame, s string) bool {
		return slices.ContainsFunc(fs, func(f frame) bool { return strings.Contains(string(f.raw), s) })
	}
	for s, want := range map[string][2]bool{"news A1": {true, false}, "news A2": {true, false}, "news AB": {true, true}, "news B1": {false, true}} {
		if has(fa, s) != want[0] || has(fb, s) != want[1] {
			t.Errorf("%q reached A %v, B %v; want A %v, B %v", s, has(fa, s), has(fb, s), want[0], want[1])
		}
	}
	for _, s := range []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen"} {
		if s = "news " + s; has(fa, s) || has(fb, s) {
			t.Errorf("%q reached A %v, B %v; want no one", s, has(fa, s), has(fb, s))
		}
	}
}

// TestWindowCannotSpeakForAnothersTask: a window names another window's task as the one its
// frame is about (_meta related-task): in a request, in a cancellation, in its answer to the
// server's question. A server that reads related-task would take it as part of that task (B's
// answer as the input A's task waits for, B's cancellation as A's): none reaches the server, and
// the server still gets an answer (an error) to its question.
func TestWindowCannotSpeakForAnothersTask(t *testing.T) {
	w := twoWindows(t, "--tasks", "--say")
	a, b, record := w.a, w.b, w.record
	task := startTask(t, a, "1", 1000)
	mine := startTask(t, b, "1", 1000)
	for i, r := range []string{
		`"method":"tools/call","params":{"name":"echo","arguments":{"text":"mallory"},` + relatedMeta(task) + `}`,
		`"method":"tasks/get","params":{"taskId":"` + mine + `",` + relatedMeta(task) + `}`,
		`"method":"tasks/result","params":{"taskId":"` + mine + `","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + mine + `","taskId":"` + task + `"}}}`,
		`"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + task + `"},"x":"\u0041"}}`,
		`"method":"tasks/list","params":{` + relatedMeta(task) + `}`,
		`"method":"tasks/cancel","params":{"taskId":"` + mine + `","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"mcptest-task-999"}}}`,
	} {
		id := fmt.Sprint(10 + i)
		b.send(`{"jsonrpc":"2.0","id":%s,%s}`, id, r)
		if f := b.until(id); f[len(f)-1].Error == nil {
			t.Errorf("B's request naming A's task (%s): %s, want refused", r, f[len(f)-1].raw)
		}
	}
	// Naming its own task in _meta too is no reason to refuse.
	b.send(`{"jsonrpc":"2.0","id":15,"method":"tasks/get","params":{"taskId":%q,%s}}`, mine, relatedMeta(mine))
	if f := b.until("15"); f[len(f)-1].Result == nil {
		t.Errorf("B's tasks/get of its own task, named in _meta too: %s", f[len(f)-1].raw)
	}
	// B's own call in flight, then a cancellation of it that names A's task.
	b.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":300}}}`)
	b.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":20,"reason":"mallory",%s}}`, relatedMeta(task))
	// The server asks B about B's own task; B answers as if for A's.
	fs := say(b, "21", elicitFor("qb", mine, "B's question"))
	i := slices.IndexFunc(fs, func(f frame) bool { return f.Method == "elicitation/create" })
	if i < 0 {
		t.Fatalf("B was not asked about its own task: %v", methods(fs))
	}
	b.send(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"mallory"},%s}}`, fs[i].ID, relatedMeta(task))
	serverRead(t, record, "qb", `"error"`)
	// A's own answer naming its own task goes through.
	say(b, "22", elicitFor("qa", task, "A's question"))
	q := nextMethod(a, "elicitation/create")
	a.send(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"alice"},%s}}`, q.ID, relatedMeta(task))
	serverRead(t, record, "qa", "alice")
	b.sync()
	data, _ := os.ReadFile(record)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "> ") && (strings.Contains(l, "mallory") || strings.Contains(l, `"x":"\u0041"`)) {
			t.Errorf("the server read a frame of B's naming A's task: %s", l)
		}
	}
	b.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":20}}`)
}

// TestTaskFloodKeepsOthersTasks: one window starts more tasks than an instance keeps, and ends
// many of them; another window's running task and its ended task (whose result it
// has not fetched yet) are still its own: the flooder's own oldest are forgotten instead.
func TestTaskFloodKeepsOthersTasks(t *testing.T) {
	dir, _ := serveInProcess(t, 5*time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	req := request(launch("--tasks"))
	a := attachWin(t, "A", cfg, req)
	b := attachWin(t, "B", cfg, req)
	a.initialize()
	b.initialize()
	running := startTask(t, a, "1", 1000)
	ended := startTask(t, a, "2", 1)
	if f := taskAsk(a, "3", "tasks/get", ended); !strings.Contains(string(f.Result), `"completed"`) {
		t.Fatalf("A's short task after a poll: %s, want completed", f.raw)
	}

	// B floods, a batch of calls at a time (its requests in flight are bounded).
	const batch = 200
	flood := func(w *win, n int, method func(i int) string) []frame {
		var out []frame
		for i := 0; i < n; i += batch {
			for j := i; j < min(i+batch, n); j++ {
				w.send(`%s`, method(j))
			}
			for j := i; j < min(i+batch, n); j++ {
				f := w.next()
				for f.Method != "" {
					f = w.next()
				}
				out = append(out, f)
			}
		}
		return out
	}
	start := func(w *win, n int) []string {
		var ids []string
		for _, f := range flood(w, n, func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"task_slow","arguments":{"polls":1},"task":{}}}`, i+1)
		}) {
			var r struct {
				Task struct {
					TaskID string `json:"taskId"`
				} `json:"task"`
			}
			if json.Unmarshal(f.Result, &r) != nil || r.Task.TaskID == "" {
				t.Fatalf("%s's task: %s", w.name, f.raw)
			}
			ids = append(ids, r.Task.TaskID)
		}
		return ids
	}
	bTasks := start(b, maxTasks+batch)
	// B's newest tasks end (polled once each).
	newest := bTasks[len(bTasks)-1000:]
	for _, f := range flood(b, len(newest), func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":%q}}`, i+1, newest[i])
	}) {
		if !strings.Contains(string(f.Result), `"completed"`) {
			t.Fatalf("B polling its own newest task: %s, want completed", f.raw)
		}
	}
	if f := taskAsk(a, "4", "tasks/get", running); f.Result == nil {
		t.Errorf("A's running task after B's flood: %s, want still A's", f.raw)
	}
	if f := taskAsk(a, "5", "tasks/result", ended); f.Result == nil {
		t.Errorf("A's ended task's result after B's flood: %s, want still A's", f.raw)
	}
	if f := taskAsk(b, `"first"`, "tasks/get", bTasks[0]); f.Error == nil {
		t.Errorf("B's oldest task after its own flood: %s, want forgotten", f.raw)
	}

	// More windows flood at once (or one opens several connections): together they hold more
	// than the instance keeps, and still A's tasks are its own.
	for i := range maxTasks/1000 + 1 {
		w := attachWin(t, fmt.Sprintf("B%d", i), cfg, req)
		w.initialize()
		start(w, 1000)
	}
	if f := taskAsk(a, "6", "tasks/get", running); f.Result == nil {
		t.Errorf("A's running task after several windows' flood: %s, want still A's", f.raw)
	}
	if f := taskAsk(a, "7", "tasks/result", ended); f.Result == nil {
		t.Errorf("A's ended task's result after several windows' flood: %s, want still A's", f.raw)
	}
}
