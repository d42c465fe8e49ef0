package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/lsp"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// callAsync runs switchboard.callTool in the background.
func callAsync(env *hosttest.Env, name string, args any, mode string) <-chan callOutcome {
	ch := make(chan callOutcome, 1)
	go func() {
		p := map[string]any{"name": name, "arguments": args}
		if mode != "" {
			p["mode"] = mode
		}
		var r toolResult
		err := env.Command(wire.CmdCallTool, p, &r)
		ch <- callOutcome{r, err}
	}()
	return ch
}

type callOutcome struct {
	res toolResult
	err error
}

func await(t *testing.T, ch <-chan callOutcome) callOutcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-context.Background().Done():
	}
	return callOutcome{}
}

func TestApprovalAnswers(t *testing.T) {
	for _, tc := range []struct {
		title, decision string
		allowed         bool
		entry           string // allowlist entry written
	}{
		{"Allow once", "once", true, ""},
		{"Allow tool", "always", true, "mcp__t__echo"},
		{"Allow server", "server", true, "mcp__t__*"},
		{"Deny", "deny", false, ""},
	} {
		t.Run(tc.decision, func(t *testing.T) {
			env := runWith(t, hosttest.Config{})
			env.Editor.SetResponder(hosttest.Answer(tc.title))
			out := <-callAsync(env, "mcp__t__echo", map[string]any{"text": "hello"}, "")
			if out.err != nil {
				t.Fatal(out.err)
			}
			if out.res.IsError == tc.allowed {
				t.Errorf("result = %+v, allowed want %v", out.res, tc.allowed)
			}
			if tc.allowed && out.res.Text != "hello" {
				t.Errorf("text = %q", out.res.Text)
			}
			st := env.State()
			prompts := st.RequestParams("window/showMessageRequest")
			if len(prompts) != 1 {
				t.Fatalf("%d prompts, want 1", len(prompts))
			}
			var p hosttest.ShowMessageRequestParams
			json.Unmarshal(prompts[0], &p)
			if p.Type != 2 || !strings.HasPrefix(p.Message, `Allow mcp__t__echo? {"text":"hello"}`) {
				t.Errorf("prompt = %+v", p)
			}
			var titles []string
			for _, a := range p.Actions {
				titles = append(titles, a.Title)
			}
			if strings.Join(titles, "|") != "Allow once|Allow tool|Allow server|Deny" {
				t.Errorf("actions = %v", titles)
			}
			aps := st.Approvals()
			if len(aps) != 1 || aps[0].Tool != "mcp__t__echo" || aps[0].Server != "t" || aps[0].Mode != "single-confirm" || string(aps[0].Arguments) != `{"text":"hello"}` {
				t.Errorf("approvalRequested = %+v", aps)
			}
			// The prompt says which approval it asks, for an editor that answers it later by
			// command (never by matching the message: a tool name can hold another's).
			var about struct {
				Switchboard wire.PromptAbout `json:"switchboard"`
			}
			json.Unmarshal(prompts[0], &about)
			if about.Switchboard.Approval != aps[0].ID || aps[0].ID == "" {
				t.Errorf("prompt's switchboard.approval = %q, want the approval's id %q: %s", about.Switchboard.Approval, aps[0].ID, prompts[0])
			}
			r := env.AwaitResolved(aps[0].ID)
			if r.Decision != tc.decision || r.By != "user" {
				t.Errorf("approvalResolved = %+v", r)
			}
			allow := readFile(t, filepath.Join(env.ConfigDir, "allow_tool"))
			if tc.entry != "" && !strings.Contains(allow, tc.entry) {
				t.Errorf("allowlist %q lacks %q", allow, tc.entry)
			}
			if tc.entry == "" && strings.Contains(allow, "mcp__") {
				t.Errorf("allowlist %q changed", allow)
			}
		})
	}
}

func TestDismissedThenCodeAction(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	env.Editor.SetResponder(hosttest.Answer("")) // null: dismissed
	done := callAsync(env, "mcp__t__echo", map[string]any{"text": "x"}, "")
	ap := env.AwaitApproval(1)
	env.Await("prompt answered null", func(s *hosttest.State) bool { return len(s.RequestParams("window/showMessageRequest")) == 1 })

	// Still pending.
	var pending []hosttest.Approval
	env.MustCommand(wire.CmdApprovals, nil, &pending)
	if len(pending) != 1 || pending[0].ID != ap.ID {
		t.Fatalf("approvals = %+v, want %s pending", pending, ap.ID)
	}
	var actions []struct {
		Title   string `json:"title"`
		Kind    string `json:"kind"`
		Command struct {
			Command   string            `json:"command"`
			Arguments []json.RawMessage `json:"arguments"`
		} `json:"command"`
	}
	env.Call("textDocument/codeAction", map[string]any{
		"textDocument": map[string]string{"uri": hosttest.FileURI(filepath.Join(env.Workspace, "a.go"))},
		"range":        map[string]any{"start": map[string]int{"line": 0, "character": 0}, "end": map[string]int{"line": 0, "character": 0}},
		"context":      map[string]any{"diagnostics": []any{}},
	}, &actions)
	if len(actions) != 4 {
		t.Fatalf("%d code actions, want 4: %+v", len(actions), actions)
	}
	// Each title names the call's arguments (two pending calls of one tool differ) and what the
	// grant covers: "Allow server" names the server.
	wantTitles := []string{`Allow once: mcp__t__echo {"text":"x"}`, `Allow tool: mcp__t__echo {"text":"x"}, and its later calls`,
		`Allow server: mcp__t__echo {"text":"x"}, and every tool of server 't'`, `Deny: mcp__t__echo {"text":"x"}`}
	for i, a := range actions {
		if a.Title != wantTitles[i] || a.Kind != "quickfix" || a.Command.Command != "switchboard.approve" {
			t.Errorf("action %d = %+v", i, a)
		}
	}
	// Run the first action's command, as the editor does.
	var arg map[string]string
	json.Unmarshal(actions[0].Command.Arguments[0], &arg)
	if arg["id"] != ap.ID || arg["decision"] != "once" {
		t.Errorf("action argument = %v", arg)
	}
	env.MustCommand(actions[0].Command.Command, arg, nil)
	out := <-done
	if out.err != nil || out.res.IsError || out.res.Text != "x" {
		t.Fatalf("callTool = %+v, %v", out.res, out.err)
	}
	if r := env.AwaitResolved(ap.ID); r.By != "user" || r.Decision != "once" {
		t.Errorf("resolved = %+v", r)
	}
	// No approvals left: no code actions, and approve again is InvalidParams.
	env.Call("textDocument/codeAction", map[string]any{"textDocument": map[string]string{"uri": "file:///x"}, "range": map[string]any{}, "context": map[string]any{}}, &actions)
	if len(actions) != 0 {
		t.Errorf("code actions after resolution: %d", len(actions))
	}
	if err := env.Command(wire.CmdApprove, arg, nil); hosttest.ErrorCode(err) != -32602 {
		t.Errorf("approve on a resolved id: %v, want -32602", err)
	}
}

func TestDismissedThenApprove(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	done := callAsync(env, "mcp__t__echo", map[string]any{"text": "x"}, "")
	ap := env.AwaitApproval(1)
	env.MustCommand(wire.CmdApprove, map[string]string{"id": ap.ID, "decision": "deny"}, nil)
	out := <-done
	if out.err != nil || !out.res.IsError || !strings.Contains(out.res.Text, "denied") {
		t.Fatalf("callTool = %+v, %v; want a denied result", out.res, out.err)
	}
	for _, bad := range []map[string]string{
		{"id": ap.ID, "decision": "once"},      // resolved
		{"id": "nope", "decision": "once"},     // unknown
		{"id": ap.ID, "decision": "sometimes"}, // bad decision
		{"decision": "once"},                   // no id
	} {
		if err := env.Command(wire.CmdApprove, bad, nil); hosttest.ErrorCode(err) != -32602 {
			t.Errorf("approve %v: %v, want -32602", bad, err)
		}
	}
}

func TestLatePromptReplyIgnored(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	release := make(chan struct{})
	env.Editor.SetResponder(func(ctx context.Context, p hosttest.ShowMessageRequestParams) string {
		<-release
		return "Deny" // arrives after switchboard.approve: ignored
	})
	done := callAsync(env, "mcp__t__echo", map[string]any{"text": "late"}, "")
	ap := env.AwaitApproval(1)
	env.Await("prompt sent", func(s *hosttest.State) bool { return len(s.RequestParams("window/showMessageRequest")) == 1 })
	env.MustCommand(wire.CmdApprove, map[string]string{"id": ap.ID, "decision": "once"}, nil)
	out := <-done
	close(release)
	if out.err != nil || out.res.IsError {
		t.Fatalf("callTool = %+v, %v", out.res, out.err)
	}
	// One more round trip so the late reply has been read; still one resolution.
	env.MustCommand(wire.CmdServers, nil, nil)
	if rs := env.State().Resolutions(); len(rs) != 1 || rs[0].Decision != "once" {
		t.Errorf("resolutions = %+v", rs)
	}
}

func TestApprovalTimeout(t *testing.T) {
	env := runWith(t, hosttest.Config{InitOptions: initOpts(map[string]any{"t": server()}, "approvalTimeoutSeconds", 0.2)})
	out := <-callAsync(env, "mcp__t__echo", map[string]any{"text": "x"}, "")
	if out.err != nil || !out.res.IsError {
		t.Fatalf("callTool = %+v, %v; want denied", out.res, out.err)
	}
	ap := env.AwaitApproval(1)
	if r := env.AwaitResolved(ap.ID); r.By != "timeout" || r.Decision != "deny" {
		t.Errorf("resolved = %+v, want deny by timeout", r)
	}
}

// TestApprovalAtTheTimeout answers every prompt at once while the approval timeout is a
// millisecond, so the answer and the timeout race. Whichever wins, switchboard/approvalResolved and
// the call's outcome must agree: "once by user" runs the tool, "deny by timeout" does not.
func TestApprovalAtTheTimeout(t *testing.T) {
	env := runWith(t, hosttest.Config{InitOptions: initOpts(map[string]any{"t": server()}, "approvalTimeoutSeconds", 0.001)})
	env.Editor.SetResponder(hosttest.Answer(wire.TitleAllowOnce))
	counts := map[string]int{}
	for i := 1; i <= 200; i++ {
		out := <-callAsync(env, "mcp__t__echo", map[string]any{"text": "x"}, "")
		if out.err != nil {
			t.Fatal(out.err)
		}
		ap := env.AwaitApproval(i)
		r := env.AwaitResolved(ap.ID)
		counts[r.Decision+" by "+r.By]++
		switch {
		case r.Decision == "once" && r.By == "user":
			if out.res.IsError {
				t.Errorf("call %d: approvalResolved says once by user, but the call was denied: %q", i, out.res.Text)
			}
		case r.Decision == "deny" && r.By == "timeout":
			if !out.res.IsError {
				t.Errorf("call %d: approvalResolved says denied by timeout, but the call ran: %q", i, out.res.Text)
			}
		default:
			t.Errorf("call %d: resolved %+v", i, r)
		}
	}
	t.Logf("outcomes: %v", counts)
}

func TestCancelRequestDenies(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	if err := env.Editor.RawCall(`"c1"`, "workspace/executeCommand", map[string]any{
		"command": wire.CmdCallTool, "arguments": []any{map[string]any{"name": "mcp__t__echo", "arguments": map[string]any{}}},
	}); err != nil {
		t.Fatal(err)
	}
	ap := env.AwaitApproval(1)
	env.Notify("$/cancelRequest", map[string]any{"id": "c1"})
	if r := env.AwaitResponse(`"c1"`); r.Code != -32800 {
		t.Errorf("cancelled callTool answered %+v, want -32800", r)
	}
	if r := env.AwaitResolved(ap.ID); r.By != "cancelled" || r.Decision != "deny" {
		t.Errorf("resolved = %+v, want deny by cancelled", r)
	}
}

func TestEditorGoneDenies(t *testing.T) {
	events := eventsPath(t)
	env := runWith(t, hosttest.Config{Env: map[string]string{"SWITCHBOARD_EVENTS": events}})
	callAsync(env, "mcp__t__echo", map[string]any{"text": "x"}, "")
	ap := env.AwaitApproval(1)
	env.Editor.Close()
	if err := env.Served(); !errors.Is(err, lsp.ErrDisconnected) {
		t.Fatal(err)
	}
	log := readFile(t, events)
	if !strings.Contains(log, `"by":"disconnect","decision":"deny","id":"`+ap.ID+`"`) {
		t.Errorf("events file has no disconnect resolution for %s:\n%s", ap.ID, log)
	}
}

func TestApproveWhileCallWaits(t *testing.T) {
	// Two calls wait at the gate at once; codeAction, approvals and approve are answered meanwhile.
	env := runWith(t, hosttest.Config{})
	a := callAsync(env, "mcp__t__echo", map[string]any{"text": "a"}, "")
	env.AwaitApproval(1)
	b := callAsync(env, "mcp__t__echo", map[string]any{"text": "b"}, "")
	env.AwaitApproval(2)
	var pending []hosttest.Approval
	env.MustCommand(wire.CmdApprovals, nil, &pending)
	if len(pending) != 2 {
		t.Fatalf("pending = %+v", pending)
	}
	var actions []json.RawMessage
	env.Call("textDocument/codeAction", map[string]any{"textDocument": map[string]string{"uri": "file:///x"}, "range": map[string]any{}, "context": map[string]any{}}, &actions)
	if len(actions) != 8 {
		t.Errorf("%d code actions, want 8", len(actions))
	}
	env.MustCommand(wire.CmdApprove, map[string]string{"id": pending[1].ID, "decision": "once"}, nil)
	if out := <-b; out.res.Text != "b" {
		t.Errorf("b = %+v %v", out.res, out.err)
	}
	env.MustCommand(wire.CmdApprove, map[string]string{"id": pending[0].ID, "decision": "deny"}, nil)
	if out := <-a; !out.res.IsError {
		t.Errorf("a = %+v %v", out.res, out.err)
	}
}

func TestArgumentPreviewIsSafe(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	env.Editor.SetResponder(hosttest.Answer("Deny"))
	long := strings.Repeat("x", 500) + "\u202e\n"
	<-callAsync(env, "mcp__t__echo", map[string]any{"text": long, "ctl": "a\u0007b"}, "")
	var p hosttest.ShowMessageRequestParams
	json.Unmarshal(env.State().RequestParams("window/showMessageRequest")[0], &p)
	if strings.ContainsAny(p.Message, "\n\u0007\u202e") {
		t.Errorf("prompt contains raw control characters: %q", p.Message)
	}
	if n := len([]rune(p.Message)); n > 300 {
		t.Errorf("prompt is %d characters long", n)
	}
}

// auditEntries reads the audit log's lines for tool.
func auditEntries(t *testing.T, path, tool string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil && e["tool"] == tool {
			out = append(out, e)
		}
	}
	return out
}

// TestNoAnswerIsNotAuditedAsUser: a call waiting at the gate when the editor goes away, or when the
// host shuts down, is denied and audited as by disconnect or shutdown, never by user.
func TestNoAnswerIsNotAuditedAsUser(t *testing.T) {
	for _, tc := range []struct {
		name, by string
		end      func(env *hosttest.Env)
	}{
		{"editor gone", "disconnect", func(env *hosttest.Env) { env.Editor.Close() }},
		{"shutdown", "shutdown", func(env *hosttest.Env) {
			env.Call("shutdown", nil, nil)
			env.Notify("exit", nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := runWith(t, hosttest.Config{})
			callAsync(env, "mcp__t__echo", map[string]any{"text": "x"}, "")
			env.AwaitApproval(1)
			tc.end(env)
			if err := env.Served(); err != nil && !errors.Is(err, lsp.ErrDisconnected) {
				t.Fatal(err)
			}
			got := auditEntries(t, env.Options.AuditPath, "mcp__t__echo")
			if len(got) != 1 || got[0]["by"] != tc.by || got[0]["decision"] != "deny" || got[0]["answer"] != nil {
				t.Errorf("audit entries = %v; want one deny by %s", got, tc.by)
			}
		})
	}
}
