package lsp_test

import (
	"encoding/json"
	"github.com/switchboard-dev/switchboard/host/wire"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
)

type chatResult struct {
	Conversation string `json:"conversation"`
	Turn         string `json:"turn"`
}

// scriptSession starts a session with server "t" and the script provider running script.
func scriptSession(t *testing.T, script string, extra ...any) *hosttest.Env {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "llm.script")
	writeFile(t, path, script)
	opts := initOpts(map[string]any{"t": server()}, append([]any{"provider", map[string]any{"type": "script", "script": path}}, extra...)...)
	return runWith(t, hosttest.Config{InitOptions: opts})
}

func awaitDone(env *hosttest.Env, turn string) []hosttest.Event {
	env.T.Helper()
	st := env.Await("turn "+turn+" done", func(s *hosttest.State) bool {
		for _, e := range s.Events(turn) {
			if e.Kind == "done" {
				return true
			}
		}
		return false
	})
	return st.Events(turn)
}

func TestChatWithToolApproval(t *testing.T) {
	env := scriptSession(t, `reply tool_call id=c1 name=mcp__t__echo args={"text":"from the model"}

expect last_tool_result id=c1 ~ "from the model"
reply text "All done."
`)
	env.Editor.SetResponder(hosttest.Answer("Allow once"))
	var res chatResult
	env.MustCommand(wire.CmdChat, map[string]any{"prompt": "echo something"}, &res)
	if res.Conversation == "" || res.Turn == "" {
		t.Fatalf("chat = %+v", res)
	}
	events := awaitDone(env, res.Turn)
	var kinds []string
	var text strings.Builder
	for _, e := range events {
		kinds = append(kinds, e.Kind)
		if e.Kind == "text" {
			text.WriteString(e.Text)
		}
		if e.Conversation != res.Conversation {
			t.Errorf("event in conversation %q, want %q", e.Conversation, res.Conversation)
		}
	}
	got := strings.Join(kinds, " ")
	if !strings.Contains(got, "toolCall toolCall toolResult") || !strings.HasSuffix(got, "done") {
		t.Errorf("event kinds = %s", got)
	}
	if text.String() != "All done." {
		t.Errorf("text = %q", text.String())
	}
	aps := env.State().Approvals()
	if len(aps) != 1 || aps[0].Turn != res.Turn || aps[0].Tool != "mcp__t__echo" {
		t.Errorf("approvals = %+v", aps)
	}
	// A second turn in the same conversation.
	writeScriptNote := res.Conversation
	if err := env.Command(wire.CmdChat, map[string]any{"conversation": writeScriptNote, "prompt": "again"}, &res); err != nil {
		t.Fatal(err)
	}
	events = awaitDone(env, res.Turn)
	if last := events[len(events)-1]; last.Kind != "done" {
		t.Errorf("second turn ended with %+v", last)
	}
}

func TestChatCancelWhileWaitingForApproval(t *testing.T) {
	env := scriptSession(t, `reply tool_call id=c1 name=mcp__t__echo args={"text":"x"}

reply text "unreached"
`)
	var res chatResult
	env.MustCommand(wire.CmdChat, map[string]any{"prompt": "go"}, &res)
	ap := env.AwaitApproval(1)
	env.MustCommand(wire.CmdCancel, map[string]string{"turn": res.Turn}, nil)
	if r := env.AwaitResolved(ap.ID); r.By != "cancelled" || r.Decision != "deny" {
		t.Errorf("resolved = %+v, want deny by cancelled", r)
	}
	events := awaitDone(env, res.Turn)
	if last := events[len(events)-1]; last.StopReason != "cancelled" {
		t.Errorf("done = %s", last.Raw)
	}
	// Cancelling again (or an unknown turn) is fine; bad arguments are not.
	env.MustCommand(wire.CmdCancel, map[string]string{"turn": res.Turn}, nil)
	if err := env.Command(wire.CmdCancel, map[string]string{}, nil); hosttest.ErrorCode(err) != -32602 {
		t.Errorf("cancel without turn: %v", err)
	}
}

func TestChatBadInput(t *testing.T) {
	env := scriptSession(t, "reply text \"hi\"\n")
	for _, bad := range []any{
		map[string]any{},
		map[string]any{"prompt": "  "},
		map[string]any{"prompt": "x", "mode": "yolo"},
		map[string]any{"prompt": 5},
	} {
		if err := env.Command(wire.CmdChat, bad, nil); hosttest.ErrorCode(err) != -32602 {
			t.Errorf("chat %v: %v, want -32602", bad, err)
		}
	}
}

func TestChatReadsUnsavedBuffer(t *testing.T) {
	env := scriptSession(t, `reply tool_call id=r1 name=read_file args={"path":"notes.txt"}

expect last_tool_result id=r1 ~ "unsaved éé😀 edit"
reply text "ok"
`)
	path := filepath.Join(env.Workspace, "notes.txt")
	writeFile(t, path, "on disk\n")
	uri := hosttest.FileURI(path)
	env.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "text", "version": 1, "text": "unsaved éé😀 X\n"}})
	// Incremental change: replace "X" (after a surrogate pair: UTF-16 column 12) with "edit".
	env.Notify("textDocument/didChange", map[string]any{
		"textDocument": map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{
			"range": map[string]any{"start": map[string]int{"line": 0, "character": 13}, "end": map[string]int{"line": 0, "character": 14}},
			"text":  "edit",
		}},
	})
	var res chatResult
	env.MustCommand(wire.CmdChat, map[string]any{"prompt": "read it"}, &res)
	events := awaitDone(env, res.Turn)
	for _, e := range events {
		if e.Kind == "error" {
			t.Errorf("turn failed: %s", e.Raw)
		}
		if e.Kind == "toolResult" && (e.Result.IsError || !strings.Contains(e.Result.Text, "unsaved éé😀 edit")) {
			t.Errorf("read_file result = %s", e.Raw)
		}
	}
}

func TestChatEditGoesThroughApplyEdit(t *testing.T) {
	env := scriptSession(t, `reply tool_call id=e1 name=edit_file args={"path":"a.txt","content":"new text\n"}

reply text "edited"
`, "mode", "always-allow")
	writeFile(t, filepath.Join(env.Workspace, "a.txt"), "old\n")
	edits := make(chan json.RawMessage, 1)
	env.Editor.SetApplyEdit(func(p json.RawMessage) bool { edits <- p; return true })
	var res chatResult
	env.MustCommand(wire.CmdChat, map[string]any{"prompt": "edit"}, &res)
	awaitDone(env, res.Turn)
	select {
	case p := <-edits:
		if !strings.Contains(string(p), `"newText":"new text\n"`) || !strings.Contains(string(p), "a.txt") {
			t.Errorf("applyEdit params = %s", p)
		}
	default:
		t.Errorf("no workspace/applyEdit")
	}
}
