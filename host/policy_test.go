package host

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// TestPolicyToolsNotOffered (T13b): a tool the policy denies is Held in the model's tool set (the
// session leaves Held tools out of what it offers), others are untouched.
func TestPolicyToolsNotOffered(t *testing.T) {
	dir := rootPolicyDir(t, `{"permissions": {"deny": ["mcp__s__bad"]}}`)
	a := &App{policyW: policy.NewWatcher(policy.Options{Paths: policy.Paths{Dir: dir}})}
	if err := a.Policy().Broken(); err != nil {
		t.Fatal(err)
	}
	set := mcpbridge.NewToolSet([]mcpbridge.Tool{{Name: "mcp__s__ok", Server: "s", Tool: "ok"}, {Name: "mcp__s__bad", Server: "s", Tool: "bad"}})
	got := map[string]bool{}
	for _, tl := range a.policyTools(set).All() {
		got[tl.Name] = tl.Held
	}
	if !got["mcp__s__bad"] || got["mcp__s__ok"] {
		t.Errorf("held = %v", got)
	}
	for _, tl := range set.All() {
		if tl.Held {
			t.Errorf("the registry's own set was changed: %s", tl.Name)
		}
	}
}

// TestPolicyLaunch: what the policy matches is what exec would run: a bare command found on the
// PATH, a relative one under the server's working directory.
func TestPolicyLaunch(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	l := PolicyLaunch(config.ServerConfig{Name: "a", Transport: config.TransportStdio, Command: "sh", Args: []string{"-c", "x"}}, nil)
	if l.Path != sh || l.Command != "sh" || len(l.Args) != 2 || l.Scope != policy.ScopeUser {
		t.Errorf("bare: %+v", l)
	}
	l = PolicyLaunch(config.ServerConfig{Name: "a", Transport: config.TransportStdio, Command: "./bin/srv", Cwd: "/opt/x", WorkspaceOnly: true}, nil)
	if l.Path != "/opt/x/bin/srv" || l.Scope != policy.ScopeWorkspace {
		t.Errorf("relative: %+v", l)
	}
	m := []policy.ManagedServer{{Name: "a", Rule: &policy.Rule{File: "/etc/switchboard/managed-mcp.json"}}}
	l = PolicyLaunch(config.ServerConfig{Name: "a", Transport: config.TransportHTTP, URL: "https://x/mcp", Source: "/etc/switchboard/managed-mcp.json"}, m)
	if l.Scope != policy.ScopeManaged || l.Managed != "/etc/switchboard/managed-mcp.json" || l.URL != "https://x/mcp" || l.Path != "" {
		t.Errorf("managed: %+v", l)
	}
	l = PolicyLaunch(config.ServerConfig{Name: "a", Transport: config.TransportHTTP, URL: "https://x/mcp", Source: "/home/u/.config/switchboard/mcp.json"}, m)
	if l.Scope != policy.ScopeUser {
		t.Errorf("a user server named like a managed one: %+v", l)
	}
}

// TestPolicySandboxPATH (attack): a sandboxed server's command is found on the PATH of its own
// environment (mcpbridge/sandbox, as the launcher runs it); an entry that sets env.PATH to a
// folder of its own must not pass an allowlist's serverCommand by the npx on the host's PATH.
func TestPolicySandboxPATH(t *testing.T) {
	mk := func(dir string) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "npx")
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	root := t.TempDir()
	good := mk(filepath.Join(root, "usr", "bin"))
	evil := mk(filepath.Join(root, "evil"))
	t.Setenv("PATH", filepath.Dir(good))
	pol := policy.FromSources(exec.LookPath, policy.MemSource{Path: "/etc/switchboard/managed-settings.json",
		Data: []byte(`{"allowedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-github"]}]}`)})
	base := config.ServerConfig{Name: "gh", Transport: config.TransportStdio, Command: "npx",
		Args: []string{"-y", "@modelcontextprotocol/server-github"}, Sandbox: &sandbox.Profile{}}
	if b := PolicyBlock(pol, base); b != nil {
		t.Fatalf("the allowed command was blocked: %+v", b)
	}
	attack := base
	attack.Env = map[string]string{"PATH": filepath.Dir(evil)}
	if l := PolicyLaunch(attack, nil); l.Path != evil {
		t.Errorf("PolicyLaunch Path = %q, want %q (what the sandbox runs)", l.Path, evil)
	}
	if b := PolicyBlock(pol, attack); b == nil {
		t.Errorf("a sandboxed entry whose env.PATH leads to %s passed the allowlist", evil)
	}
}

// BenchmarkPolicyVerdict is the policy's share of a gate decision (the gate's Policy hook), with
// no policy file and with a typical one: a few map lookups, no allocation.
func BenchmarkPolicyVerdict(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root to make root-owned policy files")
	}
	for _, bc := range []struct{ name, settings string }{
		{"none", ""},
		{"typical", `{"deniedMcpServers": [{"serverName": "shell"}], "permissions": {"deny": ["mcp__github__delete_repository"], "ask": ["mcp__github__create_*"], "allow": ["mcp__github__get_issue"]}, "disabledModes": ["always-allow"]}`},
	} {
		base := b.TempDir()
		os.Chmod(base, 0o755)
		dir := filepath.Join(base, "switchboard")
		os.MkdirAll(dir, 0o755)
		if bc.settings != "" {
			f := filepath.Join(dir, policy.SettingsFile)
			os.WriteFile(f, []byte(bc.settings), 0o644)
			os.Chmod(f, 0o644)
		}
		a := &App{policyW: policy.NewWatcher(policy.Options{Paths: policy.Paths{Dir: dir}})}
		req := permissions.Request{Tool: "mcp__github__list_issues", Server: "github"}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a.policyVerdict(req)
			}
		})
	}
}

// TestPolicySandboxRequiredNoKernel: under mcpSandbox "required", where the kernel cannot
// sandbox, an unsandboxed server's block says so (adding "sandbox": true would not help); a
// sandboxed entry passes the policy and is refused by the launcher, which never runs it
// unconfined (mcpbridge/sandbox TestKernelLacksLandlockRefuses).
func TestPolicySandboxRequiredNoKernel(t *testing.T) {
	old := sandboxAvailable
	sandboxAvailable = func() error { return errors.New("sandbox: this kernel has no Landlock") }
	t.Cleanup(func() { sandboxAvailable = old })
	pol := policy.FromSources(exec.LookPath, policy.MemSource{Path: "/etc/switchboard/managed-settings.json", Data: []byte(`{"mcpSandbox": "required"}`)})
	plain := config.ServerConfig{Name: "fs", Transport: config.TransportStdio, Command: "/bin/sh"}
	b := PolicyBlock(pol, plain)
	if b == nil || b.Rule != "/etc/switchboard/managed-settings.json#/mcpSandbox" ||
		!strings.HasSuffix(b.Message, "this system cannot run a sandboxed server (this kernel has no Landlock). Ask your administrator.") {
		t.Errorf("block = %+v", b)
	}
	boxed := plain
	boxed.Sandbox = &sandbox.Profile{}
	if b := PolicyBlock(pol, boxed); b != nil {
		t.Errorf("a sandboxed entry was blocked by the policy: %+v", b)
	}
	if b := PolicyBlock(pol, config.ServerConfig{Name: "api", Transport: config.TransportHTTP, URL: "https://mcp.example.com/"}); b != nil {
		t.Errorf("an HTTP server was blocked: %+v", b)
	}
}

// TestPolicyAllowedCommandEnv (attack): an allowlist's serverCommand vets a program, and the
// entry's env can make that program run another: npx is "#!/usr/bin/env node", so an env.PATH of
// the repository's own finds its node, and NODE_OPTIONS, LD_PRELOAD or npm_config_registry load or
// fetch other code. Such an entry is not the allowed command; env that changes nothing (PATH as
// the host has it) or that loads nothing (a token, PYTHONUNBUFFERED) leaves it allowed.
func TestPolicyAllowedCommandEnv(t *testing.T) {
	root := t.TempDir()
	write := func(path, body string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good, evil := filepath.Join(root, "usr", "bin"), filepath.Join(root, "repo", "bin")
	npx := write(filepath.Join(good, "npx"), "#!/usr/bin/env fakenode\n")
	write(filepath.Join(good, "fakenode"), "#!/bin/sh\necho vetted\n")
	write(filepath.Join(evil, "fakenode"), "#!/bin/sh\necho planted\n")
	t.Setenv("PATH", good)
	// Control: the entry's PATH decides which interpreter the allowed npx runs.
	run := exec.Command(npx)
	run.Env = []string{"PATH=" + evil + string(filepath.ListSeparator) + good}
	if out, err := run.Output(); err != nil || strings.TrimSpace(string(out)) != "planted" {
		t.Fatalf("control: npx with the entry's PATH ran %q (%v), want the planted interpreter", out, err)
	}
	pol := policy.FromSources(exec.LookPath, policy.MemSource{Path: "/etc/switchboard/managed-settings.json",
		Data: []byte(`{"allowedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-github"]}]}`)})
	base := config.ServerConfig{Name: "gh", Transport: config.TransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"}}
	for _, env := range []map[string]string{
		nil,
		{"GITHUB_PERSONAL_ACCESS_TOKEN": "x", "PYTHONUNBUFFERED": "1", "NODE_ENV": "production"},
		{"PATH": good},
	} {
		c := base
		c.Env = env
		if b := PolicyBlock(pol, c); b != nil {
			t.Errorf("env %v: the allowed command was blocked: %s", env, b.Message)
		}
	}
	for _, env := range []map[string]string{
		{"PATH": evil + string(filepath.ListSeparator) + good},
		{"NODE_OPTIONS": "--require ./evil.js"},
		{"LD_PRELOAD": "./evil.so"},
		{"npm_config_registry": "https://registry.evil.example/"},
		// uvx runs the tool environments it keeps in $XDG_CACHE_HOME/uv (without UV_CACHE_DIR):
		// one planted there is what runs.
		{"XDG_CACHE_HOME": "/home/u/repo/.cache"},
	} {
		c := base
		c.Env = env
		b := PolicyBlock(pol, c)
		if b == nil {
			t.Errorf("env %v: passed the allowlist's serverCommand", env)
			continue
		}
		for k := range env {
			if !strings.Contains(b.Message, k) {
				t.Errorf("env %v: the message does not name %s: %s", env, k, b.Message)
			}
		}
	}
}

// TestPolicyAllowedRunnerInRepository (attack): an allowlist's serverCommand ["npx", "-y",
// "@modelcontextprotocol/server-github"] vets the registry's package, but npx run inside a folder
// takes the package from the folder's node_modules (or fetches it through its .npmrc). A
// workspace's own entry for the allowed command runs in the workspace, so the repository chose
// what ran. Such an entry (or one whose cwd is a folder) is not the allowed command; run from /,
// as the user's own package-runner entries are, it is.
func TestPolicyAllowedRunnerInRepository(t *testing.T) {
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("no npx")
	}
	repo := t.TempDir()
	pkg := filepath.Join(repo, "node_modules", "@modelcontextprotocol", "server-github")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		filepath.Join(repo, "package.json"): `{"name": "repo", "dependencies": {"@modelcontextprotocol/server-github": "9.9.9"}}`,
		filepath.Join(pkg, "package.json"):  `{"name": "@modelcontextprotocol/server-github", "version": "9.9.9", "bin": {"mcp-server-github": "evil.js"}}`,
		filepath.Join(pkg, "evil.js"):       "#!/usr/bin/env node\nconsole.log(\"planted\")\n",
	} {
		if err := os.WriteFile(name, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(repo, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../@modelcontextprotocol/server-github/evil.js", filepath.Join(bin, "mcp-server-github")); err != nil {
		t.Fatal(err)
	}
	args := []string{"-y", "@modelcontextprotocol/server-github"}
	// Control: in the repository, the allowed command line runs the repository's package (offline:
	// nothing is fetched).
	run := exec.Command("npx", args...)
	run.Dir = repo
	run.Env = append(os.Environ(), "npm_config_offline=true", "npm_config_update_notifier=false")
	if out, err := run.Output(); err != nil || strings.TrimSpace(string(out)) != "planted" {
		t.Fatalf("control: npx in the repository ran %q (%v), want the planted package", out, err)
	}
	pol := policy.FromSources(exec.LookPath, policy.MemSource{Path: "/etc/switchboard/managed-settings.json",
		Data: []byte(`{"allowedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-github"]}]}`)})
	t.Chdir(repo) // the host runs in the workspace, as editors start it
	base := config.ServerConfig{Name: "gh", Transport: config.TransportStdio, Command: "npx", Args: args}
	for _, tc := range []struct {
		name    string
		ws      bool
		cwd     string
		blocked bool
	}{
		{"the user's entry (runs from /)", false, "", false},
		{"the workspace's entry (runs in the workspace)", true, "", true},
		{"the workspace's entry with cwd /", true, "/", false},
		{"an entry whose cwd is the repository", false, repo, true},
	} {
		c := base
		c.WorkspaceOnly, c.Cwd = tc.ws, tc.cwd
		b := PolicyBlock(pol, c)
		switch {
		case tc.blocked && b == nil:
			t.Errorf("%s: passed the allowlist's serverCommand", tc.name)
		case tc.blocked && !strings.Contains(b.Message, repo):
			t.Errorf("%s: the message does not name the folder: %s", tc.name, b.Message)
		case !tc.blocked && b != nil:
			t.Errorf("%s: blocked: %s", tc.name, b.Message)
		}
	}
}

// TestPolicyAllowedModuleInRepository (attack): python -m imports the module from the folder it
// runs in before the installed one, so an allowlisted ["python3", "-m", "mcp_server_fetch"] run in
// a repository runs the repository's mcp_server_fetch. A workspace's entry for it is not the
// allowed command; the user's own (run from /) is.
func TestPolicyAllowedModuleInRepository(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "mcp_server_fetch"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "mcp_server_fetch", "__main__.py"), []byte("print('planted')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command("python3", "-m", "mcp_server_fetch")
	run.Dir = repo
	if out, err := run.Output(); err != nil || strings.TrimSpace(string(out)) != "planted" {
		t.Fatalf("control: python3 -m in the repository ran %q (%v), want the planted module", out, err)
	}
	pol := policy.FromSources(exec.LookPath, policy.MemSource{Path: "/etc/switchboard/managed-settings.json",
		Data: []byte(`{"allowedMcpServers": [{"serverCommand": ["python3", "-m", "mcp_server_fetch"]}]}`)})
	t.Chdir(repo)
	c := config.ServerConfig{Name: "fetch", Transport: config.TransportStdio, Command: "python3", Args: []string{"-m", "mcp_server_fetch"}}
	if b := PolicyBlock(pol, c); b != nil {
		t.Errorf("the user's entry (runs from /) was blocked: %s", b.Message)
	}
	c.WorkspaceOnly = true
	if b := PolicyBlock(pol, c); b == nil || !strings.Contains(b.Message, repo) {
		t.Errorf("the workspace's entry, run in the repository: %+v, want it blocked naming the folder", b)
	}
}

// TestBrokenPolicyBuiltinsFailClosed (attack): the admin's policy disabled always-allow, and the
// file is now broken (an edit that does not parse, or a file the user could write). A broken
// policy must close, never open: with its rules unknown, always-allow is off and a built-in tool
// that changes files does not run (only the read-only ones keep working, so the editor can still
// explain); before, edit_file ran unasked under always-allow.
func TestBrokenPolicyBuiltinsFailClosed(t *testing.T) {
	dir := rootPolicyDir(t, `{"disabledModes": ["always-allow"], `)
	a := &App{policyW: policy.NewWatcher(policy.Options{Paths: policy.Paths{Dir: dir}})}
	if a.Policy().Broken() == nil {
		t.Fatal("the policy is not broken")
	}
	g := permissions.NewGate(permissions.GateOptions{Policy: a.policyVerdict}) // no prompter: an ask is denied
	ctx := t.Context()
	d, err := g.Check(ctx, permissions.Request{Tool: "edit_file", Mode: permissions.AlwaysAllow})
	if err != nil || d.Allowed {
		t.Errorf("edit_file under always-allow with a broken policy: %+v (%v), want refused", d, err)
	}
	d, err = g.Check(ctx, permissions.Request{Tool: "read_file", ReadOnlyBuiltin: true, Mode: permissions.AlwaysAllow})
	if err != nil || !d.Allowed {
		t.Errorf("read_file with a broken policy: %+v (%v), want allowed", d, err)
	}
	if _, err := a.policyMode(new(permissions.AlwaysAllow)); err == nil {
		t.Errorf("always-allow asked for by name with a broken policy was not refused")
	}
}

// TestPolicyRelativeCommandInItsFolder: in a window of two folders (the host runs in the first),
// a workspace file of the second names ./bin/mcp, which runs in its own folder: the allowlist
// that names the first folder's ./bin/mcp does not admit it (the policy judged the host's folder
// while the second folder's program ran).
func TestPolicyRelativeCommandInItsFolder(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(filepath.Join(d, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "bin", "mcp"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(b, ".mcp.json"), []byte(`{"mcpServers": {"evil": {"command": "./bin/mcp"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	aReal, _ := filepath.EvalSymlinks(a)
	pol := policy.FromSources(exec.LookPath, policy.MemSource{Path: "/etc/switchboard/managed-settings.json",
		Data: []byte(`{"allowedMcpServers": [{"serverCommand": ["` + filepath.Join(aReal, "bin", "mcp") + `"]}]}`)})
	t.Chdir(a)
	cfgs, errs := config.LoadConfig(config.ConfigSources{UserFile: filepath.Join(t.TempDir(), "none.json"), WorkspaceFolders: []string{a, b},
		Getenv: func(string) (string, bool) { return "", false }})
	if len(errs) != 0 || len(cfgs) != 1 {
		t.Fatalf("LoadConfig = %+v, %v", cfgs, errs)
	}
	bReal, _ := filepath.EvalSymlinks(b)
	if l := PolicyLaunch(cfgs[0], nil); l.Path != filepath.Join(bReal, "bin", "mcp") {
		t.Errorf("PolicyLaunch Path = %q, want the second folder's program", l.Path)
	}
	if blk := PolicyBlock(pol, cfgs[0]); blk == nil {
		t.Errorf("the second folder's ./bin/mcp passed an allowlist of the first folder's")
	}
}

// TestPolicyAllowNotForWorkspaceFileServers: a managed allow rule names a server by name only,
// so it grants nothing to a server a workspace file defines (a repository can give its server
// the name); the user's own server that takes ${workspaceFolder} keeps the grant.
func TestPolicyAllowNotForWorkspaceFileServers(t *testing.T) {
	dir := rootPolicyDir(t, `{"permissions": {"allow": ["mcp__github__get_issue"]}}`)
	for _, tc := range []struct {
		name    string
		cfg     config.ServerConfig
		allow   bool
		notHere bool
	}{
		{"user", config.ServerConfig{Name: "github"}, true, false},
		{"user, per folder", config.ServerConfig{Name: "github", WorkspaceOnly: true, FromFolder: "/ws"}, true, false},
		{"workspace file", config.ServerConfig{Name: "github", WorkspaceOnly: true, Folder: "/ws"}, false, true},
	} {
		a := &App{policyW: policy.NewWatcher(policy.Options{Paths: policy.Paths{Dir: dir}})}
		a.cfgs.set([]config.ServerConfig{tc.cfg}, tc.name, nil)
		v := a.policyVerdict(permissions.Request{Tool: "mcp__github__get_issue", Server: "github"})
		if v.Allow != tc.allow || v.AllowNotHere != tc.notHere || v.Rule == "" {
			t.Errorf("%s: verdict %+v, want Allow %v, AllowNotHere %v, with the rule", tc.name, v, tc.allow, tc.notHere)
		}
	}
}
