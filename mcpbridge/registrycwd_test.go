package mcpbridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// TestRegistryEntryRunsOutsideTheRepository: a server installed from a registry (its entry has
// "registry" and, as Verify requires, no cwd) does not run in the host's working folder, which
// is the editor's workspace. There, `npx -y @acme/gh@1.0.0` runs a node_modules/@acme/gh@1.0.0
// the repository ships (and a project .npmrc picks the package registry): the launch the
// organisation's registry admitted would run the repository's code.
func TestRegistryEntryRunsOutsideTheRepository(t *testing.T) {
	repo := t.TempDir()
	t.Chdir(repo) // the host runs from the workspace folder, as editors start it
	out := filepath.Join(t.TempDir(), "cwd")
	cfg := stdioCfg("gh")
	cfg.Command, cfg.Args = "/bin/sh", []string{"-c", `pwd -P > "$0"; exec "$1"`, out, mcptestBin}
	cfg.Registry = &config.RegistryRef{URL: "https://registry.example.com", Name: "io.github.acme/gh", Version: "1.0.0"}
	r := newTestRegistry(t, Options{})
	if st := applyAndWait(t, r, cfg); st["gh"].State != StateReady {
		t.Fatalf("server: %+v", st["gh"])
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if dir := strings.TrimSpace(string(got)); dir != "/" {
		t.Errorf("the registry's server ran in %s, want / (never the workspace %s)", dir, repo)
	}
}

// TestUserPackageRunnerRunsOutsideTheRepository: the user's own `npx -y pkg` server (no cwd)
// runs from /, not the workspace: there npx runs the package from a node_modules the opened
// repository ships, or fetches it through its .npmrc, so opening a repository would replace a
// server the user trusts in every folder. A server the workspace defines (the person trusted it
// there) and a program that is not a package runner still run in the host's folder.
func TestUserPackageRunnerRunsOutsideTheRepository(t *testing.T) {
	repo := t.TempDir()
	t.Chdir(repo) // the host runs from the workspace folder, as editors start it
	bin := t.TempDir()
	for _, name := range []string{"npx", "python3", "server"} {
		script := "#!/bin/sh\npwd -P > \"$OUT\"\nexec " + mcptestBin + "\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	repoReal, _ := filepath.EvalSymlinks(repo)
	for _, tc := range []struct {
		name, command string
		args          []string
		workspace     bool
		want          string
	}{
		{"user-npx", "npx", []string{"-y", "@acme/gh"}, false, "/"},
		{"ws-npx", "npx", []string{"-y", "@acme/gh"}, true, repoReal},
		// python -m imports the module from the working folder first.
		{"user-python-m", "python3", []string{"-m", "acme_gh"}, false, "/"},
		{"user-python-script", "python3", []string{"/opt/acme/gh.py"}, false, repoReal},
		{"user-plain", "server", nil, false, repoReal},
	} {
		out := filepath.Join(t.TempDir(), "cwd")
		cfg := stdioCfg(tc.name)
		cfg.Command, cfg.Args = filepath.Join(bin, tc.command), tc.args
		cfg.Env = map[string]string{"OUT": out}
		cfg.WorkspaceOnly = tc.workspace
		r := newTestRegistry(t, Options{Trusted: func(config.ServerConfig) bool { return true }})
		if st := applyAndWait(t, r, cfg); st[tc.name].State != StateReady {
			t.Fatalf("%s: %+v", tc.name, st[tc.name])
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if dir := strings.TrimSpace(string(got)); dir != tc.want {
			t.Errorf("%s ran in %s, want %s", tc.name, dir, tc.want)
		}
	}
}

// TestUserPackageRunnerFailureSaysWhereItRan: a user's python -m or npx server that worked from
// the open folder (its module there) fails from /; the failure tells the person where it ran and
// how to give it a folder, not only the runner's "No module named ...".
func TestUserPackageRunnerFailureSaysWhereItRan(t *testing.T) {
	t.Chdir(t.TempDir())
	bin := t.TempDir()
	script := "#!/bin/sh\necho \"No module named acme_gh\" >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "python3"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := stdioCfg("user-python-m")
	cfg.Command, cfg.Args = filepath.Join(bin, "python3"), []string{"-m", "acme_gh"}
	r := newTestRegistry(t, Options{Trusted: func(config.ServerConfig) bool { return true }})
	st := applyAndWait(t, r, cfg)["user-python-m"]
	if st.State != StateFailed {
		t.Fatalf("state %s, want failed: %+v", st.State, st)
	}
	if !strings.Contains(st.Error, `ran from /`) || !strings.Contains(st.Error, `"cwd"`) {
		t.Errorf("error does not say it ran from / and how to give it a folder: %q", st.Error)
	}
}
