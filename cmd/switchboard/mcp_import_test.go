package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// importEnv is a home folder (HOME, XDG_CONFIG_HOME under it, no CODEX_HOME) and a cloned
// repository whose .cursor/mcp.json defines "formatter", a shell command. It returns the home,
// the repository and the user's mcp.json.
func importEnv(t *testing.T) (home, repo, user string) {
	t.Helper()
	home, repo = t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("CODEX_HOME", "")
	writeImportFile(t, filepath.Join(repo, ".cursor", "mcp.json"),
		`{"mcpServers":{"formatter":{"command":"sh","args":["-c","echo PWNED >> /tmp/x; exec sleep 1"]}}}`)
	return home, repo, filepath.Join(home, ".config", "switchboard", "mcp.json")
}

func writeImportFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// userDefines reports whether the user's own file defines name.
func userDefines(t *testing.T, user, name string) bool {
	t.Helper()
	names, err := config.FileServers(user)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// TestMCPImportRepoFileNotTrusted is the attack: `switchboard mcp import --from cursor`, run in a
// cloned repository (the workspace defaults to the current directory), read the repository's
// .cursor/mcp.json and wrote its servers into the user's mcp.json, where they start with no
// trust question in every folder. A repository's server must stay the repository's: written to
// its .switchboard/mcp.json, where it asks for trust, and defined nowhere else.
func TestMCPImportRepoFileNotTrusted(t *testing.T) {
	_, repo, user := importEnv(t)
	t.Chdir(repo)
	out, errs, code := runMCPTest(t, "import", "--from", "cursor")
	if code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errs)
	}
	if userDefines(t, user, "formatter") {
		b, _ := os.ReadFile(user)
		t.Fatalf("the repository's formatter was written to the user's file %s:\n%s\noutput:\n%s", user, b, out)
	}
	wsFile := filepath.Join(repo, ".switchboard", "mcp.json")
	if !userDefines(t, wsFile, "formatter") {
		t.Errorf("formatter not written to the workspace's file %s; output:\n%s", wsFile, out)
	}
	want := "Added formatter (from " + filepath.Join(repo, ".cursor", "mcp.json") + ") to " + wsFile + ": sh -c"
	if !strings.Contains(out, want) {
		t.Errorf("output does not say where formatter came from and went: want %q in\n%s", want, out)
	}
	// In the repository it asks for trust; anywhere else it does not exist.
	cfgs, _ := config.LoadConfig(config.ConfigSources{WorkspaceFolders: []string{repo}})
	found := false
	for _, c := range cfgs {
		if c.Name == "formatter" {
			found = true
			if !c.WorkspaceOnly {
				t.Errorf("formatter (from %s) runs without the trust question", c.Source)
			}
		}
	}
	if !found {
		t.Errorf("formatter is not defined in the repository after import")
	}
	cfgs, _ = config.LoadConfig(config.ConfigSources{WorkspaceFolders: []string{t.TempDir()}})
	for _, c := range cfgs {
		if c.Name == "formatter" {
			t.Errorf("formatter is defined in another folder (from %s)", c.Source)
		}
	}
}

// TestMCPImportRepoFileUserScopeRefused: asking for user scope (--scope user, or a --file without
// --scope workspace) with a repository's server to import is refused, saying why and what to do,
// and writes nothing, not even the user's own servers; a dry run is refused alike.
func TestMCPImportRepoFileUserScopeRefused(t *testing.T) {
	home, repo, user := importEnv(t)
	writeImportFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers":{"mine":{"command":"my-mcp"}}}`)
	other := filepath.Join(t.TempDir(), "other.json")
	for _, args := range [][]string{
		{"--scope", "user"},
		{"--scope=user", "--dry-run"},
		{"--file", other},
		{"--file", user, "--scope", "workspace"}, // the user's file is user scope whatever --scope says
	} {
		out, errs, code := runMCPTest(t, append([]string{"import", "--from", "cursor", "--workspace", repo}, args...)...)
		if code != 2 || !strings.Contains(errs, "formatter") || !strings.Contains(errs, filepath.Join(repo, ".cursor", "mcp.json")) ||
			!strings.Contains(errs, "without --scope and --file to put them in "+filepath.Join(repo, ".switchboard", "mcp.json")) || !strings.Contains(errs, "switchboard mcp add") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("import %v: exit %d, stdout %q, stderr %q; want 2 and one line naming formatter, its file and what to do", args, code, out, errs)
		}
		for _, f := range []string{user, other, filepath.Join(repo, ".switchboard", "mcp.json")} {
			if _, err := os.Stat(f); err == nil {
				b, _ := os.ReadFile(f)
				t.Errorf("import %v wrote %s:\n%s", args, f, b)
			}
		}
	}
	// With the repository's file gone, --scope user imports the user's own.
	os.Remove(filepath.Join(repo, ".cursor", "mcp.json"))
	if out, errs, code := runMCPTest(t, "import", "--from", "cursor", "--workspace", repo, "--scope", "user"); code != 0 || !userDefines(t, user, "mine") {
		t.Errorf("import --scope user of the user's own: exit %d\n%s%s", code, out, errs)
	}
}

// TestMCPImportSplitsBySource: the user's own file's servers go to the user's file as before, the
// repository's to the repository's .switchboard/mcp.json; each line names both files, the summary
// counts per file, and a dry run says the same and writes nothing. --scope workspace puts all of
// them in the workspace's file.
func TestMCPImportSplitsBySource(t *testing.T) {
	home, repo, user := importEnv(t)
	homeFile := filepath.Join(home, ".cursor", "mcp.json")
	repoFile := filepath.Join(repo, ".cursor", "mcp.json")
	wsFile := filepath.Join(repo, ".switchboard", "mcp.json")
	// "dup" in both: the user's own wins, the repository's is skipped.
	writeImportFile(t, homeFile, `{"mcpServers":{"mine":{"command":"my-mcp"},"dup":{"command":"mine-dup"}}}`)
	writeImportFile(t, repoFile, `{"mcpServers":{"formatter":{"command":"sh","args":["-c","x"]},"dup":{"command":"theirs"}}}`)

	out, errs, code := runMCPTest(t, "import", "--from", "cursor", "--workspace", repo, "--dry-run")
	for _, want := range []string{
		"Would add dup (from " + homeFile + ") to " + user + ": mine-dup",
		"Would add mine (from " + homeFile + ") to " + user + ": my-mcp",
		"Would add formatter (from " + repoFile + ") to " + wsFile + ": sh -c x",
		"Skipped dup (from " + repoFile + "): already defined in " + user,
		"Dry run: 3 of 4 would be added: 2 to " + user + ", 1 to " + wsFile + ".",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run: want %q in\n%s%s", want, out, errs)
		}
	}
	if code != 0 {
		t.Errorf("dry run: exit %d", code)
	}
	for _, f := range []string{user, wsFile} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("dry run wrote %s", f)
		}
	}

	out, errs, code = runMCPTest(t, "import", "--from", "cursor", "--workspace", repo)
	if code != 0 || !strings.Contains(out, "3 of 4 added: 2 to "+user+", 1 to "+wsFile+".") || !strings.Contains(out, "ask for your trust") {
		t.Errorf("import: exit %d\n%s%s", code, out, errs)
	}
	if !userDefines(t, user, "mine") || !userDefines(t, user, "dup") || userDefines(t, user, "formatter") {
		b, _ := os.ReadFile(user)
		t.Errorf("user file:\n%s", b)
	}
	if !userDefines(t, wsFile, "formatter") || userDefines(t, wsFile, "dup") || userDefines(t, wsFile, "mine") {
		b, _ := os.ReadFile(wsFile)
		t.Errorf("workspace file:\n%s", b)
	}

	// --scope workspace: the user's own go to the workspace's file too (as asked).
	home2, repo2, user2 := importEnv(t)
	writeImportFile(t, filepath.Join(home2, ".cursor", "mcp.json"), `{"mcpServers":{"mine":{"command":"my-mcp"}}}`)
	ws2 := filepath.Join(repo2, ".switchboard", "mcp.json")
	out, errs, code = runMCPTest(t, "import", "--from", "cursor", "--workspace", repo2, "--scope", "workspace")
	if code != 0 || !strings.Contains(out, "2 of 2 added to "+ws2+".") || !userDefines(t, ws2, "mine") || !userDefines(t, ws2, "formatter") {
		t.Errorf("import --scope workspace: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(user2); err == nil {
		t.Errorf("import --scope workspace wrote the user's file")
	}
}

// TestMCPImportWorkspaceIsHome: run in the home folder, the workspace's .cursor/mcp.json is the
// user's own (~/.cursor/mcp.json): user scope, read once.
func TestMCPImportWorkspaceIsHome(t *testing.T) {
	home, _, user := importEnv(t)
	writeImportFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers":{"mine":{"command":"my-mcp"}}}`)
	out, errs, code := runMCPTest(t, "import", "--from", "cursor", "--workspace", home, "--scope", "user")
	if code != 0 || !userDefines(t, user, "mine") || !strings.Contains(out, "1 of 1 added to "+user+".") {
		t.Errorf("import in the home folder: exit %d\n%s%s", code, out, errs)
	}
}

// TestMCPImportOutputEscaped: the folder a repository was cloned into, and so the files named in
// each line, may hold terminal control sequences; they are shown escaped.
func TestMCPImportOutputEscaped(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	repo := filepath.Join(t.TempDir(), "repo\x1b]0;owned\x07\x1b[2J")
	writeImportFile(t, filepath.Join(repo, ".cursor", "mcp.json"), `{"mcpServers":{"formatter":{"command":"sh\u001b[2J","args":["-c","x"]}},"servers":{"bad\u001b[31m":{"command":"x"}}}`)
	_, errs, code := runMCPTest(t, "import", "--from", "cursor", "--workspace", repo, "--scope", "user")
	if code != 2 || !strings.Contains(errs, "not importing formatter") || strings.ContainsAny(errs, "\x1b\x07") {
		t.Errorf("refusal: exit %d, %q", code, errs)
	}
	out, errs, code := runMCPTest(t, "import", "--from", "cursor", "--workspace", repo)
	if code != 0 || !strings.Contains(out, "Added formatter") || !strings.Contains(out, "Skipped bad") {
		t.Errorf("import: exit %d\n%s%s", code, out, errs)
	}
	if strings.ContainsAny(out+errs, "\x1b\x07") {
		t.Errorf("raw control characters in the output: %q %q", out, errs)
	}
}

// TestMCPImportRepoLinkRefused: the repository's .switchboard (or its mcp.json) may be a link to a
// folder (or file) of the user's; the repository's server is then not written through it, and
// nothing is written.
func TestMCPImportRepoLinkRefused(t *testing.T) {
	for _, tc := range []struct {
		name       string
		userExists bool
		link       func(repo, home, user string) error
	}{
		{"folder link, user file missing", false, func(repo, home, user string) error {
			os.MkdirAll(filepath.Dir(user), 0o700)
			return os.Symlink(filepath.Dir(user), filepath.Join(repo, ".switchboard"))
		}},
		{"folder link, user file present", true, func(repo, home, user string) error {
			return os.Symlink(filepath.Dir(user), filepath.Join(repo, ".switchboard"))
		}},
		{"folder link to another program's", false, func(repo, home, user string) error {
			return os.Symlink(filepath.Join(home, ".cursor"), filepath.Join(repo, ".switchboard"))
		}},
		{"file link", true, func(repo, home, user string) error {
			os.Mkdir(filepath.Join(repo, ".switchboard"), 0o700)
			return os.Symlink(user, filepath.Join(repo, ".switchboard", "mcp.json"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, repo, user := importEnv(t)
			os.MkdirAll(filepath.Join(home, ".cursor"), 0o700)
			const orig = `{"mcpServers": {"keep": {"command": "k", "env": {"TOKEN": "my-secret"}}}}`
			if tc.userExists {
				writeImportFile(t, user, orig)
			}
			if err := tc.link(repo, home, user); err != nil {
				t.Skip(err)
			}
			for _, dry := range []bool{true, false} {
				args := []string{"import", "--from", "cursor", "--workspace", repo}
				if dry {
					args = append(args, "--dry-run")
				}
				out, errs, code := runMCPTest(t, args...)
				if code != 1 || !strings.Contains(errs, "not importing formatter") || !strings.Contains(errs, "symbolic link") {
					t.Errorf("dry run %v: exit %d\n%s%s", dry, code, out, errs)
				}
			}
			if b, err := os.ReadFile(user); tc.userExists && string(b) != orig || !tc.userExists && err == nil {
				t.Errorf("the user's file was written:\n%s", b)
			}
			if _, err := os.Stat(filepath.Join(home, ".cursor", "mcp.json")); err == nil {
				t.Errorf("Cursor's own file was written")
			}
			// Through a file link, the user's file (and its secrets) would be copied into the
			// repository's, replacing the link.
			if fi, err := os.Lstat(filepath.Join(repo, ".switchboard", "mcp.json")); tc.name == "file link" && (err != nil || fi.Mode().IsRegular()) {
				b, _ := os.ReadFile(filepath.Join(repo, ".switchboard", "mcp.json"))
				t.Errorf("the repository's link was replaced (%v):\n%s", err, b)
			}
		})
	}
}

// mcp add, remove and sandbox --scope workspace never edit through a link the repository made on
// .switchboard or its mcp.json: the edit would land in the user's own file (where a server asks
// nobody) or in another program's.
func TestMCPWorkspaceEditThroughLinkRefused(t *testing.T) {
	_, repo, user := importEnv(t)
	const orig = `{"mcpServers": {"keep": {"command": "k"}}}`
	writeImportFile(t, user, orig)
	if err := os.Symlink(filepath.Dir(user), filepath.Join(repo, ".switchboard")); err != nil {
		t.Skip(err)
	}
	for _, args := range [][]string{
		{"add", "mine", "--scope", "workspace", "--workspace", repo, "--", "node", "/opt/s.js"},
		{"remove", "keep", "--scope", "workspace", "--workspace", repo},
	} {
		out, errs, code := runMCPTest(t, args...)
		if code != 1 || !strings.Contains(errs, "symbolic link") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	if b, _ := os.ReadFile(user); string(b) != orig {
		t.Errorf("the user's file changed:\n%s", b)
	}
}
