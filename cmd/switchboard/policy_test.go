package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// withPolicyTree points the policy at a root-owned tree holding settings as
// /etc/switchboard/managed-settings.json (root 0755 directories, a 0644 file) for this test.
func withPolicyTree(t *testing.T, settings string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make root-owned policy files")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	ps := policy.Paths{Dir: filepath.Join(base, "etc", "switchboard"), ClaudeCodeDir: filepath.Join(base, "etc", "claude-code")}
	os.MkdirAll(ps.Dir, 0o755)
	file := filepath.Join(ps.Dir, policy.SettingsFile)
	if err := os.WriteFile(file, []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(file, 0o644)
	old := policyPaths
	policyPaths = func() policy.Paths { return ps }
	t.Cleanup(func() { policyPaths = old })
	return file
}

// TestCheckPolicy (T13a, g): check starts no denied server, shows it blocked with its rule, marks
// denied tools, has a Policy section, exits 0 (blocked is a state); --json gives every server's
// deciding rule.
func TestCheckPolicy(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	bin := checkBuildMCPTest(t)
	file := withPolicyTree(t, "{\n  \"deniedMcpServers\": [{\"serverCommand\": ["+jsonQ(bin)+", \"--instructions\", \"demo\"]}],\n  \"permissions\": {\"deny\": [\"mcp__ok__echo\"]}\n}")
	dir := t.TempDir()
	cfg := checkWriteJSON(t, filepath.Join(dir, "demo.json"), map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": bin, "args": []string{"--instructions", "demo"}},
		"ok":   map[string]any{"command": bin},
	}})
	var stdout, stderr bytes.Buffer
	code := runCheck([]string{"--config", cfg, "--workspace", dir}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Errorf("exit code = %d; want 0\n%s\n%s", code, out, stderr.String())
	}
	for _, want := range []string{
		"demo  BLOCKED", "blocked: Blocked by your organisation: deniedMcpServers[0]",
		"rule:    " + file + "#/deniedMcpServers/0",
		"mcp__ok__echo", "[policy-deny: switchboard policy explain mcp__ok__echo]",
		"\nPolicy\n", "source " + file + " (Switchboard), owner uid 0, mode -rw-r--r--",
		"server demo: blocked by " + file + "#/deniedMcpServers/0 (line 2)",
		"server ok: allowed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	stdout.Reset()
	runCheck([]string{"--config", cfg, "--workspace", dir, "--json"}, &stdout, &stderr)
	var rep struct {
		Policy struct {
			Servers map[string]struct{ Decision, Rule string } `json:"servers"`
		} `json:"policy"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if s := rep.Policy.Servers["demo"]; s.Decision != "blocked" || s.Rule != file+"#/deniedMcpServers/0" || rep.Policy.Servers["ok"].Decision != "allowed" {
		t.Errorf("json policy = %+v", rep.Policy)
	}
}

// TestCheckPolicyBroken (T13d): a policy file with a syntax error, or writable by others, makes
// check exit 2 naming file:line:column (or the file), and blocks every server.
func TestCheckPolicyBroken(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	bin := checkBuildMCPTest(t)
	dir := t.TempDir()
	cfg := checkWriteJSON(t, filepath.Join(dir, "demo.json"), map[string]any{"mcpServers": map[string]any{"ok": map[string]any{"command": bin}}})
	for _, tc := range []struct{ settings, mode, want string }{
		{"{\n  \"deniedMcpServers\": [\n    {\"serverName\": \"x\"},,\n  ]\n}", "", ":3:25: want a JSON value"},
		{`{}`, "0666", "writable by group or others"},
	} {
		file := withPolicyTree(t, tc.settings)
		if tc.mode != "" {
			os.Chmod(file, 0o666)
		}
		var stdout, stderr bytes.Buffer
		code := runCheck([]string{"--config", cfg, "--workspace", dir}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), file) || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %s", tc.want, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "ok  BLOCKED") {
			t.Errorf("%s: a server ran under a broken policy:\n%s", tc.want, stdout.String())
		}
	}
}

// TestPolicyExplain prints the chain for a tool and for a configured server.
func TestPolicyExplain(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	file := withPolicyTree(t, `{"deniedMcpServers": [{"serverName": "shell"}], "permissions": {"ask": ["mcp__github__create_*"]}}`)
	dir := t.TempDir()
	cfg := checkWriteJSON(t, filepath.Join(dir, "c.json"), map[string]any{"mcpServers": map[string]any{"shell": map[string]any{"command": "sh"}}})
	var stdout, stderr bytes.Buffer
	if code := runPolicy([]string{"explain", "mcp__github__create_issue"}, &stdout, &stderr); code != 0 {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "mcp__github__create_issue: policy-ask") || !strings.Contains(out, file+"#/permissions/ask/0") {
		t.Errorf("tool explain:\n%s", out)
	}
	stdout.Reset()
	runPolicy([]string{"explain", "shell", "--config", cfg, "--workspace", dir}, &stdout, &stderr)
	if out := stdout.String(); !strings.Contains(out, "server shell: blocked") || !strings.Contains(out, "deniedMcpServers: matches") || !strings.Contains(out, "people see: Blocked by your organisation") {
		t.Errorf("server explain:\n%s", out)
	}
}

func jsonQ(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCheckManagedMCP (T13c): with a managed-mcp.json only its servers start (as the user's own,
// no trust question); a configured server of another name, or of the same name from the user's
// file, is blocked naming the managed file.
func TestCheckManagedMCP(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	bin := checkBuildMCPTest(t)
	file := withPolicyTree(t, `{}`)
	managed := filepath.Join(filepath.Dir(file), policy.MCPFile)
	if err := os.WriteFile(managed, []byte(`{"mcpServers": {"m": {"command": `+jsonQ(bin)+`}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(managed, 0o644)
	dir := t.TempDir()
	cfg := checkWriteJSON(t, filepath.Join(dir, "c.json"), map[string]any{"mcpServers": map[string]any{
		"other": map[string]any{"command": bin},
	}})
	var stdout, stderr bytes.Buffer
	code := runCheck([]string{"--config", cfg, "--workspace", dir, "--json"}, &stdout, &stderr)
	var rep struct {
		Servers []struct{ Name, State, Source string } `json:"servers"`
		Policy  struct {
			Servers map[string]struct{ Decision, Rule string } `json:"servers"`
		} `json:"policy"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout.String(), stderr.String())
	}
	states := map[string]string{}
	for _, s := range rep.Servers {
		states[s.Name] = s.State + " " + s.Source
	}
	if states["m"] != "ready "+managed || !strings.HasPrefix(states["other"], "blocked") {
		t.Errorf("states = %v", states)
	}
	if d := rep.Policy.Servers["m"]; d.Decision != "exclusive" || !strings.HasPrefix(d.Rule, managed+"#/mcpServers/m") {
		t.Errorf("m decision = %+v", d)
	}
	if d := rep.Policy.Servers["other"]; d.Decision != "blocked" || !strings.HasPrefix(d.Rule, managed+"#/mcpServers") {
		t.Errorf("other decision = %+v", d)
	}
}

// TestPolicyNothingRuns: a denied server's program is never run by check, pins or auth login
// (a marker file its command would make stays absent).
func TestPolicyNothingRuns(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	withPolicyTree(t, `{"deniedMcpServers": [{"serverName": "x"}]}`)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	cfg := checkWriteJSON(t, filepath.Join(dir, "c.json"), map[string]any{"mcpServers": map[string]any{
		"x": map[string]any{"command": "sh", "args": []string{"-c", "touch " + marker}},
	}})
	var out bytes.Buffer
	runCheck([]string{"--config", cfg, "--workspace", dir}, &out, &out)
	runPins([]string{"list", "--config", cfg, "--workspace", dir}, &out, &out)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the denied server's program ran:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "x  BLOCKED") {
		t.Errorf("check output:\n%s", out.String())
	}
}

// TestMCPAddBlockedNote: `mcp add` of a server the policy denies writes it (the file is the
// person's) and says it will not start, and why.
func TestMCPAddBlockedNote(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	withPolicyTree(t, `{"deniedMcpServers": [{"serverCommand": ["npx", "-y", "evil"]}], "adminContact": {"email": "it@example.com"}}`)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"mcp", "add", "ev", "--", "npx", "-y", "evil"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "It will not start: Blocked by your organisation: deniedMcpServers[0]") || !strings.Contains(out, "it@example.com") {
		t.Errorf("output:\n%s", out)
	}
}
