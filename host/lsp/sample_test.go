package lsp_test

import (
	"context"
	"encoding/json"
	"github.com/switchboard-dev/switchboard/host/lsp"
	"github.com/switchboard-dev/switchboard/host/wire"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
)

// TestSampling: a server's sampling request runs on the configured model after the user allows
// it; refused, the server gets the spec's rejection; "Allow this server" stops the asking.
func TestSampling(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llm.script")
	writeFile(t, path, "reply text \"First summary.\"\n\nreply text \"Second summary.\"\n\nreply text \"Third summary.\"\n")
	env := runWith(t, hosttest.Config{InitOptions: initOpts(map[string]any{"t": server(), "s": server("--sample")},
		"provider", map[string]any{"type": "script", "script": path})})
	env.AwaitServer("s", "ready")
	var mu sync.Mutex
	var asked []hosttest.ShowMessageRequestParams
	answer := lsp.TitleSampleOnce
	env.Editor.SetResponder(func(ctx context.Context, p hosttest.ShowMessageRequestParams) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, p)
		return answer
	})
	summarize := func(text string) toolResult {
		t.Helper()
		var res toolResult
		env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__s__summarize", "arguments": map[string]any{"text": text}, "mode": "always-allow"}, &res)
		return res
	}
	got := func(res toolResult) map[string]any {
		t.Helper()
		var m map[string]any
		if res.IsError || json.Unmarshal([]byte(res.Text), &m) != nil {
			t.Fatalf("summarize = %+v", res)
		}
		return m
	}
	if m := got(summarize("a long text")); m["text"] != "First summary." || m["stopReason"] != "endTurn" {
		t.Errorf("the server got %v", m)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0].Message != "MCP server 's' asks to use your model (script, up to 100 tokens): Summarize in one line: a long text" ||
		len(asked[0].Actions) != 3 || asked[0].Actions[2].Title != "Refuse" {
		t.Errorf("prompt = %+v", asked)
	}
	answer = lsp.TitleSampleRefuse
	mu.Unlock()
	if res := summarize("again"); !res.IsError || !strings.Contains(res.Text, "User rejected sampling request") {
		t.Errorf("refused: summarize = %+v", res)
	}
	mu.Lock()
	answer = lsp.TitleSampleServer
	mu.Unlock()
	if m := got(summarize("third")); m["text"] != "Second summary." {
		t.Errorf("the server got %v (a refused request must not use the model)", m)
	}
	if m := got(summarize("fourth")); m["text"] != "Third summary." {
		t.Errorf("the server got %v", m)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 3 {
		t.Errorf("asked %d times, want 3 (not again after Allow this server)", len(asked))
	}
}

func TestSamplingWithoutModel(t *testing.T) {
	env := runWith(t, hosttest.Config{InitOptions: initOpts(map[string]any{"t": server(), "s": server("--sample")}),
		Env: map[string]string{"OPENAI_API_KEY": ""}})
	env.AwaitServer("s", "ready")
	env.Editor.SetResponder(hosttest.Answer(lsp.TitleSampleOnce))
	var res toolResult
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__s__summarize", "arguments": map[string]any{"text": "x"}, "mode": "always-allow"}, &res)
	if !res.IsError || !strings.Contains(res.Text, "Switchboard has no usable model") || !strings.Contains(res.Text, "OPENAI_API_KEY") {
		t.Errorf("summarize without a usable model = %+v, want the server to get an error", res)
	}
	t.Logf("the server was told: %s", res.Text)
}
