package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

// runScript runs one turn of script against tools and gate and returns its events.
func runScript(t *testing.T, opts session.Options, script string) []session.Event {
	t.Helper()
	m := session.NewManager(opts)
	t.Cleanup(m.Close)
	m.UseProvider(sessiontest.Script(t, script))
	rec := newRecorder()
	if _, _, err := m.Start(context.Background(), session.StartParams{Prompt: "go", Mode: permissions.SingleConfirm}, rec.emit); err != nil {
		t.Fatal(err)
	}
	evs := rec.wait(t)
	for _, e := range evs {
		if e.Kind == session.KindError {
			t.Errorf("turn failed: %s", e.Error)
		}
	}
	return evs
}

func countCalls(calls []string, name string) int {
	n := 0
	for _, c := range calls {
		if c == name {
			n++
		}
	}
	return n
}

// A model repeats a failing call: it runs at most twice with the same arguments (also when the
// model only reorders keys or changes white space), the model gets a result saying why, and a
// call with different arguments is a new call.
func TestRetryStormFailingCall(t *testing.T) {
	tools := sessiontest.NewTools().Add("fs", "broken", sessiontest.Fail("disk on fire"))
	script := `reply tool_call id=c1 name=mcp__fs__broken args={"a":1,"b":2}

expect last_tool_result id=c1 ~ "disk on fire"
reply tool_call id=c2 name=mcp__fs__broken args={"a":1,"b":2}

expect last_tool_result id=c2 ~ "disk on fire"
reply tool_call id=c3 name=mcp__fs__broken args={ "b": 2, "a": 1 }

expect last_tool_result id=c3 ~ "failed twice"
reply tool_call id=c4 name=mcp__fs__broken args={"a":1,"b":2}
reply tool_call id=c5 name=mcp__fs__broken args={"a":1,"b":2}

expect last_tool_result id=c4 ~ "failed twice"
expect last_tool_result id=c5 ~ "failed twice"
reply tool_call id=c6 name=mcp__fs__broken args={"a":2,"b":2}

expect last_tool_result id=c6 ~ "disk on fire"
reply text "giving up"
`
	evs := runScript(t, session.Options{Tools: tools, Gate: sessiontest.AllowAll()}, script)
	if n := countCalls(tools.Calls(), "mcp__fs__broken"); n != 3 {
		t.Errorf("broken tool ran %d times, want 3 (twice with the same arguments, once with others)", n)
	}
	for _, e := range evs {
		if e.ToolCall != nil && e.ToolCall.ID == "c3" && e.ToolCall.Approval != session.ApprovalPending {
			if e.ToolCall.Approval != session.ApprovalDenied || e.ToolCall.DecidedBy != session.ByRepeat {
				t.Errorf("c3 event: %+v, want denied by %s", e.ToolCall, session.ByRepeat)
			}
		}
	}
}

// A model repeats a call the user denied, in later steps and twice in parallel: the user is asked
// once; the repeats get a result saying the user already denied it.
func TestRetryStormDeniedCall(t *testing.T) {
	tools := sessiontest.NewTools().Add("fs", "write", sessiontest.Echo)
	gate := sessiontest.DenyTools("mcp__fs__write")
	script := `reply tool_call id=c1 name=mcp__fs__write args={"path":"x"}

expect last_tool_result id=c1 ~ "the user denied it"
reply tool_call id=c2 name=mcp__fs__write args={"path":"x"}
reply tool_call id=c3 name=mcp__fs__write args={"path":"x"}

expect last_tool_result id=c2 ~ "already denied"
expect last_tool_result id=c3 ~ "already denied"
reply tool_call id=c4 name=mcp__fs__write args={"path" : "x"}

expect last_tool_result id=c4 ~ "already denied"
reply tool_call id=c5 name=mcp__fs__write args={"path":"y"}

expect last_tool_result id=c5 ~ "the user denied it"
reply text "ok"
`
	runScript(t, session.Options{Tools: tools, Gate: gate}, script)
	asked := map[string]int{}
	for _, r := range gate.Requests() {
		asked[strings.ReplaceAll(string(r.Arguments), " ", "")]++
	}
	if asked[`{"path":"x"}`] != 1 || asked[`{"path":"y"}`] != 1 {
		t.Errorf("gate asked %v, want each distinct call once", asked)
	}
	if n := countCalls(tools.Calls(), "mcp__fs__write"); n != 0 {
		t.Errorf("denied tool ran %d times", n)
	}
}

// Two identical calls in one response, both denied: asked once (parallel calls with the same key
// wait for the first).
func TestRetryStormParallelDenied(t *testing.T) {
	tools := sessiontest.NewTools().Add("fs", "write", sessiontest.Echo)
	gate := sessiontest.DenyTools("mcp__fs__write")
	script := `reply tool_call id=c1 name=mcp__fs__write args={"path":"x"}
reply tool_call id=c2 name=mcp__fs__write args={"path":"x"}

reply text "ok"
`
	runScript(t, session.Options{Tools: tools, Gate: gate}, script)
	if n := len(gate.Requests()); n != 1 {
		t.Errorf("gate asked %d times for two identical parallel calls, want 1", n)
	}
	// The same with keys reordered and spaced differently in one response: still one prompt.
	gate = sessiontest.DenyTools("mcp__fs__write")
	script = `reply tool_call id=c1 name=mcp__fs__write args={"path":"x","mode":1}
reply tool_call id=c2 name=mcp__fs__write args={"mode":1, "path":"x"}
reply tool_call id=c3 name=mcp__fs__write args={ "mode" : 1 , "path" : "x" }

reply text "ok"
`
	runScript(t, session.Options{Tools: tools, Gate: gate}, script)
	if n := len(gate.Requests()); n != 1 {
		t.Errorf("gate asked %d times for three spellings of one call in one response, want 1", n)
	}
}
