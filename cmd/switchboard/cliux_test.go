package main

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
)

// TestHelpExitsZero: asking a command for its help is not a usage error (exit 0, the usage shown).
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"check", "--help"}, {"check", "-h"}, {"serve", "--help"},
		{"serve", "-h"}, {"call", "--help"}, {"allow", "--help"}, {"mcp", "--help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Errorf("switchboard %s: exit %d, want 0\n%s", strings.Join(args, " "), code, stderr.String())
		}
		if !strings.Contains(stdout.String()+stderr.String(), "usage") {
			t.Errorf("switchboard %s shows no usage:\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
		}
	}
	// A real usage error still exits 2.
	if code := run([]string{"check", "--nope"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("check --nope: exit %d, want 2", code)
	}
}

// TestCheckOneServerAndTrustStore: "1 MCP server" (not "1 MCP servers"), and a workspace server the
// person trusted (trust.json, as the editors record it) is started and reported as such, not
// UNTRUSTED; a changed definition is untrusted again.
func TestCheckOneServerAndTrustStore(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home) // no user file; trust.json under it
	bin := checkBuildMCPTest(t)
	ws := filepath.Join(t.TempDir(), "ws")
	checkWriteJSON(t, filepath.Join(ws, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"wsonly": map[string]any{"command": bin},
	}})
	var stdout, stderr bytes.Buffer
	runCheck([]string{"--workspace", ws}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "1 MCP server: 1 untrusted; 0 tools") {
		t.Errorf("untrusted report:\n%s", stdout.String())
	}
	cfgs, errs := mcpbridge.LoadConfig(mcpbridge.ConfigSources{WorkspaceFolders: []string{ws}})
	if len(errs) > 0 || len(cfgs) != 1 {
		t.Fatalf("config = %v, %v", cfgs, errs)
	}
	ts, err := permissions.OpenTrustStore(permissions.DefaultTrustPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.SetDefinition("wsonly", cfgs[0].Fingerprint(), true, cfgs[0].Definition()); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := runCheck([]string{"--workspace", ws}, &stdout, &stderr); code != 0 {
		t.Errorf("exit %d, want 0\n%s", code, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "1 MCP server: 1 ready; 8 tools") || !strings.Contains(out, "wsonly  READY") || strings.Contains(out, "--trust-workspace") {
		t.Errorf("trusted report:\n%s", out)
	}
	// Another definition under the same name is not trusted by that decision.
	checkWriteJSON(t, filepath.Join(ws, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"wsonly": map[string]any{"command": bin, "args": []string{"--tools", "1"}},
	}})
	stdout.Reset()
	runCheck([]string{"--workspace", ws}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "wsonly  UNTRUSTED") {
		t.Errorf("changed definition:\n%s", stdout.String())
	}
}

// TestCheckListsBadEntries: an entry the configuration rejects is listed with the servers, with
// its file and key, not only on stderr.
func TestCheckListsBadEntries(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	cfg := checkWriteJSON(t, filepath.Join(dir, "bad.json"), map[string]any{"mcpServers": map[string]any{
		"bad": map[string]any{"type": "stdio"},
	}})
	var stdout, stderr bytes.Buffer
	if code := runCheck([]string{"--config", cfg, "--workspace", dir}, &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	out := stdout.String()
	if !strings.Contains(out, "1 MCP server: 1 failed") || !strings.Contains(out, "bad  FAILED") ||
		!strings.Contains(out, "source:  "+cfg) || !strings.Contains(out, "error:   configuration: command") {
		t.Errorf("report:\n%s", out)
	}
}
