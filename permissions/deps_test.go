package permissions

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps permissions a leaf (STYLE.md, tailscale BadDeps style).
func TestDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/switchboard-dev/switchboard/"
	bad := map[string]string{
		mod + "host":                  "permissions is a leaf; host implements Prompter and imports us",
		mod + "session":               "session uses the gate through its own interface",
		mod + "mcpbridge":             "permissions knows nothing of MCP; server names are plain strings",
		"go.lsp.dev/":                 "only host speaks LSP",
		"github.com/mark3labs/mcp-go": "only mcpbridge imports mcp-go",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for b, why := range bad {
			if pkg == b || strings.HasPrefix(pkg, strings.TrimSuffix(b, "/")+"/") || (strings.HasSuffix(b, "/") && strings.HasPrefix(pkg, b)) {
				t.Errorf("permissions depends on %s: %s", pkg, why)
			}
		}
	}
}
