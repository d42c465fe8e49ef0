package host

import (
	"os/exec"
	"strings"
	"testing"
)

// badDeps are the imports the application must never have, with the reason.
var badDeps = map[string]string{
	"go.lsp.dev/": "the application knows no protocol: only host/lsp (and its lspconn) speaks LSP",
	"github.com/switchboard-dev/switchboard/host/lsp":              "the language server is a front end of the application, not the reverse",
	"github.com/switchboard-dev/switchboard/host/internal/lspconn": "LSP framing belongs to the language server",
	"github.com/switchboard-dev/switchboard/host/wire":             "the contract is converted at the language server's edge; the application has its own types",
	"github.com/switchboard-dev/switchboard/cmd":                   "cmd wires the application, not the reverse",
}

func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for bad, why := range badDeps {
			if dep == bad || strings.HasPrefix(dep, bad+"/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
				t.Errorf("host imports %s: %s", dep, why)
			}
		}
	}
	out, err = exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, "github.com/mark3labs/mcp-go") {
			t.Errorf("host imports %s: only mcpbridge speaks MCP (the application uses its types)", imp)
		}
	}
}
