package session_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps the layering of STYLE.md section 2: session reaches MCP servers and the editor
// only through its own interfaces.
func TestDeps(t *testing.T) {
	// Not anywhere in the dependency graph.
	badDeps := map[string]string{
		"github.com/switchboard-dev/switchboard/host": "the host imports session, not the reverse",
		"go.lsp.dev/":                 "only host speaks LSP",
		"github.com/openai/openai-go": "providers are hand-written (deps.md section 4)",
		"github.com/anthropics/":      "providers are hand-written (deps.md section 4)",
	}
	// Not imported by a session package itself. (mcpbridge, imported for its types, links mcp-go;
	// that is mcpbridge's business.)
	badImports := map[string]string{
		"github.com/mark3labs/mcp-go":     "only mcpbridge imports mcp-go",
		"github.com/modelcontextprotocol": "only mcpbridge talks MCP",
	}
	check := func(args []string, bad map[string]string) {
		out, err := exec.Command("go", args...).Output()
		if err != nil {
			t.Skipf("go %v: %v", args, err)
		}
		for _, pkg := range strings.Fields(string(out)) {
			for prefix, why := range bad {
				if strings.HasPrefix(pkg, prefix) {
					t.Errorf("session depends on %s: %s", pkg, why)
				}
			}
		}
	}
	check([]string{"list", "-deps", "./..."}, badDeps)
	check([]string{"list", "-f", `{{join .Imports " "}}`, "./..."}, badImports)
	check([]string{"list", "-f", `{{join .Imports " "}}`, "./..."}, badDeps)
}
