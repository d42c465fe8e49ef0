package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
)

// TestCheckSandbox: switchboard check says what confines each stdio server, and that one
// without a sandbox runs with the user's full rights; a sandboxed server starts through this
// binary as its launcher (TestMain calls sandbox.Main, as main does).
func TestCheckSandbox(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox on this system: %v", err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	bin := checkBuildMCPTest(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := checkWriteJSON(t, filepath.Join(dir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"boxed":  map[string]any{"command": bin, "sandbox": map[string]any{"write": []string{"./out"}}},
		"plain":  map[string]any{"command": bin},
		"greedy": map[string]any{"command": bin, "sandbox": map[string]any{"read": []string{"~"}}},
	}})
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	runCheck([]string{"--config", cfg, "--pins", filepath.Join(dir, "pins.json")}, &stdout, &stderr)
	out := stdout.String()
	for _, want := range []string{
		"boxed  READY  stdio", "sandbox: sandboxed: no network, writes only ./out and its own folder",
		"plain  READY  stdio", "sandbox: none (runs with your full rights)",
		"greedy  FAILED", "it holds ~/.ssh, which is never opened to a sandboxed server",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s\nstderr:\n%s", want, out, stderr.String())
		}
	}
}
