package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedBuild: build.sh (what make build, make bench and the VS Code packages use) gives a
// binary that runs and whose start runs no JSON Schema meta-schema compilation: neither mcp-go's
// server package nor santhosh-tekuri/jsonschema is initialised. GODEBUG=inittrace=1 lists every
// package init that runs; the switchboard packages' own inits in that list show the trace works.
func TestShippedBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped under -short")
	}
	out := filepath.Join(t.TempDir(), "switchboard")
	if b, err := exec.Command("bash", "build.sh", out).CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, b)
	}
	cmd := exec.Command(out, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", out, err, b)
	}
	trace := string(b)
	if !strings.Contains(trace, "init github.com/switchboard-dev/switchboard/") {
		t.Fatalf("no package init traced (GODEBUG=inittrace=1 gave %q)", trace)
	}
	for _, pkg := range []string{"init github.com/santhosh-tekuri/jsonschema", "init github.com/mark3labs/mcp-go/server"} {
		if strings.Contains(trace, pkg) {
			t.Errorf("the shipped build runs %s at every start", strings.TrimPrefix(pkg, "init "))
		}
	}
}
