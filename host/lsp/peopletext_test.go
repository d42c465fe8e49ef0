package lsp_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/wire"
)

type personResult struct {
	IsError bool   `json:"isError"`
	Text    string `json:"text"`
	Summary string `json:"summary"`
}

// TestPeopleTextForFailedServer: calling a tool of a server that failed tells the person why in
// one sentence with what to do, not "Unknown tool"; the model's text is unchanged.
func TestPeopleTextForFailedServer(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(map[string]any{"everything": server("--exit-at-start")})})
	env.AwaitServer("everything", "failed")
	var res personResult
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__everything__echo", "arguments": map[string]string{"text": "x"}}, &res)
	if !res.IsError || res.Text != `{"error":"Unknown tool: mcp__everything__echo"}` {
		t.Errorf("model text = %+v", res)
	}
	if !strings.HasPrefix(res.Summary, "Server 'everything' is not running (process exited") || !strings.HasSuffix(res.Summary, "; reconnect it.") {
		t.Errorf("summary = %q", res.Summary)
	}
}

// TestPeopleTextForDenial: a denial reads "You denied ..." for the person; the model keeps its
// "Do not retry it unless the user asks." A tool that ran has no summary.
func TestPeopleTextForDenial(t *testing.T) {
	env := runWith(t, hosttest.Config{Responder: hosttest.Answer("Deny")})
	var res personResult
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__echo", "arguments": map[string]string{"text": "x"}}, &res)
	if !strings.Contains(res.Text, "Do not retry it unless the user asks.") || res.Summary != "You denied mcp__t__echo." {
		t.Errorf("denied: %+v", res)
	}
	env.Editor.SetResponder(hosttest.Answer("Allow once"))
	res = personResult{}
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__echo", "arguments": map[string]string{"text": "x"}}, &res)
	if res.IsError || res.Summary != "" {
		t.Errorf("allowed: %+v", res)
	}
}

// TestChatSaysWhichGrant: the chat's toolCall events say which grant allowed a call (once, always,
// the whole server), not only "allowed (user)"; a denied call's result has a sentence for people.
func TestChatSaysWhichGrant(t *testing.T) {
	env := scriptSession(t, `reply tool_call id=c1 name=mcp__t__echo args={"text":"a"}

reply tool_call id=c2 name=mcp__t__echo args={"text":"b"}

reply tool_call id=c3 name=mcp__t__fail args={}

reply tool_call id=c4 name=mcp__t__echo args={"text":"d"}

reply text "done"
`)
	answers := []string{"Allow once", "Allow tool", "Allow server"}
	var mu sync.Mutex
	n := 0
	env.Editor.SetResponder(func(context.Context, hosttest.ShowMessageRequestParams) string {
		mu.Lock()
		defer mu.Unlock()
		a := answers[min(n, len(answers)-1)]
		n++
		return a
	})
	var res chatResult
	env.MustCommand(wire.CmdChat, map[string]any{"prompt": "go"}, &res)
	var labels, summaries []string
	for _, e := range awaitDone(env, res.Turn) {
		if e.ToolCall != nil && e.ToolCall.Approval != "pending" {
			labels = append(labels, e.ToolCall.Label)
		}
		if e.Result != nil && e.Result.Summary != "" {
			summaries = append(summaries, e.Result.Summary)
		}
	}
	want := []string{"allowed once by you", "allowed by you, always for this tool",
		"allowed by you for every tool of server 't'", "allowed by allowlist entry mcp__t__"}
	if len(labels) != 4 || !strings.HasPrefix(labels[3], want[3]) || strings.Join(labels[:3], "|") != strings.Join(want[:3], "|") {
		t.Errorf("labels = %q\nwant %q\n%s", labels, want, env.State().Params("switchboard/event"))
	}
	// The failing tool's result: a sentence for people, not {"error": ...}.
	if len(summaries) != 1 || !strings.HasPrefix(summaries[0], "mcp__t__fail failed: ") || strings.Contains(summaries[0], "{") {
		t.Errorf("summaries = %q", summaries)
	}
}
