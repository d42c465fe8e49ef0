package appview

import (
	"os/exec"
	"strings"
	"testing"
)

// badDeps are the imports appview must never have, with the reason.
var badDeps = map[string]string{
	"github.com/switchboard-dev/switchboard/host":    "the host calls appview; appview reaches it only through Bridge",
	"github.com/switchboard-dev/switchboard/session": "views never talk to the conversation loop directly",
	"go.lsp.dev/":                  "only host/lsp speaks LSP",
	"github.com/mark3labs/mcp-go/": "only mcpbridge speaks MCP",
}

func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		for bad, why := range badDeps {
			// A name ending in "/" forbids the tree under it; any other, that package alone.
			if imp == bad || strings.HasSuffix(bad, "/") && strings.HasPrefix(imp, bad) {
				t.Errorf("appview imports %s: %s", imp, why)
			}
		}
	}
}
