package safetext

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: safetext imports only the standard library, so that every package may use it.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.ImportPath}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/switchboard-dev/switchboard/mcpbridge/safetext" {
			t.Errorf("safetext depends on %s: only the standard library is allowed", p)
		}
	}
}
