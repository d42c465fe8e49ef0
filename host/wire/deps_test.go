package wire

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: the contract depends on nothing but the standard library, so that no domain type or
// library can change it by accident.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.Contains(imp, ".") {
			t.Errorf("wire imports %s: the contract package imports only the standard library", imp)
		}
	}
}
