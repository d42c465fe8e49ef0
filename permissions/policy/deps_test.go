package policy

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps policy a leaf (STYLE.md, tailscale BadDeps style). Of Switchboard it may use
// only mcpbridge/safetext, which imports nothing but the standard library.
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
		mod + "host":                  "policy is a leaf; host applies it",
		mod + "session":               "the session sees policy only through the gate",
		mod + "mcpbridge":             "policy matches plain launches; mcpbridge resolves them (safetext alone is allowed)",
		mod + "permissions":           "permissions' gate asks policy through a function host supplies; importing it would tie the two",
		"go.lsp.dev/":                 "only host/lsp speaks LSP",
		"github.com/mark3labs/mcp-go": "only mcpbridge imports mcp-go",
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == mod+"mcpbridge/safetext" || pkg == mod+"permissions/policy" {
			continue
		}
		for b, why := range bad {
			if pkg == b || strings.HasPrefix(pkg, strings.TrimSuffix(b, "/")+"/") {
				t.Errorf("policy depends on %s: %s", pkg, why)
			}
		}
	}
}
