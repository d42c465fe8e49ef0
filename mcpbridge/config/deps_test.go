package config

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/switchboard-dev/switchboard/"

// badDeps are the imports config must never have, with the reason (STYLE.md section 2).
var badDeps = map[string]string{
	mod + "mcpbridge":             "config sits below the registry: mcpbridge imports config, an import back up would be a cycle",
	mod + "mcpbridge/oauth":       "config only reads the oauth object; signing in is oauth's, which imports config",
	mod + "mcpbridge/stdio":       "config says what runs; running it is stdio's",
	"github.com/mark3labs/mcp-go": "config files speak JSON, not MCP: config is read and checked without a protocol library",
	mod + "host":                  "a leaf: the host wires it, not the reverse",
	mod + "session":               "a leaf: session uses its types, not the reverse",
	mod + "permissions":           "leaf packages import no siblings",
	"go.lsp.dev/":                 "only host speaks LSP",
}

func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for bad, why := range badDeps {
			if dep == bad || strings.HasPrefix(dep, bad+"/") && !strings.HasPrefix(dep, mod+"mcpbridge/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
				t.Errorf("config imports %s: %s", dep, why)
			}
		}
	}
}
