package lsp_test

import (
	"encoding/json"
	"github.com/switchboard-dev/switchboard/host/wire"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
)

// toolProgress is one $/progress of a tool call, decoded.
type toolProgress struct {
	Token json.RawMessage `json:"token"`
	Value struct {
		Kind        string  `json:"kind"`
		Title       string  `json:"title"`
		Cancellable bool    `json:"cancellable"`
		Message     string  `json:"message"`
		Percentage  *uint32 `json:"percentage"`
	} `json:"value"`
}

// progressOf returns the $/progress notifications whose begin has this title, in order.
func progressOf(s *hosttest.State, title string) []toolProgress {
	var all []toolProgress
	for _, raw := range s.Params(wire.MethodProgress) {
		var p toolProgress
		if json.Unmarshal(raw, &p) == nil {
			all = append(all, p)
		}
	}
	var token string
	var out []toolProgress
	for _, p := range all {
		if p.Value.Kind == "begin" && p.Value.Title == title {
			token = string(p.Token)
		}
		if token != "" && string(p.Token) == token {
			out = append(out, p)
		}
	}
	return out
}

func awaitProgress(env *hosttest.Env, title string, cond func([]toolProgress) bool) []toolProgress {
	env.T.Helper()
	st := env.Await("progress of "+title, func(s *hosttest.State) bool { return cond(progressOf(s, title)) })
	return progressOf(st, title)
}

// lastIs: the latest notification is of this kind ("" = begin or report) with this message.
func lastIs(kind, msg string) func([]toolProgress) bool {
	return func(ps []toolProgress) bool {
		if len(ps) == 0 {
			return false
		}
		v := ps[len(ps)-1].Value
		return (v.Kind == kind || kind == "" && v.Kind != "end") && v.Message == msg
	}
}

// TestToolCallProgress: a server's progress on a tool call reaches the editor as work-done
// progress (a token the host creates, or the executeCommand's workDoneToken), and cancelling that
// progress stops only that call, which answers with an error result.
func TestToolCallProgress(t *testing.T) {
	const title = "Switchboard: mcp__t__slow"
	for _, tc := range []struct {
		name      string
		editorTok string // workDoneToken sent with executeCommand ("" = none)
	}{
		{"created by the host", ""},
		{"the editor's workDoneToken", `"wd-1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := runWith(t, hosttest.Config{WorkDoneProgress: true})
			awaitProgress(env, "Switchboard", lastIs("end", "Connected 1 MCP server")) // startup progress, out of the way
			params := map[string]any{
				"command":   wire.CmdCallTool,
				"arguments": []any{map[string]any{"name": "mcp__t__slow", "arguments": map[string]any{"seconds": 60, "steps": 5}, "mode": "always-allow"}},
			}
			if tc.editorTok != "" {
				params["workDoneToken"] = json.RawMessage(tc.editorTok)
			}
			if err := env.Editor.RawCall(`"call"`, wire.MethodExecuteCommand, params); err != nil {
				t.Fatal(err)
			}
			ps := awaitProgress(env, title, lastIs("", "step 5 of 5")) // reports coalesce: maybe in the begin
			begin := ps[0].Value
			if !begin.Cancellable || begin.Percentage == nil {
				t.Errorf("begin = %+v, want cancellable with a percentage", begin)
			}
			if last := ps[len(ps)-1].Value; last.Percentage == nil || *last.Percentage != 100 {
				t.Errorf("last = %+v, want 100%%", last)
			}
			creates := env.State().RequestParams(wire.MethodWorkDoneProgressNew)
			if tc.editorTok != "" {
				if string(ps[0].Token) != tc.editorTok {
					t.Errorf("token = %s, want the editor's %s", ps[0].Token, tc.editorTok)
				}
				if len(creates) != 1 { // the startup progress's only
					t.Errorf("%d workDoneProgress/create requests, want 1 (startup only)", len(creates))
				}
			} else if len(creates) != 2 || !strings.Contains(string(creates[1]), string(ps[0].Token)) {
				t.Errorf("workDoneProgress/create requests %s; want the second to create %s", creates, ps[0].Token)
			}

			env.Notify(wire.MethodWorkDoneProgressCancel, map[string]any{"token": ps[0].Token})
			r := env.AwaitResponse(`"call"`)
			var res toolResult
			if r.Code != 0 || json.Unmarshal(r.Result, &res) != nil || !res.IsError || res.Text != "the user cancelled this tool call" {
				t.Errorf("callTool answered %+v; want an error result saying the user cancelled it", r)
			}
			awaitProgress(env, title, lastIs("end", "cancelled"))
			// The server stays usable.
			var echo toolResult
			env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__echo", "arguments": map[string]any{"text": "hi"}, "mode": "always-allow"}, &echo)
			if echo.IsError || echo.Text != "hi" {
				t.Errorf("echo after the cancel = %+v", echo)
			}
		})
	}
}

// TestToolCallProgressNeedsSupport: without window.workDoneProgress and without a token, nobody
// can see a call's progress, so the host asks the server for none (no _meta.progressToken: the
// slow tool then skips its steps; a token cost server-everything about 100 µs per call) and sends
// no $/progress; the call still answers.
func TestToolCallProgressNeedsSupport(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	var res toolResult
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__slow", "arguments": map[string]any{"seconds": 0, "steps": 3}, "mode": "always-allow"}, &res)
	if res.IsError || res.Text != "slept 0s" {
		t.Fatalf("callTool = %+v; want the answer of a call made without a progress token", res)
	}
	env.MustCommand(wire.CmdServers, nil, nil) // one more round trip
	if n := len(env.State().Params(wire.MethodProgress)); n != 0 {
		t.Errorf("%d $/progress notifications to a client without workDoneProgress", n)
	}
	if n := len(env.State().RequestParams(wire.MethodWorkDoneProgressNew)); n != 0 {
		t.Errorf("%d workDoneProgress/create requests to a client without workDoneProgress", n)
	}
}

// TestChatToolCallProgress: a chat turn's tool call shows its progress too, and cancelling the
// progress stops that call only: the model gets an error result and the turn goes on.
func TestChatToolCallProgress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llm.script")
	writeFile(t, path, `reply tool_call id=c1 name=mcp__t__slow args={"seconds":60,"steps":3}

expect last_tool_result id=c1 ~ "the user cancelled this tool call"
reply text "Stopped."
`)
	env := runWith(t, hosttest.Config{WorkDoneProgress: true, InitOptions: initOpts(map[string]any{"t": server()},
		"provider", map[string]any{"type": "script", "script": path})})
	var res chatResult
	env.MustCommand(wire.CmdChat, map[string]any{"prompt": "wait a bit", "mode": "always-allow"}, &res)
	ps := awaitProgress(env, "Switchboard: mcp__t__slow", lastIs("", "step 3 of 3"))
	env.Notify(wire.MethodWorkDoneProgressCancel, map[string]any{"token": ps[0].Token})
	var text strings.Builder
	for _, e := range awaitDone(env, res.Turn) {
		if e.Kind == "text" {
			text.WriteString(e.Text)
		}
		if e.Kind == "error" {
			t.Errorf("turn error: %+v", e)
		}
	}
	if text.String() != "Stopped." {
		t.Errorf("text = %q, want the turn to go on after the cancelled call", text.String())
	}
}
