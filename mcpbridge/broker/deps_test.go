package broker

import (
	"os/exec"
	"strings"
	"testing"
)

// badDeps are the imports broker must never have, with the reason (STYLE.md section 2).
var badDeps = map[string]string{
	"github.com/switchboard-dev/switchboard/host":        "the daemon has no UI and decides nothing: the host stays in the window",
	"github.com/switchboard-dev/switchboard/session":     "the agent and its provider keys stay in the window",
	"github.com/switchboard-dev/switchboard/permissions": "the gate runs in the window before a call is forwarded; the daemon cannot decide",
	"go.lsp.dev/": "only host/lsp speaks LSP",
}

// rootPkg is mcpbridge itself: it imports broker for the "attach" dial kind, so broker importing
// it would be a cycle. Its sub-packages (jsonscan, rawio, safetext, stdio) are allowed.
const rootPkg = "github.com/switchboard-dev/switchboard/mcpbridge"

func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == rootPkg {
			t.Errorf("broker imports %s: a cycle once mcpbridge dials through the broker", dep)
		}
		for bad, why := range badDeps {
			if dep == bad || strings.HasPrefix(dep, bad+"/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
				t.Errorf("broker imports %s: %s", dep, why)
			}
		}
	}
}
