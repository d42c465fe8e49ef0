package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckEras: switchboard check says which MCP revision each ready server speaks; a
// modern-only server (initialize refused with -32022) is ready in auto, and the era is
// remembered beside the pin file.
func TestCheckEras(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	bin := checkBuildMCPTest(t)
	dir := t.TempDir()
	cfg := checkWriteJSON(t, filepath.Join(dir, "eras.json"), map[string]any{"mcpServers": map[string]any{
		"old": map[string]any{"command": bin, "args": []string{"--ignore-discover"}},
		"new": map[string]any{"command": bin, "args": []string{"--protocol", "2026-07-28"}},
		"bad": map[string]any{"command": bin, "protocol": "2099-01-01"},
	}})
	pins := filepath.Join(dir, "state", "pins.json")
	var stdout, stderr bytes.Buffer
	runCheck([]string{"--config", cfg, "--pins", pins}, &stdout, &stderr)
	out := stdout.String()
	for _, want := range []string{
		"new  READY  stdio", "speaks:  MCP 2026-07-28",
		"old  READY  stdio", "speaks:  MCP 2025-11-25",
		`bad  FAILED`, `protocol: must be "auto", "2025-11-25" or "2026-07-28", not "2099-01-01"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s\nstderr:\n%s", want, out, stderr.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "state", "eras.json"))
	if err != nil || !strings.Contains(string(b), `"era": "2026-07-28"`) || !strings.Contains(string(b), `"server": "new"`) {
		t.Errorf("eras.json = %s, %v", b, err)
	}
}

// TestMCPAddProtocol: mcp add --protocol writes the entry's protocol (auto, the default, is not
// written), and refuses an unknown revision naming the key.
func TestMCPAddProtocol(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mcp.json")
	if out, errs, code := runMCPTest(t, "add", "m", "--file", file, "--protocol", "2026-07-28", "--", "srv"); code != 0 {
		t.Fatalf("add: %d %s %s", code, out, errs)
	}
	if out, errs, code := runMCPTest(t, "add", "a", "--file", file, "--protocol", "auto", "--", "srv"); code != 0 {
		t.Fatalf("add auto: %d %s %s", code, out, errs)
	}
	b, _ := os.ReadFile(file)
	if strings.Count(string(b), `"protocol"`) != 1 || !strings.Contains(string(b), `"2026-07-28"`) {
		t.Errorf("file = %s", b)
	}
	_, errs, code := runMCPTest(t, "add", "x", "--file", file, "--protocol", "2030", "--", "srv")
	if code != 2 || !strings.Contains(errs, `server "x": protocol: must be "auto"`) {
		t.Errorf("bad protocol: %d %s", code, errs)
	}
}
