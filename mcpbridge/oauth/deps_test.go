package oauth

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/switchboard-dev/switchboard/"

// badDeps are the imports oauth must never have, with the reason (STYLE.md section 2).
var badDeps = map[string]string{
	mod + "mcpbridge":       "oauth sits below the registry: mcpbridge imports oauth, an import back up would be a cycle",
	mod + "mcpbridge/stdio": "a stdio server has no sign-in",
	mod + "host":            "a leaf: the host wires it and shows the sign-in, not the reverse",
	mod + "session":         "a leaf: a token never reaches the session",
	mod + "permissions":     "leaf packages import no siblings",
	"go.lsp.dev/":           "only host speaks LSP",
}

func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for bad, why := range badDeps {
			if dep == bad || strings.HasPrefix(dep, bad+"/") && !strings.HasPrefix(dep, mod+"mcpbridge/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
				t.Errorf("oauth imports %s: %s", dep, why)
			}
		}
	}
}
