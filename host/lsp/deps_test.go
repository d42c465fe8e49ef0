package lsp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeps: the language server is a front end. It imports the application (host), the contract
// (host/wire) and LSP libraries; nothing imports it but cmd and its tests, and it never reaches
// past the application into MCP.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/mark3labs/mcp-go") {
			t.Errorf("lsp imports %s: only mcpbridge speaks MCP", dep)
		}
	}
	// Who imports lsp: only cmd/switchboard and the test harness.
	out, err = exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/switchboard-dev/switchboard/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/switchboard-dev/switchboard/host/lsp"
	allowed := map[string]bool{
		"github.com/switchboard-dev/switchboard/cmd/switchboard": true,
		"github.com/switchboard-dev/switchboard/host/hosttest":   true,
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || allowed[f[0]] {
			continue
		}
		for _, imp := range f[1:] {
			if imp == self {
				t.Errorf("%s imports %s: the application and the leaves must not depend on a front end", f[0], self)
			}
		}
	}
}

// TestOneLSPClient: only the language server and its lspconn use go.lsp.dev, tests included;
// every test speaks LSP through host/lsptest, which checks the host's framer instead of sharing it.
func TestOneLSPClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "github.com/switchboard-dev/switchboard/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	speaksLSP := map[string]bool{
		"github.com/switchboard-dev/switchboard/host/lsp":              true,
		"github.com/switchboard-dev/switchboard/host/internal/lspconn": true,
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || speaksLSP[f[0]] {
			continue
		}
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, "go.lsp.dev/") {
				t.Errorf("%s imports %s: only the language server and its lspconn use go.lsp.dev; tests use host/lsptest", f[0], imp)
			}
		}
	}
}

// TestOneWay: a request goes down into the application and comes back as its result; the
// application reaches the editor only through host.UI and host.ToolProgress (chat events too:
// UI.ChatEvent). So the language server puts nothing in a ctx for the application to find (no
// token, no connection) and hands it no callback.
func TestOneWay(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "context.WithValue") {
			t.Errorf("%s: context.WithValue in the language server: pass what the application needs explicitly", f)
		}
	}
}
