package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/permissions"
)

func TestAllow(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	def := filepath.Join(cfg, "switchboard", "allow_tool")
	other := filepath.Join(t.TempDir(), "other_allow")
	broken := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(broken, []byte("ok\nnot ok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args       []string
		code       int
		out, errIn string // errIn: a substring of stderr
	}{
		{[]string{"list"}, 0, "# " + def + "\n# (no entries)\n", ""},
		{[]string{"set", "mcp__github__", "mcp__github__list_issues", "mcp__github__get_issue"}, 0,
			"# " + def + "\nmcp__github__list_issues\nmcp__github__get_issue\n", ""},
		{[]string{"set", "mcp__db__", "mcp__db__*", "mcp__db__x"}, 0,
			"# " + def + "\nmcp__github__list_issues\nmcp__github__get_issue\nmcp__db__*\n", ""},
		{[]string{"set", "mcp__github__"}, 0, "# " + def + "\nmcp__db__*\n", ""},
		{[]string{"list", "--json"}, 0, "{\n  \"path\": \"" + def + "\",\n  \"entries\": [\n    \"mcp__db__*\"\n  ]\n}\n", ""},
		{[]string{"set", "mcp__x__", "mcp__x__a", "--file", other}, 0, "# " + other + "\nmcp__x__a\n", ""},
		{[]string{"list", "--file=" + other}, 0, "# " + other + "\nmcp__x__a\n", ""},
		{[]string{"set", "github"}, 2, "", `prefix "github" must have the form mcp__<server>__`},
		{[]string{"set", "mcp__a__b__"}, 2, "", `must not contain "__"`},
		{[]string{"set", "mcp__db__", "mcp__gh__x"}, 2, "", `entry "mcp__gh__x" is not an entry of server "db"`},
		{[]string{"set", "mcp__db__", "mcp__db__a b"}, 2, "", `invalid character ' '`},
		{[]string{"set"}, 2, "", "set needs a PREFIX"},
		{[]string{"list", "extra"}, 2, "", "list takes no arguments"},
		{[]string{"list", "--bogus"}, 2, "", "unknown flag --bogus"},
		{[]string{"list", "--file"}, 2, "", "--file needs a file name"},
		{[]string{"frob"}, 2, "", `unknown subcommand "frob"`},
		{nil, 2, "", "usage:"},
		{[]string{"list", "--file", broken}, 1, "", broken + ":2: "},
		{[]string{"set", "mcp__db__", "--file", broken}, 1, "", broken + ":2: "},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"allow"}, tc.args...), &stdout, &stderr)
		if code != tc.code {
			t.Errorf("allow %q: exit %d, want %d; stderr: %s", tc.args, code, tc.code, stderr.String())
		}
		if diff := cmp.Diff(tc.out, stdout.String()); diff != "" {
			t.Errorf("allow %q: stdout (-want +got):\n%s", tc.args, diff)
		}
		if tc.errIn == "" && stderr.Len() > 0 || !strings.Contains(stderr.String(), tc.errIn) {
			t.Errorf("allow %q: stderr %q, want it to contain %q", tc.args, stderr.String(), tc.errIn)
		}
	}
	if data, _ := os.ReadFile(broken); string(data) != "ok\nnot ok\n" {
		t.Errorf("broken file overwritten: %q", data)
	}
}

// "switchboard allow set mcp__github__" deleted the entries of server "github_" (a raw prefix of
// their names). Now a server name ending in '_' is refused with the rule, an entry that names no
// one server makes the file malformed (named by file:line, never rewritten), and set touches one
// server's entries only.
func TestAllowSetOneServer(t *testing.T) {
	dir := t.TempDir()
	mixed := filepath.Join(dir, "mixed")
	const mixedContent = "mcp__github__*\nmcp__github___delete_repo\n"
	lookalike := filepath.Join(dir, "lookalike")
	for f, c := range map[string]string{mixed: mixedContent, lookalike: "mcp__github__a\nmcp__github-x__*\nedit_file\n"} {
		if err := os.WriteFile(f, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args       []string
		code       int
		out, errIn string
	}{
		{[]string{"set", "mcp__github__", "--file", mixed}, 1, "", mixed + ":2: "},
		{[]string{"set", "mcp__github___", "mcp__github___x", "--file", lookalike}, 2, "", `server name "github_" must not end in '_'`},
		{[]string{"set", "mcp__github__", "mcp__gith*", "--file", lookalike}, 2, "", `cannot span servers`},
		{[]string{"set", "mcp__github__", "--file", lookalike}, 0, "# " + lookalike + "\nmcp__github-x__*\nedit_file\n", ""},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"allow"}, tc.args...), &stdout, &stderr)
		if code != tc.code || stdout.String() != tc.out || !strings.Contains(stderr.String(), tc.errIn) {
			t.Errorf("allow %q: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr containing %q",
				tc.args, code, stdout.String(), stderr.String(), tc.code, tc.out, tc.errIn)
		}
	}
	if data, _ := os.ReadFile(mixed); string(data) != mixedContent {
		t.Errorf("malformed file rewritten: %q", data)
	}
}

// `switchboard call mcp__github___delete_repo` with a config defining server "github_" answered
// "Unknown tool"; now the config error names the rule, and nothing of "github_" starts.
func TestCallAmbiguousServerName(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	file := filepath.Join(dir, "mcp.json")
	marker := filepath.Join(dir, "started")
	cfg := `{"mcpServers": {"github_": {"command": "sh", "args": ["-c", "touch ` + marker + `"]}}}`
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"call", "mcp__github___delete_repo", "--config", file, "--mode", "always-allow"}, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), `server name "github_" must not end in '_'`) {
		t.Errorf("call: exit %d, stderr %q; want a failure naming the server-name rule", code, errb.String())
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("server github_ was started (%v)", err)
	}
}

// `switchboard allow set` for a trusted workspace-only server binds the entries to its current
// definition (the workspace named by --workspace), as the editor's "always" answer does, so the
// gate honours them; the same grant does not survive the workspace file changing the command,
// even once the changed definition is trusted. For an untrusted server it says that the entries do
// not count for it.
func TestAllowSetTrustedWorkspaceServer(t *testing.T) {
	cfgDir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgDir)
	ws := t.TempDir()
	writeWS := func(command string) string {
		t.Helper()
		def := `{"mcpServers": {"wsonly": {"command": "` + command + `", "args": ["serve"]}}}`
		if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(def), 0o600); err != nil {
			t.Fatal(err)
		}
		cfgs, _ := config.LoadConfig(config.ConfigSources{WorkspaceFolders: []string{ws}})
		for _, c := range cfgs {
			if c.Name == "wsonly" && c.WorkspaceOnly {
				return c.Fingerprint()
			}
		}
		t.Fatalf("no workspace-only server wsonly in %s", def)
		return ""
	}
	trustPath := permissions.DefaultTrustPath()
	trust := func(fp string) {
		t.Helper()
		ts, err := permissions.OpenTrustStore(trustPath)
		if err == nil {
			err = ts.Set("wsonly", fp, true)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// runs reports whether the gate runs mcp__wsonly__echo of the definition fp without asking
	// (there is no prompter: anything that would ask is denied).
	runs := func(fp string) bool {
		t.Helper()
		al, _ := permissions.OpenAllowlist(permissions.DefaultAllowlistPath())
		ts, _ := permissions.OpenTrustStore(trustPath)
		g := permissions.NewGate(permissions.GateOptions{Allowlist: al, Trust: ts})
		d, _ := g.Check(context.Background(), permissions.Request{Tool: "mcp__wsonly__echo", Server: "wsonly", Definition: fp, Mode: permissions.SingleConfirm})
		return d.Allowed
	}
	allowSet := func(entries ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"allow", "set", "mcp__wsonly__", "--workspace", ws}, entries...), &stdout, &stderr)
		return code, stderr.String()
	}
	t.Chdir(ws) // without --workspace, the workspace is the current directory (as for check and pins)

	fp := writeWS("wsonly-server")
	// Not trusted yet: written, but the person is told it does not count for the server.
	if code, stderr := allowSet("mcp__wsonly__echo"); code != 0 || !strings.Contains(stderr, "not trusted") {
		t.Errorf("untrusted: exit %d, stderr %q; want 0 and a note that it is not trusted", code, stderr)
	}
	if runs(fp) {
		t.Errorf("an untrusted definition's grant counts")
	}
	trust(fp)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"allow", "set", "mcp__wsonly__", "mcp__wsonly__echo"}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("trusted: exit %d, stderr %q", code, stderr.String())
	}
	if !runs(fp) {
		t.Fatalf("after allow set for the trusted definition, the call still asks")
	}
	if code, _ := allowSet(); code != 0 || runs(fp) {
		t.Errorf("after revoking (exit %d), the call runs without asking", code)
	}
	allowSet("mcp__wsonly__*")
	if !runs(fp) {
		t.Fatalf("after allow set mcp__wsonly__*, the call still asks")
	}

	// The repository changes the command; the person trusts the new definition.
	changed := writeWS("/tmp/evil-wsonly-server")
	trust(changed)
	if runs(changed) {
		t.Errorf("the grant for wsonly survived the workspace file changing its command")
	}
}
