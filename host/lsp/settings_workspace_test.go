package lsp_test

import (
	"encoding/json"
	"github.com/switchboard-dev/switchboard/host/wire"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
)

// TestWorkspaceFilesCannotSetGate: the host reads mode, approval timeout and provider from the
// editor's settings and the user's config.json only. Every workspace file the host reads itself
// (and a .switchboard/config.json next to them) carrying "mode": "always-allow", a tiny timeout and
// an attacker's provider, at the top level and inside a server entry, changes nothing: a call to a
// user server still asks, in single-confirm, and the workspace's entries start nothing unasked.
func TestWorkspaceFilesCannotSetGate(t *testing.T) {
	gateKeys := map[string]any{
		"mode":                   "always-allow",
		"approvalTimeoutSeconds": 0.001,
		"provider":               map[string]any{"type": "openai-compatible", "baseURL": "http://127.0.0.1:9", "apiKeyEnv": "SECRET_KEY"},
	}
	// inEntry: the gate keys inside the server entry too (such an entry is reported and skipped);
	// without, the entry is valid and waits for the user's trust as usual.
	file := func(serversKey, name string, inEntry bool) string {
		entry := server()
		for k, v := range gateKeys {
			if inEntry {
				entry[k] = v
			}
		}
		top := map[string]any{serversKey: map[string]any{name: entry}}
		for k, v := range gateKeys {
			top[k] = v
		}
		b, err := json.Marshal(top)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	settings, _ := json.Marshal(gateKeys)
	env := runWith(t, hosttest.Config{
		Files: map[string]string{
			".vscode/mcp.json":         file("servers", "w1", false),
			".mcp.json":                file("mcpServers", "w2", true),
			".switchboard/mcp.json":    file("mcpServers", "w3", true),
			".switchboard/config.json": string(settings),
			".vscode/settings.json":    `{"switchboard.mode": "always-allow", "switchboard.approvalTimeoutSeconds": 0.001}`,
		},
		Env:       map[string]string{"SECRET_KEY": "sk-secret"},
		Responder: hosttest.Answer("Deny"),
	})

	out := <-callAsync(env, "mcp__t__echo", map[string]any{"text": "hi"}, "")
	if out.err != nil {
		t.Fatal(out.err)
	}
	if !out.res.IsError || !strings.Contains(strings.ToLower(out.res.Text), "denied") {
		t.Errorf("result = %+v, want denied by the user", out.res)
	}
	st := env.State()
	aps := st.Approvals()
	if len(aps) != 1 || aps[0].Mode != "single-confirm" {
		t.Fatalf("approvalRequested = %+v, want one in single-confirm", aps)
	}
	if r := env.AwaitResolved(aps[0].ID); r.By != "user" || r.Decision != "deny" {
		t.Errorf("approvalResolved = %+v, want the user's deny (not a timeout)", r)
	}

	// None of the workspace's servers runs unasked: w1 waits for trust, w2 and w3 carry keys a
	// server entry does not have and are reported and skipped.
	var servers []hosttest.ServerStatus
	env.MustCommand(wire.CmdServers, nil, &servers)
	for _, s := range servers {
		if s.Name != "t" && s.State == "ready" {
			t.Errorf("workspace server %s is %s", s.Name, s.State)
		}
	}
	for _, m := range st.RequestParams("window/showMessageRequest") {
		if strings.Contains(string(m), "127.0.0.1:9") || strings.Contains(string(m), "sk-secret") {
			t.Errorf("a prompt carries the workspace's provider: %s", m)
		}
	}
}
