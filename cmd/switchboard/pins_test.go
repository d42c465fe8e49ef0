package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/permissions"
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

// A workspace server's pins are its folder's ("demo@/folder"): pins accept writes them there, and
// pins the file held under the bare name before (an older Switchboard's) with the same definition
// are still what its tools are compared with, then kept under the folder's key.
func TestPinsCLIWorkspaceServer(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	bin := checkBuildMCPTest(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	checkWriteJSON(t, filepath.Join(ws, ".mcp.json"), map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"command": bin}}})
	pins, trustPath := filepath.Join(dir, "pins.json"), filepath.Join(dir, "trust.json")
	cfgs, errs := config.LoadConfig(config.ConfigSources{WorkspaceFolders: []string{ws}})
	if len(errs) != 0 || len(cfgs) != 1 || cfgs[0].Folder == "" {
		t.Fatalf("LoadConfig = %+v, %v", cfgs, errs)
	}
	trust, err := permissions.OpenTrustStore(trustPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := trust.SetDefinition("demo", cfgs[0].Fingerprint(), true, cfgs[0].Definition()); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := runPins(append(args, "--pins", pins, "--trust", trustPath, "--workspace", ws), &stdout, &stderr); code != 0 {
			t.Fatalf("pins %v: exit %d\nstdout: %s\nstderr: %s", args, code, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	if out := run("accept", "demo"); !strings.Contains(out, "Pinned 8 tool(s) of demo") {
		t.Errorf("accept (first):\n%s", out)
	}
	key := "demo@" + cfgs[0].Folder
	var file struct {
		Version int                               `json:"version"`
		Servers map[string]permissions.ServerPins `json:"servers"`
	}
	data, _ := os.ReadFile(pins)
	if err := json.Unmarshal(data, &file); err != nil || len(file.Servers) != 1 || file.Servers[key].Tools == nil {
		t.Fatalf("pins.json (want the record %q): %s, %v", key, data, err)
	}

	// As an older Switchboard kept them: under "demo", with echo pinned as another definition.
	sp := file.Servers[key]
	echo := sp.Tools["echo"]
	echo.Hash = strings.Repeat("0", 64)
	sp.Tools["echo"] = echo
	file.Servers = map[string]permissions.ServerPins{"demo": sp}
	data, _ = json.Marshal(file)
	os.WriteFile(pins, data, 0o600)
	if out := run("list"); !strings.Contains(out, "changed: ") || !strings.Contains(out, "echo") {
		t.Errorf("list with the older pins:\n%s", out)
	}
	run("accept", "demo", "echo")
	if out := run("list"); !strings.Contains(out, "Every tool matches") {
		t.Errorf("list after accepting echo:\n%s", out)
	}
	data, _ = os.ReadFile(pins)
	if err := json.Unmarshal(data, &file); err != nil || len(file.Servers[key].Tools) != 8 {
		t.Errorf("pins.json after accepting (want all 8 tools under %q): %s, %v", key, data, err)
	}
}

// pins accept of a server that did not start accepts nothing, says so by name, and fails.
func TestPinsAcceptNotReady(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	cfg := checkWriteJSON(t, filepath.Join(dir, "c.json"), map[string]any{"mcpServers": map[string]any{"down": map[string]any{"command": filepath.Join(dir, "missing")}}})
	var stdout, stderr bytes.Buffer
	code := runPins([]string{"accept", "down", "--config", cfg, "--pins", filepath.Join(dir, "pins.json"), "--workspace", dir}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "nothing of down was accepted") || strings.Contains(stdout.String(), "Accepted") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
}
