package host_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/hosttest"
)

func workspaceServer(args ...string) string {
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"w": server(args...)}})
	return string(b)
}

func TestWorkspaceTrustPrompt(t *testing.T) {
	for _, tc := range []struct {
		answer string
		state  string
	}{
		{"Trust", "ready"},
		{"Don't trust", "untrusted"},
		{"", "untrusted"}, // dismissed
	} {
		t.Run(tc.state+"/"+tc.answer, func(t *testing.T) {
			env := hosttest.Run(t, hosttest.Config{
				Files:     map[string]string{".mcp.json": workspaceServer()},
				Responder: hosttest.Answer(tc.answer),
			})
			env.AwaitServer("w", "untrusted")
			st := env.Await("trust prompt", func(s *hosttest.State) bool {
				return len(s.RequestParams("window/showMessageRequest")) == 1
			})
			prompts := st.RequestParams("window/showMessageRequest")
			var p hosttest.ShowMessageRequestParams
			json.Unmarshal(prompts[0], &p)
			if !strings.HasPrefix(p.Message, "Workspace defines MCP server 'w' (command ") || !strings.HasSuffix(p.Message, "). Start it?") ||
				len(p.Actions) != 2 || p.Actions[0].Title != "Trust" || p.Actions[1].Title != "Don't trust" {
				t.Errorf("trust prompt = %+v", p)
			}
			trustFile := filepath.Join(env.ConfigDir, "trust.json")
			switch {
			case tc.state == "ready":
				env.AwaitServer("w", "ready")
			case tc.answer != "":
				// The editor answers the prompt on its own goroutine, and a refusal changes no
				// state: ask the host until the decision is on file (bounded).
				for i := 0; !strings.Contains(readFile(t, trustFile), `"w"`); i++ {
					if i == 10000 {
						t.Fatal("the refusal never reached trust.json")
					}
					env.MustCommand(host.CmdServers, nil, nil)
				}
			}
			// Reconnecting does not ask again about the same configuration.
			var servers []hosttest.ServerStatus
			env.MustCommand(host.CmdReconnect, map[string]string{"server": "w"}, &servers)
			if servers[0].State != tc.state {
				t.Errorf("after reconnect: %+v, want %s", servers[0], tc.state)
			}
			if n := len(env.State().RequestParams("window/showMessageRequest")); n != 1 {
				t.Errorf("%d prompts, want 1", n)
			}
			trust := readFile(t, trustFile)
			if (tc.answer != "") != strings.Contains(trust, `"w"`) {
				t.Errorf("trust.json = %q", trust)
			}
		})
	}
}

func TestTrustCommandAndChangedConfig(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{Files: map[string]string{".mcp.json": workspaceServer()}})
	env.AwaitServer("w", "untrusted")
	var servers []hosttest.ServerStatus
	env.MustCommand(host.CmdTrust, map[string]string{"server": "w", "decision": "trust"}, &servers)
	if len(servers) != 1 || servers[0].State != "ready" {
		t.Fatalf("after trust = %+v", servers)
	}
	env.MustCommand(host.CmdTrust, map[string]string{"server": "w", "decision": "deny"}, &servers)
	if servers[0].State != "untrusted" {
		t.Fatalf("after deny = %+v", servers)
	}
	env.MustCommand(host.CmdTrust, map[string]string{"server": "w", "decision": "trust"}, &servers)
	// A changed configuration is a new question.
	writeFile(t, filepath.Join(env.Workspace, ".mcp.json"), workspaceServer("--tools", "1"))
	env.Editor.SetResponder(hosttest.Answer("Trust"))
	env.MustCommand(host.CmdReconnect, nil, &servers)
	env.Await("a new trust prompt", func(s *hosttest.State) bool {
		return len(s.RequestParams("window/showMessageRequest")) >= 2
	})
	env.AwaitServer("w", "ready")
	for _, bad := range []any{
		map[string]string{"server": "nope", "decision": "trust"},
		map[string]string{"server": "w", "decision": "maybe"},
		map[string]string{"decision": "trust"},
	} {
		if err := env.Command(host.CmdTrust, bad, nil); hosttest.ErrorCode(err) != -32602 {
			t.Errorf("trust %v: %v, want -32602", bad, err)
		}
	}
}

func TestEditorSettingsServersAreTrusted(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	if n := len(env.State().RequestParams("window/showMessageRequest")); n != 0 {
		t.Errorf("%d prompts for a server from editor settings", n)
	}
}

func TestWorkspaceFolderAdded(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{NoWorkspace: true, Responder: hosttest.Answer("Trust")})
	other := filepath.Join(t.TempDir(), "other")
	writeFile(t, filepath.Join(other, ".vscode", "mcp.json"), `{"servers":{"v":`+mustJSON(server())+`}}`)
	env.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []map[string]string{{"uri": hosttest.FileURI(other), "name": "other"}}, "removed": []any{},
	}})
	st := env.AwaitServer("v", "ready") // asked, trusted, started
	if !strings.Contains(st.Source, "mcp.json") {
		t.Errorf("source = %q", st.Source)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
