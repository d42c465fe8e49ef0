package lsptest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: the test client is written from the LSP specification with the standard library only,
// so it checks the host's framer (host/internal/lspconn) and JSON-RPC library instead of sharing
// them, and any test (host, cmd, the benchmark) can use it without pulling in the host.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.Contains(imp, ".") {
			t.Errorf("lsptest imports %s: the one LSP test client uses only the standard library", imp)
		}
	}
}
