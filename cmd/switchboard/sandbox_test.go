package main

import (
	"bytes"
	"encoding/json"
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
	bin := checkBuildMCPTest(t) // before HOME moves: go build's cache is under it
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
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

// TestMCPSandboxAllow: mcp sandbox NAME --allow-read widens the entry's sandbox, keeps the
// file's comments, and says what the server may now touch; a server without a sandbox is refused.
func TestMCPSandboxAllow(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mcp.json")
	in := "{\n  // mine\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\", \"sandbox\": true},\n    \"open\": {\"command\": \"x\"}\n  }\n}\n"
	if err := os.WriteFile(file, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"mcp", "sandbox", "fs", "--allow-read", "/srv/data", "--file", file}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "fs in " + file + ": sandboxed: no network, writes only its own folder, also reads /srv/data.\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	b, _ := os.ReadFile(file)
	if !strings.Contains(string(b), "// mine") || !strings.Contains(string(b), `"sandbox": {"read":["/srv/data"]}`) {
		t.Errorf("file:\n%s", b)
	}
	errb.Reset()
	if code := run([]string{"mcp", "sandbox", "open", "--allow-read", "/srv/data", "--file", file}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "has no sandbox") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}

// TestCheckPolicySandboxRequired: with mcpSandbox "required" in a real root-owned policy file,
// a sandboxed server starts (through this binary as its launcher) and one without a sandbox,
// or with "sandbox": false, is blocked and never runs: check names the rule, its place and what
// to do, and --json gives the deciding rule.
func TestCheckPolicySandboxRequired(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox on this system: %v", err)
	}
	bin := checkBuildMCPTest(t) // before HOME moves: go build's cache is under it
	file := withPolicyTree(t, "{\n  \"mcpSandbox\": \"required\",\n  \"adminContact\": {\"email\": \"it@example.com\"}\n}")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	run := "touch " + marker + "; exec " + bin
	cfg := checkWriteJSON(t, filepath.Join(dir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"boxed": map[string]any{"command": bin, "sandbox": true},
		"plain": map[string]any{"command": "/bin/sh", "args": []string{"-c", run}},
		"off":   map[string]any{"command": "/bin/sh", "args": []string{"-c", run}, "sandbox": false},
	}})
	var stdout, stderr bytes.Buffer
	if code := runCheck([]string{"--config", cfg, "--pins", filepath.Join(dir, "pins.json")}, &stdout, &stderr); code != 0 {
		t.Errorf("exit %d (blocked is a state, not an error)\n%s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"boxed  READY  stdio",
		"plain  BLOCKED", "off  BLOCKED",
		`blocked: Blocked by your organisation: mcpSandbox "required" in ` + file + `:2:17: add "sandbox": true to the server's entry. Contact it@example.com.`,
		"rule local servers run sandboxed only: " + file + "#/mcpSandbox (line 2)",
		"server plain: blocked by " + file + "#/mcpSandbox (line 2)",
		"server boxed: allowed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s\nstderr:\n%s", want, out, stderr.String())
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("an unsandboxed server ran under mcpSandbox required")
	}
	stdout.Reset()
	runCheck([]string{"--config", cfg, "--pins", filepath.Join(dir, "pins.json"), "--json"}, &stdout, &stderr)
	var rep struct {
		Policy struct {
			Servers map[string]struct{ Decision, Rule string } `json:"servers"`
		} `json:"policy"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if s := rep.Policy.Servers["off"]; s.Decision != "blocked" || s.Rule != file+"#/mcpSandbox" || rep.Policy.Servers["boxed"].Decision != "allowed" {
		t.Errorf("json policy = %+v", rep.Policy)
	}
	stdout.Reset()
	runPolicy([]string{"explain", "plain", "--config", cfg}, &stdout, &stderr)
	if out := stdout.String(); !strings.Contains(out, "server plain: blocked") || !strings.Contains(out, "mcpSandbox: required, and the entry has no sandbox") {
		t.Errorf("policy explain plain:\n%s", out)
	}
}
