package mcpbridge

import (
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// TestPackageRunnerPythonOptions: python imports -m's module, and -c's imports, from the working
// folder first however its options are written (-u -m, -um, -Bc); -I and -P say not to.
func TestPackageRunnerPythonOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-m", "pkg"}, true},
		{[]string{"-u", "-m", "pkg"}, true},
		{[]string{"-um", "pkg"}, true},
		{[]string{"-uBm", "pkg"}, true},
		{[]string{"-mpkg"}, true},
		{[]string{"-Bc", "import pkg"}, true},
		{[]string{"-Wignore", "-m", "pkg"}, true},
		{[]string{"-W", "ignore", "-m", "pkg"}, true},
		{[]string{"-Xutf8", "-um", "pkg"}, true},
		{[]string{"-Im", "pkg"}, false},
		{[]string{"-uI", "-m", "pkg"}, false},
		{[]string{"-P", "-m", "pkg"}, false},
		{[]string{"-u", "/opt/x/server.py"}, false},
		{[]string{"-W", "-m", "/opt/x/server.py"}, false}, // -W's value is "-m"
	} {
		c := config.ServerConfig{Transport: config.TransportStdio, Command: "python3", Args: tc.args}
		if got := PackageRunner(c); got != tc.want {
			t.Errorf("PackageRunner(python3 %q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestPackageRunnerNpmExec: npm exec is npx under another name (npm x, npm exe, with npm's
// options before the command); run in the open folder, it takes the package from the folder's
// node_modules. Another npm command is not a package runner.
func TestPackageRunnerNpmExec(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"exec", "-y", "--", "@acme/mcp-server"}, true},
		{[]string{"x", "@acme/mcp-server"}, true},
		{[]string{"exe", "@acme/mcp-server"}, true},
		{[]string{"-y", "exec", "@acme/mcp-server"}, true},
		{[]string{"--loglevel", "silent", "exec", "@acme/mcp-server"}, true},
		{[]string{"--loglevel=silent", "x", "@acme/mcp-server"}, true},
		{[]string{"run", "exec"}, false},
		{[]string{"start"}, false},
		{[]string{"--", "exec"}, false},
		{nil, false},
	} {
		for _, cmd := range []string{"npm", "/usr/bin/npm", "npm.cmd"} {
			c := config.ServerConfig{Transport: config.TransportStdio, Command: cmd, Args: tc.args}
			if got := PackageRunner(c); got != tc.want {
				t.Errorf("PackageRunner(%s %q) = %v, want %v", cmd, tc.args, got, tc.want)
			}
		}
	}
}

// runnerCase is one launch and whether PackageRunner says a package runner starts it.
type runnerCase struct {
	cmd  string
	args []string
	want bool
}

func checkPackageRunner(t *testing.T, cases []runnerCase) {
	t.Helper()
	for _, tc := range cases {
		c := config.ServerConfig{Transport: config.TransportStdio, Command: tc.cmd, Args: tc.args}
		if got := PackageRunner(c); got != tc.want {
			t.Errorf("PackageRunner(%s %q) = %v, want %v", tc.cmd, tc.args, got, tc.want)
		}
	}
}

// TestPackageRunnerDeno: deno reads deno.json, its import map, npm packages and tasks from the
// working folder up, whatever its command (deno 2 runs a script or an npm: specifier without
// "run").
func TestPackageRunnerDeno(t *testing.T) {
	checkPackageRunner(t, []runnerCase{
		{"deno", []string{"run", "-A", "npm:@acme/mcp-server"}, true},
		{"deno", []string{"run", "-A", "/opt/acme/server.ts"}, true},
		{"deno", []string{"x", "jsr:@acme/mcp"}, true},
		{"dx", []string{"jsr:@acme/mcp"}, true},
		{"deno", []string{"-A", "npm:@acme/mcp-server"}, true},
		{"deno", []string{"task", "mcp"}, true},
		{"/usr/local/bin/deno", []string{"serve", "/opt/acme/server.ts"}, true},
	})
}

// TestPackageRunnerWrapped: a runner started through a wrapper (env, nohup, nice, timeout, ...)
// or a shell's script runs in the same folder, and takes its package from there the same way.
func TestPackageRunnerWrapped(t *testing.T) {
	checkPackageRunner(t, []runnerCase{
		{"env", []string{"npx", "-y", "@acme/mcp"}, true},
		{"/usr/bin/env", []string{"FOO=1", "npx", "-y", "@acme/mcp"}, true},
		{"nohup", []string{"npm", "exec", "@acme/mcp"}, true},
		{"nice", []string{"-n", "5", "uvx", "acme-mcp"}, true},
		{"timeout", []string{"600", "python3", "-m", "acme_mcp"}, true},
		{"env", []string{"nohup", "nice", "bunx", "acme"}, true},
		{"sh", []string{"-c", "cd /opt/acme && npx -y @acme/mcp"}, true},
		{"bash", []string{"-lc", "exec uvx acme-mcp"}, true},
		{"env", []string{"FOO=1", "node", "/opt/acme/server.js"}, false},
		{"nohup", []string{"/opt/acme/server"}, false},
		{"sh", []string{"/opt/acme/start.sh"}, false},
		{"node", []string{"/opt/npx/server.js", "npx"}, false},
	})
}
