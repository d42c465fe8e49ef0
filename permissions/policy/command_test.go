package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDenyLooksThroughWrapperOptions: a deny by command holds however a wrapper's options are
// spelled, as the real programs (GNU coreutils, util-linux) read them with getopt_long: short
// options written together with the last one's value after them, a long option cut to any
// unambiguous prefix, its value in the next word. Each spelling is first run for real, where
// the program is installed, to see that it does start the npx it names with the denied
// package; then Admit must refuse it.
func TestDenyLooksThroughWrapperOptions(t *testing.T) {
	p, npx, marker := denyWithStandIn(t)
	// npx by its path: a run never finds another one (env -i empties PATH, and execvp then
	// looks in /bin and /usr/bin, where the real npx would fetch the package).
	run := []string{npx, "-y", "@modelcontextprotocol/server-filesystem", "/"}
	for _, tc := range [][]string{
		{"nice", "--adj", "5"},
		{"nice", "--adjustment", "5"},
		{"nice", "-5", "-n", "1"},
		{"ionice", "-tc", "2"},
		{"ionice", "-tc2", "-n", "4"},
		{"ionice", "--classd", "4"},
		{"stdbuf", "--out", "L"},
		{"stdbuf", "--o", "L", "-e", "0"},
		{"timeout", "-vk", "5", "1d"},
		{"timeout", "--kill", "5", "1d"},
		{"timeout", "--sig", "KILL", "1d"},
		{"timeout", "--foreground", "--pre", "1d"},
		{"setsid", "-fw"},
		{"setsid", "--wa"},
		{"taskset", "-ac", "0"},
		{"chrt", "-o", "0"},
		{"chrt", "--oth", "0"},
		{"nohup", "--"},
		{"env", "--uns", "FOO"},
		{"env", "-iu", "FOO"},
		{"env", "--ch", "/"},
		{"env", "-vS", "FOO=1"},
		{"env", "-i", "-", "FOO=1"},
		// A shell's options after -c come before its script; bash's --rcfile takes a file.
		{"bash", "-c", "-x"},
		{"bash", "-c", "-o", "pipefail", "--"},
		{"dash", "-c", "-e"},
		{"bash", "-co", "pipefail"},
		{"bash", "-eOc", "extglob"},
		{"bash", "--rcfile", "/dev/null", "-c"},
		{"bash", "--init-file", "/dev/null", "-ec"},
		// However deep: each wrapper runs the next.
		{"nohup", "nohup", "nohup", "nohup", "nohup"},
		{"nice", "timeout", "5", "setsid", "stdbuf", "-oL", "env", "-i", "nice", "-n", "1"},
	} {
		argv := append(slices.Clone(tc), run...)
		if tc[0] == "bash" || tc[0] == "dash" {
			argv = append(slices.Clone(tc), strings.Join(run, " ")) // the script
		}
		t.Run(strings.Join(tc, " "), func(t *testing.T) {
			if prog, err := exec.LookPath(tc[0]); err == nil {
				os.Remove(marker)
				cmd := exec.Command(prog, argv[1:]...)
				cmd.Env = []string{"PATH=/usr/bin:/bin", "FOO=x"}
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%q does not run: %v\n%s", argv, err, out)
				}
				got, err := os.ReadFile(marker)
				if err != nil || strings.Fields(string(got))[0] != "-y" || !strings.Contains(string(got), "server-filesystem") {
					t.Fatalf("%q ran npx with %q (%v), not the denied package: the spelling is not the one meant", argv, got, err)
				}
			} else {
				t.Logf("%s is not installed here: the spelling is not run", tc[0])
			}
			if d := p.Admit(stdio("fs", argv[0], "/usr/bin/"+argv[0], argv[1:]...)); d.Allowed {
				t.Errorf("Admit(%q) allowed it: the deny of npx's server-filesystem was dodged", argv)
			}
		})
	}
}

// TestDenyLooksThroughNpmExec: npm exec is npx however npm is told to run it: with npm's options
// before the command, which npm reads anywhere, and by a prefix of its name (each spelling
// below runs the denied package with npm 11, offline, from a local node_modules); npm's other
// commands are not npx.
func TestDenyLooksThroughNpmExec(t *testing.T) {
	const denyFS = `{"deniedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/"]}]}`
	p := mem(t, denyFS)
	for _, tc := range []struct {
		args   []string
		denied bool
	}{
		{[]string{"exec", "-y", "@modelcontextprotocol/server-filesystem", "/"}, true},
		{[]string{"-y", "exec", "@modelcontextprotocol/server-filesystem", "/"}, true},
		{[]string{"--loglevel", "silent", "exec", "-y", "@modelcontextprotocol/server-filesystem", "--", "/"}, true},
		{[]string{"--yes", "x", "@modelcontextprotocol/server-filesystem", "/"}, true},
		{[]string{"exe", "-y", "@modelcontextprotocol/server-filesystem", "/"}, true},
		{[]string{"run", "exec", "@modelcontextprotocol/server-filesystem", "/"}, false},
		{[]string{"--prefix", "x", "run", "@modelcontextprotocol/server-filesystem", "/"}, false},
		{[]string{"--", "exec", "@modelcontextprotocol/server-filesystem", "/"}, false},
	} {
		d := p.Admit(stdio("fs", "npm", "/usr/bin/npm", tc.args...))
		if d.Allowed == tc.denied {
			t.Errorf("Admit(npm %q).Allowed = %v, want %v", tc.args, d.Allowed, !tc.denied)
		}
	}
}

// TestDenyPastUnwrapDepth: a chain of wrappers deeper than maxUnwrap (no real launch is) is
// denied by a deny by command, whatever it runs in the end; within it, only what the deny
// names is.
func TestDenyPastUnwrapDepth(t *testing.T) {
	const denyFS = `{"deniedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/"]}]}`
	p := mem(t, denyFS)
	chain := func(n int, pkg string) []string {
		return append(slices.Repeat([]string{"nohup"}, n), "npx", "-y", pkg, "/")
	}
	for _, tc := range []struct {
		args   []string
		denied bool
	}{
		{chain(maxUnwrap-1, "@modelcontextprotocol/server-filesystem"), true},
		{chain(maxUnwrap-1, "@modelcontextprotocol/server-github"), false},
		{chain(maxUnwrap+5, "@modelcontextprotocol/server-github"), true},
	} {
		if d := p.Admit(stdio("fs", "nohup", "/usr/bin/nohup", tc.args...)); d.Allowed == tc.denied {
			t.Errorf("Admit(nohup × %d, %s).Allowed = %v, want %v", len(tc.args)-3, tc.args[len(tc.args)-2], d.Allowed, !tc.denied)
		}
	}
}

// TestDenyNpxOptions: a deny of an npx package holds whatever npx's options come before the
// package, a value-taking one's value included (npx reads many: --cache DIR, --quiet, ...).
// Each spelling is run first with the real npx, offline, from a project whose node_modules has
// a stand-in for the package, to see that it runs it with the denied argument.
func TestDenyNpxOptions(t *testing.T) {
	const denyFS = `{"deniedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/"]}]}`
	p := mem(t, denyFS)
	npx, npxErr := exec.LookPath("npx")
	proj := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	pkg := filepath.Join(proj, "node_modules", "@modelcontextprotocol", "server-filesystem")
	for name, data := range map[string]string{
		filepath.Join(proj, "package.json"): `{"name": "proj", "version": "1.0.0"}`,
		filepath.Join(pkg, "package.json"):  `{"name": "@modelcontextprotocol/server-filesystem", "version": "1.0.0", "bin": {"mcp-server-filesystem": "cli.js"}}`,
		filepath.Join(pkg, "cli.js"):        "#!/usr/bin/env node\nrequire('fs').writeFileSync(process.env.MARK, process.argv.slice(2).join(' '))\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(proj, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(pkg, "cli.js"), filepath.Join(bin, "mcp-server-filesystem")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		denied bool
	}{
		{[]string{"--quiet", "-y", "@modelcontextprotocol/server-filesystem", "/"}, true},
		{[]string{"-q", "@modelcontextprotocol/server-filesystem@1.0.0", "/"}, true},
		{[]string{"--cache", filepath.Join(t.TempDir(), "cache"), "-y", "@modelcontextprotocol/server-filesystem", "/"}, true},
		{[]string{"--loglevel=silent", "--", "@modelcontextprotocol/server-filesystem", "/"}, true},
		{[]string{"--quiet", "-y", "@modelcontextprotocol/server-filesystem", "/home"}, false},
		{[]string{"--quiet", "-y", "@modelcontextprotocol/server-github"}, false},
	} {
		if tc.denied && npxErr == nil {
			os.Remove(marker)
			cmd := exec.Command(npx, tc.args...)
			cmd.Dir = proj
			cmd.Env = append(os.Environ(), "npm_config_offline=true", "MARK="+marker)
			out, err := cmd.CombinedOutput()
			if got, _ := os.ReadFile(marker); err != nil || string(got) != "/" {
				t.Fatalf("npx %q ran the package with %q (%v): not the denied run\n%s", tc.args, got, err, out)
			}
		}
		if d := p.Admit(stdio("fs", "npx", "/usr/bin/npx", tc.args...)); d.Allowed == tc.denied {
			t.Errorf("Admit(npx %q).Allowed = %v, want %v", tc.args, d.Allowed, !tc.denied)
		}
	}
}

// TestDenyLooksThroughQuotedScripts: a script of words that quotes some of them (sh -c, env
// -S) runs what the unquoted words would: the deny holds. Each is run first with the real
// shell or env to see that it starts the denied package (NPX: the stand-in's path). A script
// with an expansion or an operator is still not taken apart.
func TestDenyLooksThroughQuotedScripts(t *testing.T) {
	p, npx, marker := denyWithStandIn(t)
	for _, argv := range [][]string{
		{"sh", "-c", `NPX -y '@modelcontextprotocol/server-filesystem' /`},
		{"bash", "-c", `NPX "-y" "@modelcontextprotocol/server-filesystem" "/"`},
		{"sh", "-c", `exec NPX -y @modelcontextprotocol/'server-filesystem' ''/`},
		{"env", "-S", `NPX -y "@modelcontextprotocol/server-filesystem" /`},
		{"env", `-SNPX -y '@modelcontextprotocol/server-filesystem' /`},
	} {
		for i := range argv {
			argv[i] = strings.ReplaceAll(argv[i], "NPX", npx)
		}
		t.Run(strings.Join(argv, " "), func(t *testing.T) {
			if prog, err := exec.LookPath(argv[0]); err == nil {
				os.Remove(marker)
				cmd := exec.Command(prog, argv[1:]...)
				cmd.Env = []string{"PATH=/usr/bin:/bin"}
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%q does not run: %v\n%s", argv, err, out)
				}
				if got, err := os.ReadFile(marker); err != nil || string(got) != "-y\n@modelcontextprotocol/server-filesystem\n/\n" {
					t.Fatalf("%q ran npx with %q (%v), not the denied run", argv, got, err)
				}
			}
			if d := p.Admit(stdio("fs", argv[0], "/usr/bin/"+argv[0], argv[1:]...)); d.Allowed {
				t.Errorf("Admit(%q) allowed it: the deny was dodged", argv)
			}
		})
	}
	// Not taken apart (what runs depends on the shell's state), so not denied by its look.
	for _, script := range []string{`npx -y "$PKG" /`, `npx -y @modelcontextprotocol/server-filesystem / ; echo`, `npx -y @modelcontextprotocol/server-filesystem \/`} {
		if w, ok := scriptWords(script); ok {
			t.Errorf("scriptWords(%q) = %q, want it refused", script, w)
		}
	}
}

// denyWithStandIn is a policy that denies `npx -y @modelcontextprotocol/server-filesystem /`,
// with npx found as a stand-in script that writes its arguments to marker, one a line: a
// spelling run for real shows what it would have started.
func denyWithStandIn(t *testing.T) (p *Policy, npx, marker string) {
	t.Helper()
	marker = filepath.Join(t.TempDir(), "ran")
	npx = filepath.Join(t.TempDir(), "npx")
	if err := os.WriteFile(npx, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > \""+marker+"\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	look := func(name string) (string, error) {
		if name == "npx" {
			return npx, nil
		}
		return "", os.ErrNotExist
	}
	const denyFS = `{"deniedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/"]}]}`
	p = FromSources(look, MemSource{Path: "/etc/switchboard/managed-settings.json", Data: []byte(denyFS)})
	if err := p.Broken(); err != nil {
		t.Fatal(err)
	}
	return p, npx, marker
}
