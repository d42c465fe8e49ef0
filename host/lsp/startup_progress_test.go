package lsp_test

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
)

// progressTokens returns the startup tokens begun and ended, in order.
func progressTokens(s *hosttest.State) (begun, ended []string) {
	for _, p := range s.Params("$/progress") {
		var v struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind string `json:"kind"`
			} `json:"value"`
		}
		if json.Unmarshal(p, &v) != nil {
			continue
		}
		switch v.Value.Kind {
		case "begin":
			begun = append(begun, string(v.Token))
		case "end":
			ended = append(ended, string(v.Token))
		}
	}
	return begun, ended
}

// TestStartupProgressEndsOnce: settings that arrive while the servers are still connecting (as
// Neovim and VS Code send workspace/didChangeConfiguration right after initialized) must not start
// a second "Connecting MCP servers" sequence that never ends (vim.lsp.status() kept showing 0/1).
func TestStartupProgressEndsOnce(t *testing.T) {
	opts := initOpts(map[string]any{"slow": server("--startup-delay", "1s")})
	env := hosttest.Run(t, hosttest.Config{WorkDoneProgress: true, InitOptions: opts})
	env.Await("startup progress begun", func(s *hosttest.State) bool {
		b, _ := progressTokens(s)
		return len(b) > 0
	})
	env.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"switchboard": opts}})
	env.AwaitServer("slow", "ready")
	st := env.Await("every startup progress ended", func(s *hosttest.State) bool {
		b, e := progressTokens(s)
		return len(b) > 0 && len(b) == len(e)
	})
	if n := len(st.RequestParams("window/workDoneProgress/create")); n != 1 {
		t.Errorf("workDoneProgress/create requests: %d, want 1 (one startup sequence at a time)", n)
	}
}
