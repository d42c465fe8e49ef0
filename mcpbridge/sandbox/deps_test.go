package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

// badDeps are the imports sandbox must never have, with the reason.
var badDeps = map[string]string{
	"github.com/switchboard-dev/switchboard/host":        "a leaf: the host wires it, not the reverse",
	"github.com/switchboard-dev/switchboard/session":     "a leaf: nothing of the agent belongs here",
	"github.com/switchboard-dev/switchboard/permissions": "a leaf: trust decisions are made above it",
	"github.com/mark3labs/mcp-go":                        "the sandbox confines a process; it does not speak MCP",
	"go.lsp.dev/":                                        "only host speaks LSP",
}

// TestDeps: sandbox imports no switchboard package but safetext (its launcher runs at the top of
// main, before anything else is initialised, so it must stay small).
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/switchboard-dev/switchboard/") &&
			dep != "github.com/switchboard-dev/switchboard/mcpbridge/sandbox" &&
			dep != "github.com/switchboard-dev/switchboard/mcpbridge/safetext" {
			t.Errorf("sandbox imports %s: only mcpbridge/safetext is allowed", dep)
		}
		for bad, why := range badDeps {
			if dep == bad || strings.HasPrefix(dep, bad+"/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
				t.Errorf("sandbox imports %s: %s", dep, why)
			}
		}
	}
}
