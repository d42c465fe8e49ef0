package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// pins list|diff|accept against a server whose definition changed after it was pinned (its
// arguments: a new version of the server), and check marking the changed tools.
func TestPinsCLI(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	bin := checkBuildMCPTest(t)
	dir := t.TempDir()
	pins := filepath.Join(dir, "pins.json")
	v1 := checkWriteJSON(t, filepath.Join(dir, "v1.json"), map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"command": bin}}})
	v2 := checkWriteJSON(t, filepath.Join(dir, "v2.json"), map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"command": bin, "args": []string{"--instructions", "v2"}}}})
	run := func(want int, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := runPins(append(args, "--pins", pins, "--workspace", dir), &stdout, &stderr); code != want {
			t.Fatalf("pins %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, want, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	if out := run(0, "list", "--config", v1); !strings.Contains(out, "not pinned yet: 8 tool(s)") {
		t.Errorf("list before any pin:\n%s", out)
	}
	if out := run(0, "accept", "demo", "--config", v1); !strings.Contains(out, "Pinned 8 tool(s) of demo") {
		t.Errorf("accept (first):\n%s", out)
	}
	if out := run(0, "list", "--config", v1); !strings.Contains(out, "Every tool matches") {
		t.Errorf("list after pinning:\n%s", out)
	}
	out := run(0, "list", "--config", v2)
	if !strings.Contains(out, "changed: ") || !strings.Contains(out, "echo") {
		t.Errorf("list after the change:\n%s", out)
	}
	if out := run(0, "diff", "demo", "echo", "--config", v2); !strings.Contains(out, "echo (changed)\nserver:\n") || !strings.Contains(out, `+   "args": [`) {
		t.Errorf("diff:\n%s", out)
	}
	var stdout, stderr bytes.Buffer
	runCheck([]string{"--config", v2, "--workspace", dir, "--pins", pins}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "[changed since you approved it: switchboard pins diff demo]") {
		t.Errorf("check does not mark changed tools:\n%s", stdout.String())
	}
	run(0, "accept", "demo", "echo", "--config", v2)
	if out := run(0, "diff", "demo", "--config", v2); strings.Contains(out, "echo (changed)") || !strings.Contains(out, "fail (changed)") {
		t.Errorf("diff after accepting echo:\n%s", out)
	}
	run(2, "accept", "demo", "nope", "--config", v2)
	run(0, "accept", "demo", "--config", v2)
	if out := run(0, "list", "--config", v2); !strings.Contains(out, "Every tool matches") {
		t.Errorf("list after accepting all:\n%s", out)
	}
	run(2, "diff")
}
