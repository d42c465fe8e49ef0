package lsp_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// TestBadConfigEntryListed: a server entry the configuration rejects is listed with the servers
// (failed, its file as source, the key in the error), not only in a notice behind other prompts.
func TestBadConfigEntryListed(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{UserFiles: map[string]string{"mcp.json": mcpJSON(map[string]any{
		"ok": server(), "bad": map[string]any{"type": "stdio"},
	})}})
	env.AwaitServer("ok", "ready")
	var servers []hosttest.ServerStatus
	env.MustCommand(wire.CmdServers, nil, &servers)
	var bad *hosttest.ServerStatus
	for i := range servers {
		if servers[i].Name == "bad" {
			bad = &servers[i]
		}
	}
	if bad == nil {
		t.Fatalf("the bad entry is not listed: %+v", servers)
	}
	if bad.State != "failed" || bad.Source != filepath.Join(env.ConfigDir, "mcp.json") || !strings.Contains(bad.Error, "command") {
		t.Errorf("bad entry = %+v; want failed, its file, the key", *bad)
	}
}
