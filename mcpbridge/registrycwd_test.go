package mcpbridge

import (
	"maps"
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
	for _, name := range []string{"npx", "npm", "python3", "server"} {
		script := "#!/bin/sh\npwd -P > \"$OUT\"\nexec " + mcptestBin + "\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	repoReal, _ := filepath.EvalSymlinks(repo)
	other := t.TempDir() // a second workspace folder, not the host's
	otherReal, _ := filepath.EvalSymlinks(other)
	for _, tc := range []struct {
		name, command string
		args          []string
		workspace     bool
		want          string
		folder        string // the workspace folder of the entry's file
	}{
		{"user-npx", "npx", []string{"-y", "@acme/gh"}, false, "/", ""},
		{"user-npm-exec", "npm", []string{"exec", "-y", "--", "@acme/gh"}, false, "/", ""},
		{"ws-npx", "npx", []string{"-y", "@acme/gh"}, true, repoReal, ""},
		// A workspace file's entry runs in the folder it belongs to (where it was trusted), not
		// wherever the host started: there "server.js" would name another repository's file.
		{"ws-other-folder", "server", nil, true, otherReal, other},
		{"ws-npx-other-folder", "npx", []string{"-y", "@acme/gh"}, true, otherReal, other},
		// python -m imports the module from the working folder first.
		{"user-python-m", "python3", []string{"-m", "acme_gh"}, false, "/", ""},
		{"user-python-script", "python3", []string{"/opt/acme/gh.py"}, false, repoReal, ""},
		{"user-plain", "server", nil, false, repoReal, ""},
	} {
		out := filepath.Join(t.TempDir(), "cwd")
		cfg := stdioCfg(tc.name)
		cfg.Command, cfg.Args = filepath.Join(bin, tc.command), tc.args
		cfg.Env = map[string]string{"OUT": out}
		cfg.WorkspaceOnly, cfg.Folder = tc.workspace, tc.folder
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

// TestUserPackageRunnerRelativeArgRefused: the user's own `npx -y
// @modelcontextprotocol/server-filesystem .` runs from / (RunDir), where "." names the whole
// disk: the person meant the open folder and would have granted the agent every file. Such an
// argument is refused before anything runs, saying what to write instead; an absolute path, a
// "cwd" or a server the workspace defines (it runs in its folder) start as before.
func TestUserPackageRunnerRelativeArgRefused(t *testing.T) {
	repo := t.TempDir()
	t.Chdir(repo)
	bin := t.TempDir()
	script := "#!/bin/sh\ncd \"$1\" && pwd -P > \"$OUT\"\nexec " + mcptestBin + "\n"
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	repoReal, _ := filepath.EvalSymlinks(repo)
	elsewhere := t.TempDir()
	elsewhereReal, _ := filepath.EvalSymlinks(elsewhere)
	for _, tc := range []struct {
		name      string
		args      []string // the folder the fake server serves is its first argument
		cwd       string
		workspace bool
		registry  bool   // the entry claims a registry (a workspace's may): it runs from / too
		want      string // the folder it served; "" refused
	}{
		{"dot", []string{"."}, "", false, false, ""},
		{"dot-slash", []string{"./src"}, "", false, false, ""},
		{"parent", []string{".."}, "", false, false, ""},
		{"flag-value", []string{elsewhere, "--root=./data"}, "", false, false, ""},
		// An empty argument (an ${input:...} the person left empty, an empty ${env:...}) is the
		// working folder to a server that resolves it as a path: the whole disk.
		{"empty", []string{""}, "", false, false, ""},
		// A path that climbs back out of where it starts is "." too.
		{"climbs-back", []string{"src/.."}, "", false, false, ""},
		// attack: the repository's own entry, trusted as `npx ... .` (this folder), claims a
		// registry so that it runs from /, where "." is the whole disk.
		{"dot-workspace-registry", []string{"."}, "", true, true, ""},
		{"dot-registry", []string{"."}, "", false, true, ""},
		{"absolute", []string{elsewhere}, "", false, false, elsewhereReal},
		{"absolute-and-empty-flag", []string{elsewhere, "--exclude="}, "", false, false, elsewhereReal},
		{"dot-with-cwd", []string{"."}, elsewhere, false, false, elsewhereReal},
		{"dot-workspace", []string{"."}, "", true, false, repoReal},
	} {
		out := filepath.Join(t.TempDir(), "served")
		cfg := stdioCfg(tc.name)
		cfg.Command, cfg.Args, cfg.Cwd = filepath.Join(bin, "npx"), tc.args, tc.cwd
		cfg.Env = map[string]string{"OUT": out}
		cfg.WorkspaceOnly = tc.workspace
		if tc.registry {
			cfg.Registry = &config.RegistryRef{URL: "https://registry.example.com", Name: "io.github.acme/fs", Version: "1.0.0"}
		}
		st, served := startServing(t, cfg, out)
		if tc.want == "" {
			if st.State != StateFailed || len(served) > 0 {
				t.Errorf("%s: state %s, served %q: want refused before it ran", tc.name, st.State, served)
				continue
			}
			if !strings.Contains(st.Error, "relative path") || !strings.Contains(st.Error, "${workspaceFolder}") || !strings.Contains(st.Error, `"cwd"`) {
				t.Errorf("%s: the error does not say what is wrong and what to write: %q", tc.name, st.Error)
			}
			continue
		}
		if st.State != StateReady {
			t.Errorf("%s: %+v", tc.name, st)
			continue
		}
		if got := strings.TrimSpace(string(served)); got != tc.want {
			t.Errorf("%s served %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestUserPackageRunnerRelativeEnvRefused: a server that takes its folder from a variable
// (ALLOWED_DIR=.) is given / the same way when it runs from /: refused before it runs too. An
// empty variable, a flag-like value and words that are no path start as before.
func TestUserPackageRunnerRelativeEnvRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	bin := t.TempDir()
	script := "#!/bin/sh\ncd \"$ALLOWED_DIR\" && pwd -P > \"$OUT\"\nexec " + mcptestBin + "\n"
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	elsewhereReal, _ := filepath.EvalSymlinks(elsewhere)
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // the folder it served; "" refused
	}{
		{"dot", map[string]string{"ALLOWED_DIR": "."}, ""},
		{"dot-slash", map[string]string{"ALLOWED_DIR": "./data"}, ""},
		{"absolute", map[string]string{"ALLOWED_DIR": elsewhere, "EMPTY": "", "NODE_ENV": "production", "FLAGS": "--x=./y"}, elsewhereReal},
	} {
		out := filepath.Join(t.TempDir(), "served")
		cfg := stdioCfg(tc.name)
		cfg.Command, cfg.Args = filepath.Join(bin, "npx"), []string{"-y", "@acme/fs"}
		cfg.Env = map[string]string{"OUT": out}
		maps.Copy(cfg.Env, tc.env)
		st, served := startServing(t, cfg, out)
		if tc.want == "" {
			if st.State != StateFailed || len(served) > 0 {
				t.Errorf("%s: state %s, served %q: want refused before it ran", tc.name, st.State, served)
			} else if !strings.Contains(st.Error, "ALLOWED_DIR=") || !strings.Contains(st.Error, "relative path") || !strings.Contains(st.Error, `"cwd"`) {
				t.Errorf("%s: the error does not name the variable and what to write: %q", tc.name, st.Error)
			}
			continue
		}
		if st.State != StateReady {
			t.Errorf("%s: %+v", tc.name, st)
		} else if got := strings.TrimSpace(string(served)); got != tc.want {
			t.Errorf("%s served %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestRelativeArg(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  string
		found bool
	}{
		{[]string{"-y", "@modelcontextprotocol/server-filesystem", "."}, ".", true},
		{[]string{"-y", "pkg", "../x"}, "../x", true},
		{[]string{"-y", "pkg", `.\x`}, `.\x`, true},
		{[]string{"-y", "pkg", "--dir=."}, "--dir=.", true},
		{[]string{"-y", "pkg", "--dir", "./x"}, "./x", true},
		{[]string{"-y", "pkg", ""}, "", true},
		{[]string{"-y", "pkg", "x/../.."}, "x/../..", true},
		{[]string{"-y", "pkg", `x\..`}, `x\..`, true},
		{[]string{"-y", "pkg", "--root=src/.."}, "--root=src/..", true},
		// Relative to a drive's working folder: run from the drive's root, C: is the whole drive.
		{[]string{"-y", "pkg", "C:"}, "C:", true},
		{[]string{"-y", "pkg", "d:src"}, "d:src", true},
		{[]string{"-y", "pkg", "--root=C:."}, "--root=C:.", true},
		{[]string{"-y", "pkg", "/home/me/project", ".hidden", "...", "--x=y", "-", "--exclude=", "/a/..", "https://x.example/../..", "x/../y",
			`C:\Users\me`, "C:/Users/me", "localhost:8080", "--port=1:2"}, "", false},
	} {
		got, ok := relativeArg(tc.args)
		if got != tc.want || ok != tc.found {
			t.Errorf("relativeArg(%q) = %q, %v; want %q, %v", tc.args, got, ok, tc.want, tc.found)
		}
	}
}

// startServing starts cfg (trusted) and returns its status and what its stand-in server wrote
// to out: the folder it served, empty when it never ran.
func startServing(t *testing.T, cfg config.ServerConfig, out string) (ServerStatus, []byte) {
	t.Helper()
	r := newTestRegistry(t, Options{Trusted: func(config.ServerConfig) bool { return true }})
	st := applyAndWait(t, r, cfg)[cfg.Name]
	served, _ := os.ReadFile(out)
	return st, served
}
