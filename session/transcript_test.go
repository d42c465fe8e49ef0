package session_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// watchdog bounds how long a test waits for a turn; it is a hang guard, not a timing assertion.
const watchdog = 20 * time.Second

// env is what a transcript case configures before the manager is built.
type env struct {
	tools   *sessiontest.Tools
	gate    *sessiontest.Gate
	ws      *sessiontest.Workspace
	opts    session.Options
	mode    permissions.Mode
	waitFor []chan struct{} // with cancel: the first turn is cancelled once all are closed
	cancel  bool
}

var transcriptCases = map[string]func(t *testing.T, e *env){
	// The basic loop: a tool call, its result back to the model, a final answer; server
	// instructions in the system prompt.
	"tool_loop": func(t *testing.T, e *env) {
		e.tools.Add("fs", "list", sessiontest.Text("a.go\nb.go\n"))
		e.tools.SetInstructions("fs", "Paths are relative to the repository root.")
	},
	// Three calls in one response: they run in parallel (the barrier only opens when all three
	// run at once) and their results are appended in call order.
	"parallel_calls": func(t *testing.T, e *env) {
		b := sessiontest.Barrier(3)
		e.tools.Add("fs", "one", b("first"))
		e.tools.Add("fs", "two", b("second"))
		e.tools.Add("fs", "three", b("third"))
	},
	// The user denies a call: the model gets a result saying so, the tool is never called.
	"denial": func(t *testing.T, e *env) {
		e.tools.Add("fs", "write", sessiontest.Echo)
		e.tools.Add("fs", "list", sessiontest.Text("a.go"))
		e.gate = sessiontest.DenyTools("mcp__fs__write")
		t.Cleanup(func() {
			if got := e.tools.Calls(); slices.Contains(got, "mcp__fs__write") {
				t.Errorf("denied tool was called: %v", got)
			}
		})
	},
	// An unknown tool and a failing tool become error results; the turn goes on.
	"unknown_tool": func(t *testing.T, e *env) {
		e.tools.Add("fs", "broken", sessiontest.Fail("disk on fire"))
	},
	// A big result is cut to the token budget (here 10 tokens = 40 bytes) and paged with
	// read_tool_result until its end.
	"cap_and_paging": func(t *testing.T, e *env) {
		e.opts.ResultTokens = 10
		e.tools.Add("db", "dump", sessiontest.Text(strings.Repeat("0123456789", 9)+"END"))
	},
	// The iteration cap (2 here): after two rounds of tool calls, one last call without tools; tool
	// calls in its answer are not run but still get results.
	"iteration_cap": func(t *testing.T, e *env) {
		e.opts.MaxSteps = 2
		e.tools.Add("fs", "list", sessiontest.Text("a.go"))
	},
	// Cancel while a tool runs: the tool's ctx ends, every call gets a result, done "cancelled";
	// the next turn in the same conversation works on a complete history.
	"cancel_mid_tool": func(t *testing.T, e *env) {
		started, listed := make(chan struct{}), make(chan struct{})
		e.waitFor, e.cancel = []chan struct{}{started, listed}, true
		e.tools.Add("fs", "slow", sessiontest.Block(started))
		e.tools.Add("fs", "list", func(context.Context, json.RawMessage) (mcpbridge.Result, error) {
			defer close(listed)
			return mcpbridge.Result{Text: "a.go"}, nil
		})
	},
	// Two turns in one conversation: the second sees the first's history.
	"continue_conversation": func(t *testing.T, e *env) {},
	// allowlist-only mode: an MCP tool is denied by mode without asking.
	"mode_allowlist_only": func(t *testing.T, e *env) {
		e.mode = permissions.AllowlistOnly
		e.tools.Add("fs", "list", sessiontest.Text("a.go"))
	},
	// An expectation of the script that is not met: an error event naming the step, then done.
	"script_unmet": func(t *testing.T, e *env) {},
}

func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txtar")
		seen[name] = true
		setup, ok := transcriptCases[name]
		if !ok {
			t.Errorf("%s: no case in transcriptCases", f)
			continue
		}
		t.Run(name, func(t *testing.T) { runTranscript(t, f, setup) })
	}
	for name := range transcriptCases {
		if !seen[name] {
			t.Errorf("case %s has no testdata/%s.txtar", name, name)
		}
	}
}

func runTranscript(t *testing.T, path string, setup func(*testing.T, *env)) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ar := parseTxtar(string(data))
	scriptText, _ := ar.get("llm.script")
	prompts, _ := ar.get("prompt")
	e := &env{tools: sessiontest.NewTools(), gate: sessiontest.AllowAll(), ws: &sessiontest.Workspace{Dirs: []string{t.TempDir()}}}
	setup(t, e)
	var warnMu sync.Mutex
	var warnings []string
	e.opts.Tools, e.opts.Gate, e.opts.Workspace = e.tools, e.gate, e.ws
	e.opts.Warn = func(s string) { warnMu.Lock(); warnings = append(warnings, s); warnMu.Unlock() }
	m := session.NewManager(e.opts)
	t.Cleanup(m.Close)
	m.UseProvider(sessiontest.Script(t, scriptText))

	var out strings.Builder
	conv := ""
	for i, prompt := range strings.Split(strings.TrimSpace(prompts), "\n") {
		fmt.Fprintf(&out, "turn %d: %q\n", i+1, prompt)
		rec := newRecorder()
		c, turn, err := m.Start(context.Background(), session.StartParams{Conversation: conv, Prompt: prompt, Mode: e.mode}, rec.emit)
		if err != nil {
			t.Fatal(err)
		}
		conv = c
		if e.cancel && i == 0 {
			for _, ch := range e.waitFor {
				select {
				case <-ch:
				case <-time.After(watchdog):
					t.Fatal("tool did not start")
				}
			}
			if !m.Cancel(turn) {
				t.Fatal("Cancel returned false for a running turn")
			}
		}
		evs := rec.wait(t)
		for _, ev := range evs {
			if ev.Turn != turn || ev.Conversation != conv {
				t.Errorf("event %+v: want turn %s conversation %s", ev, turn, conv)
			}
			if _, err := json.Marshal(ev); err != nil {
				t.Errorf("event does not marshal: %v", err)
			}
		}
		out.WriteString(renderEvents(evs))
	}
	hist, ok := m.History(conv)
	if !ok {
		t.Fatal("no history")
	}
	if err := session.ValidateMessages(hist); err != nil {
		t.Errorf("history invariant: %v", err)
	}
	out.WriteString("history:\n")
	for _, msg := range hist {
		out.WriteString("  " + renderMessage(msg) + "\n")
	}
	for _, w := range warnings {
		fmt.Fprintf(&out, "warning: %s\n", w)
	}
	got := out.String()
	if *update {
		ar.set("transcript", got)
		if err := os.WriteFile(path, ar.format(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, _ := ar.get("transcript")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transcript mismatch (-want +got; rerun with -update to accept):\n%s", diff)
	}
}

// recorder collects a turn's events until done.
type recorder struct {
	mu     sync.Mutex
	events []session.Event
	done   chan struct{}
}

func newRecorder() *recorder { return &recorder{done: make(chan struct{})} }

func (r *recorder) emit(e session.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	if e.Kind == session.KindDone {
		close(r.done)
	}
}

func (r *recorder) wait(t testing.TB) []session.Event {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(watchdog):
		t.Fatal("turn did not end")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func short(s string, n int) string {
	if len(s) > n {
		return fmt.Sprintf("%q...(%d bytes)", s[:n], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// renderEvents renders events one per line. Consecutive text deltas are merged (with their
// count). Tool events of parallel calls interleave at random, so each run of tool events is
// stably sorted by call (order of the pending events); each call's own events keep their order.
func renderEvents(evs []session.Event) string {
	var b strings.Builder
	for i := 0; i < len(evs); {
		e := evs[i]
		switch e.Kind {
		case session.KindText:
			var s strings.Builder
			n := 0
			for ; i < len(evs) && evs[i].Kind == session.KindText; i++ {
				s.WriteString(evs[i].Text)
				n++
			}
			fmt.Fprintf(&b, "  text %q (%d deltas)\n", s.String(), n)
			continue
		case session.KindToolCall, session.KindToolResult:
			j := i
			order := map[string]int{}
			for ; j < len(evs) && (evs[j].Kind == session.KindToolCall || evs[j].Kind == session.KindToolResult); j++ {
				id := eventID(evs[j])
				if _, ok := order[id]; !ok {
					order[id] = len(order)
				}
			}
			run := slices.Clone(evs[i:j])
			slices.SortStableFunc(run, func(a, b session.Event) int { return order[eventID(a)] - order[eventID(b)] })
			for _, r := range run {
				if tc := r.ToolCall; tc != nil {
					fmt.Fprintf(&b, "  toolCall %s %s %s", tc.ID, tc.Name, tc.Approval)
					if tc.Approval == session.ApprovalPending {
						fmt.Fprintf(&b, " %s", tc.Arguments)
					} else {
						fmt.Fprintf(&b, " by=%s", tc.DecidedBy)
					}
					b.WriteString("\n")
				} else {
					res := r.Result
					fmt.Fprintf(&b, "  toolResult %s %s isError=%v truncated=%v bytes=%d %s\n", res.ID, res.Name, res.IsError, res.Truncated, res.Bytes, short(res.Text, 100))
				}
			}
			i = j
			continue
		case session.KindDone:
			fmt.Fprintf(&b, "  done %s in=%d out=%d\n", e.StopReason, e.Usage.InputTokens, e.Usage.OutputTokens)
		case session.KindError:
			fmt.Fprintf(&b, "  error %q\n", e.Error)
		default:
			fmt.Fprintf(&b, "  ?? %+v\n", e)
		}
		i++
	}
	return b.String()
}

func eventID(e session.Event) string {
	if e.ToolCall != nil {
		return e.ToolCall.ID
	}
	return e.Result.ID
}

func renderMessage(m session.Message) string {
	switch m.Role {
	case "tool":
		s := fmt.Sprintf("tool %s %s", m.ToolCallID, m.ToolName)
		if m.IsError {
			s += " (error)"
		}
		return s + " " + short(m.Text, 400)
	case "assistant":
		s := "assistant " + short(m.Text, 200)
		for _, c := range m.ToolCalls {
			s += fmt.Sprintf("\n    call %s %s %s", c.ID, c.Name, c.Args)
		}
		return s
	}
	return string(m.Role) + " " + short(m.Text, 200)
}
