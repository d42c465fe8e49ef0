package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// fakeTaskClock fires every wait at once and moves its own time on by the wait: polls follow the
// server's answers, and the intervals asked for are recorded.
type fakeTaskClock struct {
	mu    sync.Mutex
	t     time.Time
	waits []time.Duration
}

func newFakeTaskClock() *fakeTaskClock {
	return &fakeTaskClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
}

func (f *fakeTaskClock) clock() taskClock {
	return taskClock{
		now: func() time.Time {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.t
		},
		after: func(d time.Duration) <-chan time.Time {
			f.mu.Lock()
			f.t = f.t.Add(d)
			f.waits = append(f.waits, d)
			now := f.t
			f.mu.Unlock()
			ch := make(chan time.Time, 1)
			ch <- now
			return ch
		},
	}
}

func (f *fakeTaskClock) intervals() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.waits...)
}

// taskUpdates collects a call's TaskUpdates.
type taskUpdates struct {
	mu sync.Mutex
	us []TaskUpdate
}

func (u *taskUpdates) add(x TaskUpdate) {
	u.mu.Lock()
	u.us = append(u.us, x)
	u.mu.Unlock()
}

func (u *taskUpdates) statuses() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, x := range u.us {
		out = append(out, x.Status+": "+x.Message)
	}
	return out
}

func (u *taskUpdates) last() TaskUpdate {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.us) == 0 {
		return TaskUpdate{}
	}
	return u.us[len(u.us)-1]
}

// taskServer is an mcptest --tasks server of era ("" legacy, or ProtocolModern), recording.
func taskServer(t *testing.T, era string, args ...string) (config.ServerConfig, string) {
	rec := filepath.Join(t.TempDir(), "rec")
	a := append([]string{"--tasks", "--record", rec}, args...)
	if era == ProtocolModern {
		a = append([]string{"--protocol", ProtocolModern}, a...)
	}
	return stdioCfg("t", a...), rec
}

var eras = []struct{ name, era string }{{"2025-11-25", ""}, {"2026-07-28", ProtocolModern}}

// taskCall calls tool with the fake clock and collects the updates.
func taskCall(t *testing.T, r *Registry, ctx context.Context, tool, args string) (Result, error, *taskUpdates, *fakeTaskClock) {
	t.Helper()
	clk := newFakeTaskClock()
	ups := &taskUpdates{}
	ctx = withTaskClock(WithTaskUpdates(ctx, ups.add), clk.clock())
	res, err := r.Call(ctx, tool, json.RawMessage(args))
	return res, err, ups, clk
}

// TestTaskCompletes: a tool that requires a task runs as one in both eras: 2025-11-25 with the
// "task" member and tasks/result; 2026-07-28 by the extension, tasks/get carrying the result and
// the requestState echoed (the server refuses a stale one). Polls wait the server's interval.
func TestTaskCompletes(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			cfg, rec := taskServer(t, e.era)
			r := newTestRegistry(t, Options{})
			applyAndWait(t, r, cfg)
			tool, ok := r.Lookup("mcp__t__task_slow")
			if !ok || tool.TaskSupport != TaskSupportRequired {
				t.Fatalf("task_slow = %+v, %v; want TaskSupport required", tool, ok)
			}
			res, err, ups, clk := taskCall(t, r, context.Background(), "mcp__t__task_slow", `{"polls":3}`)
			if err != nil || res.IsError || res.Text != "task_slow done after 3 polls" {
				t.Fatalf("call = %+v, %v", res, err)
			}
			want := []string{"working: started", "working: step 1 of 3", "working: step 2 of 3", "completed: done"}
			if diff := cmp.Diff(want, ups.statuses()); diff != "" {
				t.Errorf("updates (-want +got):\n%s", diff)
			}
			if u := ups.last(); u.Server != "t" || u.Tool != "mcp__t__task_slow" || !strings.HasPrefix(u.TaskID, "mcptest-task-") || (u.Era == ProtocolModern) != (e.era == ProtocolModern) {
				t.Errorf("last update = %+v", u)
			}
			if diff := cmp.Diff([]time.Duration{time.Second, time.Second, time.Second}, clk.intervals()); diff != "" {
				t.Errorf("poll intervals (-want +got):\n%s", diff)
			}
			in, _ := recorded(t, rec)
			if got := countMethod(in, "tools/call"); got != 1 {
				t.Errorf("tools/call sent %d times", got)
			}
			if got := countMethod(in, "tasks/get"); got != 3 {
				t.Errorf("tasks/get sent %d times, want 3", got)
			}
			for _, l := range in {
				if !strings.Contains(l, `"method":"tools/call"`) {
					continue
				}
				hasTask := strings.Contains(l, `"task":{}`)
				if hasTask == (e.era == ProtocolModern) {
					t.Errorf("tools/call task member = %v in era %s: %s", hasTask, e.name, l)
				}
				if e.era == ProtocolModern {
					var req struct {
						Params struct {
							Meta struct {
								Caps struct {
									Extensions map[string]json.RawMessage `json:"extensions"`
								} `json:"io.modelcontextprotocol/clientCapabilities"`
							} `json:"_meta"`
						} `json:"params"`
					}
					if err := json.Unmarshal([]byte(l), &req); err != nil || string(req.Params.Meta.Caps.Extensions[TaskExtension]) != "{}" {
						t.Errorf("modern tools/call does not declare the tasks extension (%v): %s", err, l)
					}
				}
			}
			wantResult := 1
			if e.era == ProtocolModern {
				wantResult = 0
			}
			if got := countMethod(in, "tasks/result"); got != wantResult {
				t.Errorf("tasks/result sent %d times, want %d", got, wantResult)
			}
		})
	}
}

// TestTaskPollBounds: the server's interval is kept within [minTaskPoll, maxTaskPoll] over the
// wire, and any value a server can send maps to a bounded one.
func TestTaskPollBounds(t *testing.T) {
	for _, c := range []struct {
		ms   string
		want time.Duration
	}{{"5", minTaskPoll}, {"600000", maxTaskPoll}, {"700", 700 * time.Millisecond}} {
		cfg, _ := taskServer(t, "", "--task-poll-ms", c.ms)
		r := newTestRegistry(t, Options{})
		applyAndWait(t, r, cfg)
		res, err, _, clk := taskCall(t, r, context.Background(), "mcp__t__task_slow", `{"polls":2}`)
		if err != nil || res.IsError {
			t.Fatalf("call = %+v, %v", res, err)
		}
		if diff := cmp.Diff([]time.Duration{c.want, c.want}, clk.intervals()); diff != "" {
			t.Errorf("pollInterval %s ms: intervals (-want +got):\n%s", c.ms, diff)
		}
	}
	for _, v := range []float64{-1, 0, math.NaN(), math.Inf(1), 1e300, 1, 1e9} {
		v := v
		for _, tk := range []wireTask{{PollInterval: &v}, {PollIntervalMs: &v}} {
			if d := tk.poll(); d < minTaskPoll || d > maxTaskPoll {
				t.Errorf("poll(%v) = %s, out of bounds", v, d)
			}
			if d := (wireTask{TTL: &v}).ttl(); d < 0 {
				t.Errorf("ttl(%v) = %s", v, d)
			}
		}
	}
}

// TestTaskInputRequired: a task's question goes to the same Elicit handler as any elicitation
// and its answer back by the era's path: the tasks/result stream (2025-11-25), tasks/update
// (2026-07-28), once.
func TestTaskInputRequired(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			cfg, rec := taskServer(t, e.era)
			var asked []Elicitation
			var mu sync.Mutex
			r := newTestRegistry(t, Options{Elicit: func(ctx context.Context, el Elicitation) ElicitResult {
				mu.Lock()
				asked = append(asked, el)
				mu.Unlock()
				return ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "agree": true}}
			}})
			applyAndWait(t, r, cfg)
			res, err, ups, _ := taskCall(t, r, context.Background(), "mcp__t__task_ask", `{"message":"Which Go?"}`)
			if err != nil || res.IsError || res.Text != `answer: {"action":"accept","content":{"agree":true,"name":"Ada"}}` {
				t.Fatalf("call = %+v, %v", res, err)
			}
			if len(asked) != 1 || asked[0].Message != "Which Go?" || asked[0].Server != "t" {
				t.Errorf("asked = %+v, want one question from t", asked)
			}
			if !strings.Contains(strings.Join(ups.statuses(), "\n"), "input_required: waiting for your answer") || ups.last().Status != TaskCompleted {
				t.Errorf("updates = %q, want input_required, and completed last", ups.statuses())
			}
			in, _ := recorded(t, rec)
			wantUpdate := 0
			if e.era == ProtocolModern {
				wantUpdate = 1
			}
			if got := countMethod(in, "tasks/update"); got != wantUpdate {
				t.Errorf("tasks/update sent %d times, want %d", got, wantUpdate)
			}
		})
	}
}

// TestTaskInputRoundsBounded: a 2026-07-28 task that asks a new question at every poll, however
// often it is answered, cannot ask the person forever: after maxInputRounds questions the next
// one is not asked, the server gets tasks/cancel, and the model an error result saying why.
func TestTaskInputRoundsBounded(t *testing.T) {
	cfg, rec := taskServer(t, ProtocolModern)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	asked := 0
	r := newTestRegistry(t, Options{
		Elicit: func(ctx context.Context, el Elicitation) ElicitResult {
			mu.Lock()
			defer mu.Unlock()
			if asked++; asked > maxInputRounds+2 {
				cancel() // the bound did not hold: stop here rather than ask forever
			}
			return ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "agree": true}}
		},
	})
	applyAndWait(t, r, cfg)
	res, err, ups, _ := taskCall(t, r, ctx, "mcp__t__task_nag", `{}`)
	mu.Lock()
	defer mu.Unlock()
	if asked != maxInputRounds {
		t.Errorf("the person was asked %d questions, want %d", asked, maxInputRounds)
	}
	if err != nil || !res.IsError || !strings.Contains(res.Text, fmt.Sprintf("asked for input more than %d times", maxInputRounds)) {
		t.Errorf("call = %+v, %v; want an error result saying the task kept asking", res, err)
	}
	in, _ := recorded(t, rec)
	if n := countMethod(in, "tasks/cancel"); n != 1 {
		t.Errorf("tasks/cancel sent %d times, want 1", n)
	}
	if u := ups.last(); u.Status != TaskCancelled || !strings.Contains(u.Stopped, "kept asking you questions") {
		t.Errorf("last update = %+v, want cancelled with a sentence for the person", u)
	}
}

// TestTaskInputRequestsPerRoundBounded: the bound on rounds is one on the person's questions only
// if a round cannot hold any number of them: a 2026-07-28 task whose input_required carries 50
// questions at once is not asked at all (it would have put 50 per round, 400 in all, to the
// person); it is cancelled and the model told why.
func TestTaskInputRequestsPerRoundBounded(t *testing.T) {
	cfg, rec := taskServer(t, ProtocolModern)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	asked := 0
	r := newTestRegistry(t, Options{
		Elicit: func(ctx context.Context, el Elicitation) ElicitResult {
			mu.Lock()
			defer mu.Unlock()
			if asked++; asked > 2*maxInputRequests {
				cancel() // the bound did not hold: stop here rather than ask hundreds
			}
			return ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "agree": true}}
		},
	})
	applyAndWait(t, r, cfg)
	res, err, _, _ := taskCall(t, r, ctx, "mcp__t__task_nag", `{"many": 50}`)
	mu.Lock()
	defer mu.Unlock()
	if asked != 0 {
		t.Errorf("the person was asked %d questions, want none", asked)
	}
	if err != nil || !res.IsError || !strings.Contains(res.Text, "questions at once") {
		t.Errorf("call = %+v, %v; want an error result saying the task asked too many questions at once", res, err)
	}
	in, _ := recorded(t, rec)
	if n := countMethod(in, "tasks/cancel"); n != 1 {
		t.Errorf("tasks/cancel sent %d times, want 1", n)
	}
}

// TestTaskQuestionsBoundedLegacy: a 2025-11-25 task that sends a new elicitation/create after
// every answer (while tasks/result is open) gets maxInputRounds of them put to the person; every
// further one is answered cancel without asking.
func TestTaskQuestionsBoundedLegacy(t *testing.T) {
	cfg, _ := taskServer(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	asked := 0
	r := newTestRegistry(t, Options{Elicit: func(ctx context.Context, el Elicitation) ElicitResult {
		mu.Lock()
		defer mu.Unlock()
		if asked++; asked > maxInputRounds+2 {
			cancel() // the bound did not hold: stop here rather than ask forever
		}
		return ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "agree": true}}
	}})
	applyAndWait(t, r, cfg)
	res, err, _, _ := taskCall(t, r, ctx, "mcp__t__task_nag", `{}`)
	mu.Lock()
	defer mu.Unlock()
	if asked != maxInputRounds {
		t.Errorf("the person was asked %d questions, want %d", asked, maxInputRounds)
	}
	if want := fmt.Sprintf("task_nag: %d questions answered, then map[action:cancel content:<nil>]", maxInputRounds); err != nil || res.Text != want {
		t.Errorf("call = %+v, %v; want %q", res, err, want)
	}
}

// TestTaskFailed: a failed task is an error result for the model naming the server's reason, and
// its last update says failed with the server's message for the person.
func TestTaskFailed(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			cfg, _ := taskServer(t, e.era)
			r := newTestRegistry(t, Options{})
			applyAndWait(t, r, cfg)
			res, err, ups, _ := taskCall(t, r, context.Background(), "mcp__t__task_fail", `{"message":"disk full"}`)
			if err != nil || !res.IsError || !strings.Contains(res.Text, "failed") || !strings.Contains(res.Text, "disk full") {
				t.Fatalf("call = %+v, %v", res, err)
			}
			if u := ups.last(); u.Status != TaskFailed || u.Message != "disk full" {
				t.Errorf("last update = %+v", u)
			}
		})
	}
}

// TestTaskCancel: ending the call's ctx sends tasks/cancel before Call returns, in both eras.
func TestTaskCancel(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			cfg, rec := taskServer(t, e.era)
			r := newTestRegistry(t, Options{})
			applyAndWait(t, r, cfg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clk := newFakeTaskClock()
			seen := 0
			ctx = withTaskClock(WithTaskUpdates(ctx, func(u TaskUpdate) {
				if seen++; seen == 2 { // the task runs: the person cancels
					cancel()
				}
			}), clk.clock())
			res, err := r.Call(ctx, "mcp__t__task_slow", json.RawMessage(`{"polls":1000}`))
			if !errors.Is(err, context.Canceled) || !res.IsError {
				t.Fatalf("call = %+v, %v; want cancelled", res, err)
			}
			in, out := recorded(t, rec)
			if got := countMethod(in, "tasks/cancel"); got != 1 {
				t.Fatalf("tasks/cancel sent %d times, want 1 (methods %v)", got, methodsOf(in))
			}
			if !strings.Contains(strings.Join(out, "\n"), "cancelled by the client") && e.era == "" {
				t.Errorf("the server did not cancel the task: %v", out)
			}
		})
	}
}

// TestTaskKept: a call whose ctx ends while the host is going away (WithKeepTask) leaves its
// task running: no tasks/cancel.
func TestTaskKept(t *testing.T) {
	cfg, rec := taskServer(t, "")
	r := newTestRegistry(t, Options{})
	applyAndWait(t, r, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = withTaskClock(WithKeepTask(WithTaskUpdates(ctx, func(TaskUpdate) { cancel() }), func() bool { return true }), newFakeTaskClock().clock())
	if _, err := r.Call(ctx, "mcp__t__task_slow", json.RawMessage(`{"polls":1000}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("call err = %v", err)
	}
	in, _ := recorded(t, rec)
	if got := countMethod(in, "tasks/cancel"); got != 0 {
		t.Errorf("tasks/cancel sent %d times for a kept task", got)
	}
}

// TestTaskTTL: a task still running when its ttl lapses ends the call with an error result (no
// ceiling otherwise).
func TestTaskTTL(t *testing.T) {
	cfg, _ := taskServer(t, "", "--task-ttl-ms", "3000")
	r := newTestRegistry(t, Options{})
	applyAndWait(t, r, cfg)
	res, err, ups, clk := taskCall(t, r, context.Background(), "mcp__t__task_slow", `{"polls":1000}`)
	if err != nil || !res.IsError || !strings.Contains(res.Text, "time to live") {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if n := len(clk.intervals()); n != 4 {
		t.Errorf("%d waits, want 4 (3 s ttl, 1 s polls)", n)
	}
	if u := ups.last(); u.Status != TaskFailed {
		t.Errorf("last update = %+v", u)
	}
}

// TestTaskOptional: a tool whose taskSupport is optional runs as a task too (README: "Long
// calls"), and a tool without taskSupport never does.
func TestTaskOptional(t *testing.T) {
	cfg, rec := taskServer(t, "")
	r := newTestRegistry(t, Options{})
	applyAndWait(t, r, cfg)
	res, err, _, _ := taskCall(t, r, context.Background(), "mcp__t__task_optional", `{"polls":1}`)
	if err != nil || res.IsError || res.Text != "task_optional done after 1 polls" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	res, err, ups, _ := taskCall(t, r, context.Background(), "mcp__t__echo", `{"text":"plain"}`)
	if err != nil || res.Text != "plain" || len(ups.statuses()) != 0 {
		t.Fatalf("echo = %+v, %v, %v", res, err, ups.statuses())
	}
	in, _ := recorded(t, rec)
	for _, l := range in {
		if strings.Contains(l, `"name":"echo"`) && strings.Contains(l, `"task"`) {
			t.Errorf("echo sent as a task: %s", l)
		}
	}
}

// TestTaskResume: a registry that stops mid-task (a host killed) leaves the task to the next one,
// which follows it by id to its result without calling the tool again.
func TestTaskResume(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			dir := t.TempDir()
			done := filepath.Join(dir, "done")
			cfg, rec := taskServer(t, e.era, "--task-state", filepath.Join(dir, "tasks.json"))
			r1 := NewRegistry(Options{})
			applyAndWait(t, r1, cfg)
			created := make(chan TaskUpdate, 1)
			ctx := withTaskClock(WithTaskUpdates(context.Background(), func(u TaskUpdate) {
				select {
				case created <- u:
				default:
				}
			}), newFakeTaskClock().clock())
			type out struct {
				res Result
				err error
			}
			first := make(chan out, 1)
			go func() {
				res, err := r1.Call(ctx, "mcp__t__task_slow", json.RawMessage(`{"file":`+jsonString(done)+`}`))
				first <- out{res, err}
			}()
			u := <-created
			r1.Close() // the host goes away with its server, the task left running
			if o := <-first; !o.res.IsError {
				t.Fatalf("the first host's call = %+v, %v", o.res, o.err)
			}
			if err := os.WriteFile(done, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			r2 := newTestRegistry(t, Options{})
			applyAndWait(t, r2, cfg)
			res, err := r2.ResumeTask(withTaskClock(context.Background(), newFakeTaskClock().clock()), u.Tool, u.TaskID, u.RequestState)
			if err != nil || res.IsError || !strings.HasPrefix(res.Text, "task_slow done after") {
				t.Fatalf("resumed = %+v, %v", res, err)
			}
			in, _ := recorded(t, rec)
			if got := countMethod(in, "tools/call"); got != 1 {
				t.Errorf("tools/call sent %d times across both hosts, want 1", got)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCreatedTaskHostile: what a server controls in a task handle cannot make the host keep an
// unbounded id, take a result as a task it never asked for, or read a result off a new task.
func TestCreatedTaskHostile(t *testing.T) {
	legacy, modern := &conn{era: ProtocolLegacy}, &conn{era: ProtocolModern}
	long := strings.Repeat("x", maxTaskID+1)
	for _, c := range []struct {
		name    string
		c       *conn
		result  string
		asked   bool
		isTask  bool
		wantErr string
	}{
		{"legacy, not asked", legacy, `{"task":{"taskId":"a","status":"working"},"content":[]}`, false, false, ""},
		{"legacy, asked", legacy, `{"task":{"taskId":"a","status":"working"}}`, true, true, ""},
		{"legacy, id too long", legacy, `{"task":{"taskId":"` + long + `","status":"working"}}`, true, true, "longer"},
		{"legacy, no id", legacy, `{"task":{"status":"working"}}`, true, true, "no taskId"},
		{"legacy, unknown status", legacy, `{"task":{"taskId":"a","status":"rm -rf"}}`, true, true, "unknown task status"},
		{"modern, text mentions task", modern, `{"content":[{"type":"text","text":"resultType task"}]}`, false, false, ""},
		{"modern, task", modern, `{"resultType":"task","taskId":"a","status":"working","requestState":"s"}`, false, true, ""},
		{"modern, task with a result", modern, `{"resultType":"task","taskId":"a","status":"completed","result":{"content":[]}}`, false, true, "carries a result"},
		{"modern, state too long", modern, `{"resultType":"task","taskId":"a","status":"working","requestState":"` + strings.Repeat("s", maxRequestState) + `"}`, false, true, "requestState is longer"},
		{"modern, state not a string", modern, `{"resultType":"task","taskId":"a","status":"working","requestState":{"x":1}}`, false, true, "requestState"},
	} {
		_, isTask, err := c.c.createdTask([]byte(c.result), c.asked)
		if isTask != c.isTask || (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: isTask %v, err %v; want %v, %q", c.name, isTask, err, c.isTask, c.wantErr)
		}
	}
}

// npmEverything is the reference server with a task tool (simulate-research-query, taskSupport
// required), run as users run it (npx -y: downloaded from the npm registry when not cached).
const npmEverything = "@modelcontextprotocol/server-everything@2026.8.31"

// TestTaskServerEverything: simulate-research-query with ambiguous true completes through a
// third-party server's tasks: polled, asked through Elicit while tasks/result is open, answered.
func TestTaskServerEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the npm reference server")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	cfg := config.ServerConfig{Name: "everything", Transport: config.TransportStdio, Command: "npx",
		Args:           []string{"-y", npmEverything, "stdio"},
		StartupTimeout: 240 * time.Second, CallTimeout: 30 * time.Second, Source: "test"}
	var asked []Elicitation
	r := newTestRegistry(t, Options{Elicit: func(ctx context.Context, e Elicitation) ElicitResult {
		asked = append(asked, e)
		if len(e.Fields) != 1 || len(e.Fields[0].Enum) == 0 {
			return ElicitResult{Action: "decline"}
		}
		return ElicitResult{Action: "accept", Content: map[string]any{e.Fields[0].Name: e.Fields[0].Enum[1]}}
	}})
	if st := applyAndWait(t, r, cfg); st["everything"].State != StateReady {
		t.Fatalf("server-everything did not start: %s %s", st["everything"].Error, st["everything"].StderrTail)
	}
	tool, ok := r.Lookup("mcp__everything__simulate-research-query")
	if !ok || tool.TaskSupport != TaskSupportRequired {
		t.Fatalf("simulate-research-query = %+v, %v", tool, ok)
	}
	ups := &taskUpdates{}
	ctx, cancel := context.WithTimeout(WithTaskUpdates(context.Background(), ups.add), 2*time.Minute)
	defer cancel()
	res, err := r.Call(ctx, tool.Name, json.RawMessage(`{"topic":"go","ambiguous":true}`))
	if err != nil || res.IsError || !strings.Contains(res.Text, "# Research Report: go (historical)") {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if len(asked) != 1 || !strings.Contains(asked[0].Message, "multiple interpretations") {
		t.Errorf("asked = %+v", asked)
	}
	got := strings.Join(ups.statuses(), "\n")
	if !strings.Contains(got, "working: Gathering sources...") || !strings.Contains(got, "input_required: ") || ups.last().Status != TaskCompleted {
		t.Errorf("updates:\n%s", got)
	}
}

// TestTaskOutlivesCallTimeout: a task that runs longer than the server's call timeout completes
// (each request of it is bounded, the task is not). Real time: the server completes the task once
// 1.5 s have passed since it was created, five times the 300 ms call timeout.
func TestTaskOutlivesCallTimeout(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			cfg, _ := taskServer(t, e.era, "--task-poll-ms", "1")
			cfg.CallTimeout = 300 * time.Millisecond
			r := newTestRegistry(t, Options{})
			applyAndWait(t, r, cfg)
			res, err := r.Call(context.Background(), "mcp__t__task_slow", json.RawMessage(`{"seconds":1.5}`))
			if err != nil || res.IsError || !strings.HasPrefix(res.Text, "task_slow done after") {
				t.Fatalf("call = %+v, %v", res, err)
			}
		})
	}
}
