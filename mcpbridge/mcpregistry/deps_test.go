package mcpregistry

import (
	"os/exec"
	"strings"
	"testing"
)

// badDeps are the imports mcpregistry must never have, with the reason (STYLE.md section 2).
var badDeps = map[string]string{
	"github.com/switchboard-dev/switchboard/host":        "a leaf: the host and cmd wire it, not the reverse",
	"github.com/switchboard-dev/switchboard/session":     "a leaf: nothing of the agent belongs here",
	"github.com/switchboard-dev/switchboard/permissions": "a leaf: policy decides with what Verify says, above it",
	"github.com/mark3labs/mcp-go":                        "the registry API is plain HTTP and JSON, not MCP",
	"go.lsp.dev/":                                        "only host speaks LSP",
}

func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for bad, why := range badDeps {
			if dep == bad || strings.HasPrefix(dep, bad+"/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
				t.Errorf("mcpregistry imports %s: %s", dep, why)
			}
		}
	}
}
