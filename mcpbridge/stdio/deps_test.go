package stdio

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/switchboard-dev/switchboard/"

// badDeps are the imports stdio must never have, with the reason (STYLE.md section 2).
var badDeps = map[string]string{
	mod + "mcpbridge":            "stdio sits below the registry: mcpbridge imports stdio, an import back up would be a cycle",
	mod + "mcpbridge/config":     "the transport runs a command line it is handed; reading configuration is the registry's",
	mod + "mcpbridge/oauth":      "a stdio server has no sign-in",
	mod + "mcpbridge/tokenstore": "no secret of a store reaches a child process through the transport",
	mod + "host":                 "a leaf: the host wires it, not the reverse",
	mod + "session":              "a leaf: session never reaches a transport",
	mod + "permissions":          "leaf packages import no siblings",
	"go.lsp.dev/":                "only host speaks LSP",
}

func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for bad, why := range badDeps {
			if dep == bad || strings.HasPrefix(dep, bad+"/") && !strings.HasPrefix(dep, mod+"mcpbridge/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
				t.Errorf("stdio imports %s: %s", dep, why)
			}
		}
	}
}
