//go:build unix

package policy

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// rootTree makes a policy tree as an admin would: directories owned by root 0755, files 0644.
// It needs root (CI runs the tests as root); elsewhere the test is skipped.
func rootTree(t *testing.T, files map[string]string) Paths {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make root-owned policy files")
	}
	base := t.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	ps := Paths{
		Dir:           filepath.Join(base, "etc", "switchboard"),
		ClaudeCodeDir: filepath.Join(base, "etc", "claude-code"),
		VSCodePolicy:  filepath.Join(base, "etc", "vscode", "policy.json"),
	}
	for _, d := range []string{ps.Dir, ps.ClaudeCodeDir, filepath.Dir(ps.VSCodePolicy)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		writeRoot(t, filepath.Join(base, "etc", name), data)
	}
	return ps
}

func writeRoot(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // umask
		t.Fatal(err)
	}
}

const nobody = 65534

// TestLoadRootFiles: real root-owned files from every source merge, and check's facts are kept.
func TestLoadRootFiles(t *testing.T) {
	ps := rootTree(t, map[string]string{
		"switchboard/managed-settings.json":            `{"deniedMcpServers": [{"serverName": "shell"}], "adminContact": {"email": "it@example.com"}}`,
		"switchboard/managed-settings.d/20-tools.json": `{"permissions": {"deny": ["mcp__github__delete_repository"]}}`,
		"switchboard/managed-settings.d/README":        `not policy`,
		"switchboard/managed-settings.d/.10-x.json~":   `not policy`,
		"claude-code/managed-settings.json":            `{"deniedMcpServers": [{"serverName": "ccdenied"}], "env": {"X": "1"}}`,
		"vscode/policy.json":                           `{"ChatToolsAutoApprove": false}`,
	})
	p := Load(Options{Paths: ps, LookPath: noLookPath})
	if err := p.Broken(); err != nil {
		t.Fatalf("Broken: %v", err)
	}
	srcs := p.Sources()
	if len(srcs) != 4 {
		t.Fatalf("sources: %+v", srcs)
	}
	for _, s := range srcs {
		if s.Owner != 0 || s.Mode.Perm() != 0o644 || len(s.Digest) != 64 || len(s.Contributed) == 0 {
			t.Errorf("source %+v", s)
		}
	}
	if !srcs[2].Import || srcs[2].From != FromClaudeCode {
		t.Errorf("Claude Code source: %+v", srcs[2])
	}
	for _, name := range []string{"shell", "ccdenied"} {
		if d := p.Admit(stdio(name, "x", "")); d.Allowed {
			t.Errorf("%s admitted", name)
		}
	}
	if p.Tool("mcp__github__delete_repository", "github").Deny == nil {
		t.Errorf("drop-in rule lost")
	}
	if v := p.Mode(ModeAlwaysAllow, true); v.Refused == nil {
		t.Errorf("VS Code ChatToolsAutoApprove false lost")
	}
	// Without any file there is no policy at all.
	empty := Load(Options{Paths: Paths{Dir: filepath.Join(t.TempDir(), "none")}})
	if !empty.Empty() || empty.Broken() != nil || !empty.Admit(stdio("x", "x", "")).Allowed {
		t.Errorf("no files: %+v", empty)
	}
}

// TestLoadUntrusted: every way a user could have written or swapped a policy file makes the
// policy broken (fail closed), naming the file.
func TestLoadUntrusted(t *testing.T) {
	good := `{"deniedMcpServers": [{"serverName": "shell"}]}`
	cases := []struct {
		name  string
		setup func(t *testing.T, ps Paths) // after a good tree is made
		want  string                       // in the error
	}{
		{"file owned by another user", func(t *testing.T, ps Paths) {
			chown(t, filepath.Join(ps.Dir, SettingsFile), nobody)
		}, "owned by uid 65534"},
		{"file group-writable", func(t *testing.T, ps Paths) {
			chmod(t, filepath.Join(ps.Dir, SettingsFile), 0o664)
		}, "writable by group or others"},
		{"directory world-writable", func(t *testing.T, ps Paths) {
			chmod(t, ps.Dir, 0o757)
		}, "writable by group or others"},
		{"directory owned by another user", func(t *testing.T, ps Paths) {
			chown(t, ps.Dir, nobody)
		}, "owned by uid 65534"},
		{"symlink into a user-writable place", func(t *testing.T, ps Paths) {
			userDir := filepath.Join(filepath.Dir(filepath.Dir(ps.Dir)), "home")
			writeRoot(t, filepath.Join(userDir, "policy.json"), `{}`)
			chown(t, userDir, nobody)
			f := filepath.Join(ps.Dir, SettingsFile)
			os.Remove(f)
			if err := os.Symlink(filepath.Join(userDir, "policy.json"), f); err != nil {
				t.Fatal(err)
			}
		}, "owned by uid 65534"},
		{"dangling symlink", func(t *testing.T, ps Paths) {
			f := filepath.Join(ps.Dir, SettingsFile)
			os.Remove(f)
			if err := os.Symlink("/nonexistent/policy.json", f); err != nil {
				t.Fatal(err)
			}
		}, "cannot resolve"},
		{"user-writable drop-in", func(t *testing.T, ps Paths) {
			f := filepath.Join(ps.Dir, DropInDir, "50-user.json")
			writeRoot(t, f, `{}`)
			chown(t, f, nobody)
		}, "50-user.json is owned by uid 65534"},
		{"user-owned drop-in directory", func(t *testing.T, ps Paths) {
			d := filepath.Join(ps.Dir, DropInDir)
			os.MkdirAll(d, 0o755)
			chown(t, d, nobody)
		}, "managed-settings.d: not trusted"},
		{"non-JSON drop-in", func(t *testing.T, ps Paths) {
			writeRoot(t, filepath.Join(ps.Dir, DropInDir, "10-notes.json"), "allow everything\n")
		}, "10-notes.json:1:1: want a JSON value"},
		{"not a regular file", func(t *testing.T, ps Paths) {
			f := filepath.Join(ps.Dir, MCPFile)
			if err := syscall.Mkfifo(f, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"a directory where the file should be", func(t *testing.T, ps Paths) {
			os.Mkdir(filepath.Join(ps.Dir, MCPFile), 0o755)
		}, "not a regular file"},
		{"Claude Code file writable by others", func(t *testing.T, ps Paths) {
			writeRoot(t, filepath.Join(ps.ClaudeCodeDir, SettingsFile), `{}`)
			chmod(t, filepath.Join(ps.ClaudeCodeDir, SettingsFile), 0o646)
		}, "writable by group or others"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := rootTree(t, map[string]string{"switchboard/managed-settings.json": good})
			tc.setup(t, ps)
			p := Load(Options{Paths: ps, LookPath: noLookPath})
			err := p.Broken()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Broken() = %v, want it to say %q", err, tc.want)
			}
			if d := p.Admit(stdio("harmless", "true", "/bin/true")); d.Allowed {
				t.Errorf("a broken policy admitted a server")
			}
			if p.Tool("mcp__harmless__x", "harmless").Deny == nil {
				t.Errorf("a broken policy allowed an MCP call")
			}
		})
	}
}

// TestLoadUnreadable: a policy file the running user cannot read (root-only 0600, read by an
// unprivileged user) fails closed. Run as root, the test reads it as uid 65534 in a child.
func TestLoadUnreadable(t *testing.T) {
	if os.Getenv("POLICY_TEST_CHILD") != "" {
		p := Load(Options{Paths: Paths{Dir: os.Getenv("POLICY_TEST_CHILD")}, LookPath: noLookPath})
		if err := p.Broken(); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("Broken() = %v, want permission denied", err)
		}
		return
	}
	ps := rootTree(t, map[string]string{"switchboard/managed-settings.json": `{}`})
	chmod(t, filepath.Join(ps.Dir, SettingsFile), 0o600)
	// The test binary and the tree must be reachable by uid 65534: the temporary directories
	// (0700 when made) get o+rx, and the binary is copied next to the tree.
	base := filepath.Dir(filepath.Dir(ps.Dir))
	chmod(t, filepath.Dir(base), 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(base, "policy.test")
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := execAs(exe, nobody, "-test.run=^TestLoadUnreadable$", "-test.count=1")
	cmd.Env = append(os.Environ(), "POLICY_TEST_CHILD="+ps.Dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "FAIL") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		t.Skipf("cannot run the test binary as uid %d: %v %s", nobody, err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("child ran no test:\n%s", out)
	}
}

func chown(t *testing.T, path string, uid int) {
	t.Helper()
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// TestLoadManagedPrefs: macOS managed preferences (binary plists, as MDM writes them) are read:
// Switchboard's domain as settings, VS Code's as policies, imported restrict-only.
func TestLoadManagedPrefs(t *testing.T) {
	ps := rootTree(t, nil)
	ps.ManagedPrefs = filepath.Join(filepath.Dir(ps.Dir), "Managed Preferences")
	for src, dst := range map[string]string{"dev.switchboard.bplist": "dev.switchboard.plist", "com.microsoft.VSCode.plist": "com.microsoft.VSCode.plist"} {
		data, err := os.ReadFile("testdata/" + src)
		if err != nil {
			t.Fatal(err)
		}
		writeRoot(t, filepath.Join(ps.ManagedPrefs, dst), string(data))
	}
	p := Load(Options{Paths: ps, LookPath: noLookPath})
	if err := p.Broken(); err != nil {
		t.Fatal(err)
	}
	d := p.Admit(stdio("shell", "sh", ""))
	if d.Allowed || !strings.HasSuffix(d.Rule.File, "dev.switchboard.plist") {
		t.Errorf("shell: %+v", d)
	}
	if d := p.Admit(stdio("other", "x", "")); d.Allowed || d.Rule.Pointer != "/ChatMCP" || d.Rule.From != FromVSCode {
		t.Errorf("VS Code ChatMCP none: %+v", d)
	}
	if len(p.Sources()) != 2 || !p.Sources()[1].Import {
		t.Errorf("sources %+v", p.Sources())
	}
}
