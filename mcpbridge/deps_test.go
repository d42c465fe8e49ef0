package mcpbridge

import (
	"os/exec"
	"strings"
	"testing"
)

// badDeps are the imports mcpbridge must never have, with the reason (STYLE.md section 2).
var badDeps = map[string]string{
	"github.com/switchboard-dev/switchboard/host":        "mcpbridge is a leaf: the host wires it, not the reverse",
	"github.com/switchboard-dev/switchboard/session":     "mcpbridge is a leaf: session uses its types, not the reverse",
	"github.com/switchboard-dev/switchboard/permissions": "leaf packages import no siblings; the gate is the session's business",
	"go.lsp.dev/": "only host speaks LSP",
}

func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for bad, why := range badDeps {
			if dep == bad || strings.HasPrefix(dep, bad+"/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
				t.Errorf("mcpbridge imports %s: %s", dep, why)
			}
		}
	}
}
