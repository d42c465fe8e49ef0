package lsp_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
)

func mcpJSON(servers map[string]any) string {
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	return string(b)
}

// TestConfigFileEditsApplied: editing an mcp.json file (user or workspace) is picked up without
// Reconnect All, and applied per server: a new server starts, a removed one goes, and a server
// whose entry did not change keeps running (it is not restarted).
func TestConfigFileEditsApplied(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{UserFiles: map[string]string{"mcp.json": mcpJSON(map[string]any{"a": server(), "gone": server()})}})
	env.AwaitServer("a", "ready")
	env.AwaitServer("gone", "ready")
	before := len(env.State().Params("switchboard/serversChanged"))
	writeFile(t, filepath.Join(env.ConfigDir, "mcp.json"), mcpJSON(map[string]any{"a": server(), "b": server()}))
	st := env.Await("b ready and gone removed", func(s *hosttest.State) bool {
		b, ok := s.Server("b")
		_, still := s.Server("gone")
		return ok && b.State == "ready" && !still
	})
	for _, raw := range st.Params("switchboard/serversChanged")[before:] {
		var p struct {
			Servers []hosttest.ServerStatus `json:"servers"`
		}
		json.Unmarshal(raw, &p)
		for _, s := range p.Servers {
			if s.Name == "a" && s.State != "ready" {
				t.Errorf("unchanged server a was restarted: %s", raw)
			}
		}
	}
	// A workspace file created after start is seen too (its folder is watched).
	writeFile(t, filepath.Join(env.Workspace, ".vscode", "mcp.json"), mcpJSON(map[string]any{"w": server()}))
	env.AwaitServer("w", "untrusted")
}
