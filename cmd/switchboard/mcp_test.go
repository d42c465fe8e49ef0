package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runMCPTest(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"mcp"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

func TestMCPAddRemoveImport(t *testing.T) {
	home := t.TempDir()
	ws := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("CODEX_HOME", "")
	for _, k := range []string{"GH_TOKEN", "K", "FIGMA_TOKEN", "HTTPS_PROXY"} {
		t.Setenv(k, "set")
	}
	user := filepath.Join(home, ".config", "switchboard", "mcp.json")
	const orig = "{\n  // mine\n  \"mcpServers\": {\n    \"keep\": {\"command\": \"k\"}, // keep this\n  },\n}\n"
	if err := os.MkdirAll(filepath.Dir(user), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(user, []byte(orig), 0o600)

	if out, errs, code := runMCPTest(t, "add", "gh", "--env", "TOKEN=${env:GH_TOKEN}", "--env", "PLAIN=sekrit-value", "--workspace", ws, "--", "npx", "-y", "gh-mcp"); code != 0 {
		t.Fatalf("add: %d %s %s", code, out, errs)
	}
	out, _, code := runMCPTest(t, "get", "gh", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "env TOKEN=${env:GH_TOKEN}") || strings.Contains(out, "sekrit") || !strings.Contains(out, "npx -y gh-mcp") {
		t.Errorf("get gh = %d\n%s", code, out)
	}
	if _, errs, code := runMCPTest(t, "add", "gh", "--", "other"); code != 1 || !strings.Contains(errs, "already defined") {
		t.Errorf("second add = %d %s", code, errs)
	}
	if _, errs, code := runMCPTest(t, "add", "a__b", "--", "x"); code != 2 || !strings.Contains(errs, `"__"`) {
		t.Errorf("add a__b = %d %s", code, errs)
	}
	if _, errs, code := runMCPTest(t, "add", "w", "--url", "https://h/mcp", "--transport", "sse", "--header", "X-Key: ${env:K}", "--scope", "workspace", "--workspace", ws); code != 0 {
		t.Fatalf("add workspace: %s", errs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".switchboard", "mcp.json")); !strings.Contains(string(b), `"type": "sse"`) {
		t.Errorf("workspace file:\n%s", b)
	}
	if out, _, _ := runMCPTest(t, "list", "--workspace", ws); !strings.Contains(out, "gh\tstdio") || !strings.Contains(out, "w\tsse") || !strings.Contains(out, "keep\tstdio") {
		t.Errorf("list:\n%s", out)
	}
	if _, errs, code := runMCPTest(t, "remove", "gh"); code != 0 {
		t.Fatalf("remove: %s", errs)
	}
	if b, _ := os.ReadFile(user); string(b) != orig {
		t.Errorf("add+remove changed the user file:\n%s", b)
	}

	// Import from Codex: dry run writes nothing; then it adds, skipping the bad name and the
	// name that exists.
	codex := filepath.Join(home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(codex), 0o700)
	data, err := os.ReadFile("../../mcpbridge/config/testdata/configs/codex-config.toml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(codex, append(data, "\n[mcp_servers.keep]\ncommand = \"other\"\n"...), 0o600)
	out, errs, code := runMCPTest(t, "import", "--from", "codex", "--dry-run", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "Would add context7") || !strings.Contains(out, "Skipped bad__name") || !strings.Contains(out, "Skipped keep") || !strings.Contains(out, "already defined") {
		t.Errorf("dry run = %d\n%s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(user); string(b) != orig {
		t.Errorf("dry run wrote the file:\n%s", b)
	}
	out, _, code = runMCPTest(t, "import", "--from", "codex", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "2 of 4 added") {
		t.Errorf("import = %d\n%s", code, out)
	}
	b, _ := os.ReadFile(user)
	if !strings.HasPrefix(string(b), "{\n  // mine\n  \"mcpServers\": {\n    \"keep\": {\"command\": \"k\"}, // keep this\n") || !strings.Contains(string(b), `"Authorization": "Bearer ${env:FIGMA_TOKEN}"`) {
		t.Errorf("after import:\n%s", b)
	}
	out, _, _ = runMCPTest(t, "list", "--workspace", ws)
	if !strings.Contains(out, "context7\tstdio") || !strings.Contains(out, "figma\thttp") {
		t.Errorf("list after import:\n%s", out)
	}
}

// ${workspaceFolder} in the user's mcp.json is the folder --workspace names (default: the current
// directory), as in the editor with that folder open.
func TestMCPGetWorkspaceFolderInUserFile(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	user := filepath.Join(cfg, "switchboard", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte(`{"mcpServers": {"u": {"command": "node", "cwd": "${workspaceFolder}"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"mcp", "get", "u", "--workspace", ws}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "  cwd: "+ws+"\n") {
		t.Errorf("mcp get u --workspace %s: exit %d, stdout %q, stderr %q; want cwd %s", ws, code, stdout.String(), stderr.String(), ws)
	}
}

// TestMCPListGetRejectedEntry: an entry the configuration rejects (here: a header naming a
// variable not set in this environment, as README advises writing secrets) is listed, and get
// names its file and problem; get said "no server named gh" and list left it out.
func TestMCPListGetRejectedEntry(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("SB_TEST_UNSET_TOKEN", "")
	os.Unsetenv("SB_TEST_UNSET_TOKEN")
	user := filepath.Join(cfg, "switchboard", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte(`{"mcpServers": {
		"ok": {"command": "node"},
		"gh": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${env:SB_TEST_UNSET_TOKEN}"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"mcp", "get", "gh", "--workspace", ws}, &stdout, &stderr)
	want := "switchboard mcp: gh in " + user + " cannot be used: headers.Authorization: environment variable SB_TEST_UNSET_TOKEN is not set"
	if code != 1 || !strings.Contains(stderr.String(), want) || strings.Contains(stderr.String(), "no server named") ||
		strings.Count(stderr.String(), "SB_TEST_UNSET_TOKEN is not set") != 1 {
		t.Errorf("mcp get gh: exit %d, stderr %q; want 1 and %q once", code, stderr.String(), want)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"mcp", "get", "ok", "--workspace", ws}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Errorf("mcp get ok: exit %d, stderr %q; want 0 and nothing of gh", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"mcp", "list", "--workspace", ws}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "gh\terror\theaders.Authorization: environment variable SB_TEST_UNSET_TOKEN is not set") ||
		!strings.Contains(stdout.String(), "ok\tstdio\tnode\t") {
		t.Errorf("mcp list: exit %d, stdout %q", code, stdout.String())
	}
}
