package hosttest

import (
	"os/exec"
	"strings"
	"testing"
)

// badDeps are the imports the fake editor must never have, with the reason.
var badDeps = map[string]string{
	"go.lsp.dev/": "the fake editor speaks LSP through host/lsptest, the one LSP test client, not the host's libraries",
	"github.com/switchboard-dev/switchboard/host/internal/lspconn": "the host's framer is what the tests check; sharing it would hide its bugs",
	"github.com/mark3labs/mcp-go":                                  "tests drive MCP servers through the host (or cmd/mcptest), never a second MCP client",
}

// TestDeps: hosttest drives the language server (host/lsp) through host/lsptest only.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	for _, imp := range imports {
		for bad, why := range badDeps {
			if imp == bad || strings.HasPrefix(imp, strings.TrimSuffix(bad, "/")+"/") {
				t.Errorf("hosttest imports %s: %s", imp, why)
			}
		}
	}
	if !strings.Contains(" "+strings.Join(imports, " ")+" ", " github.com/switchboard-dev/switchboard/host/lsptest ") {
		t.Errorf("hosttest does not import host/lsptest: the fake editor must be the one LSP test client")
	}
}
