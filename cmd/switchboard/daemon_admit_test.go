package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
)

// TestDaemonAdmitAllowedCommandEnv (attack through the daemon): a window of an older build, or
// one that lies, asks the daemon for an allowlisted serverCommand whose environment makes it run
// other code (NODE_OPTIONS, LD_PRELOAD), or for an allowlisted package runner in a repository
// (where its node_modules chooses the package). The daemon's own check refuses both, as the
// window's does; the launch as allowed, with the environment every window passes, runs.
func TestDaemonAdmitAllowedCommandEnv(t *testing.T) {
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("no npx")
	}
	withPolicyTree(t, `{"allowedMcpServers": [{"serverCommand": ["npx", "-y", "@modelcontextprotocol/server-github"]}]}`)
	admit := daemonAdmit(policyPaths)
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/u", "LANG=C.UTF-8", "XDG_CONFIG_HOME=/home/u/.config"}
	req := func(dir string, env ...string) broker.Request {
		return broker.Request{Name: "gh", ProtocolVersion: "2025-11-25", Launch: broker.Launch{Command: npx,
			Args: []string{"-y", "@modelcontextprotocol/server-github"}, Env: append(append([]string{}, base...), env...),
			Dir: dir, Scope: broker.ScopeUser, Source: broker.SourceUser}}
	}
	if err := admit(req("/", "GITHUB_PERSONAL_ACCESS_TOKEN=x")); err != nil {
		t.Fatalf("the allowed launch was refused: %v", err)
	}
	for _, tc := range []struct {
		name, dir, env, want string
	}{
		{"NODE_OPTIONS", "/", "NODE_OPTIONS=--require /tmp/evil.js", "NODE_OPTIONS"},
		{"LD_PRELOAD", "/", "LD_PRELOAD=/tmp/evil.so", "LD_PRELOAD"},
		{"in a repository", "/home/u/repo", "", "/home/u/repo"},
	} {
		var env []string
		if tc.env != "" {
			env = append(env, tc.env)
		}
		err := admit(req(tc.dir, env...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: daemon admit = %v, want it refused naming %s", tc.name, err, tc.want)
		}
	}
}
