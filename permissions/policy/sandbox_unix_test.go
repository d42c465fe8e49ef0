//go:build unix

package policy

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestSandboxRequiredRootFiles: mcpSandbox in a real root-owned drop-in requires a sandbox
// although the main file says optional, and check's source line says what the drop-in gave.
func TestSandboxRequiredRootFiles(t *testing.T) {
	ps := rootTree(t, map[string]string{
		"switchboard/managed-settings.json":              `{"mcpSandbox": "optional"}`,
		"switchboard/managed-settings.d/50-sandbox.json": "{\n  // every local server runs confined\n  \"mcpSandbox\": \"required\"\n}",
	})
	p := Load(Options{Paths: ps, LookPath: noLookPath})
	if err := p.Broken(); err != nil {
		t.Fatalf("Broken: %v", err)
	}
	dropIn := filepath.Join(ps.Dir, "managed-settings.d", "50-sandbox.json")
	d := p.Admit(stdio("fs", "npx", "/usr/bin/npx"))
	if d.Allowed || d.Rule.Loc() != dropIn+"#/mcpSandbox" || d.Rule.Line != 3 || d.Rule.Col != 17 {
		t.Errorf("unsandboxed server: %+v (rule %+v)", d, d.Rule)
	}
	boxed := stdio("fs", "npx", "/usr/bin/npx")
	boxed.Sandboxed = true
	if d := p.Admit(boxed); !d.Allowed {
		t.Errorf("sandboxed server blocked: %+v", d)
	}
	srcs := p.Sources()
	if i := slices.IndexFunc(srcs, func(s Source) bool { return s.Path == dropIn }); i < 0 || !slices.Contains(srcs[i].Contributed, "mcpSandbox required") {
		t.Errorf("sources %+v: the drop-in's contribution is not named", srcs)
	}
}
