package tokenstore

import (
	"os/exec"
	"strings"
	"testing"
)

// badDeps are the imports tokenstore must never have, with the reason (STYLE.md section 2).
var badDeps = map[string]string{
	"github.com/switchboard-dev/switchboard/mcpbridge":   "tokenstore sits below every mcpbridge package: config and oauth import it, so an import back up would be a cycle",
	"github.com/switchboard-dev/switchboard/host":        "a leaf: the host wires it, not the reverse",
	"github.com/switchboard-dev/switchboard/session":     "a leaf: session never reaches the token store",
	"github.com/switchboard-dev/switchboard/permissions": "leaf packages import no siblings",
	"github.com/mark3labs/mcp-go":                        "a store of secrets speaks no MCP",
	"go.lsp.dev/":                                        "only host speaks LSP",
}

// self is this package, which go list -deps names too.
const self = "github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"

func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == self {
			continue
		}
		for bad, why := range badDeps {
			if dep == bad || strings.HasPrefix(dep, bad+"/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
				t.Errorf("tokenstore imports %s: %s", dep, why)
			}
		}
	}
}
