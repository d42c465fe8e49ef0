package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/host/wire"

	"github.com/switchboard-dev/switchboard/host/hosttest"
)

// A workspace file defines server "w" while the user's allowlist already grants mcp__w__* (made
// for the user's own "w"). After Trust, the workspace's definition does not inherit the grant:
// its tool is asked, not run. After "Allow server" it runs; after its definition changes it is
// asked again.
func TestWorkspaceDefinitionGrants(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{
		Files:     map[string]string{".mcp.json": workspaceServer()},
		UserFiles: map[string]string{"allow_tool": "mcp__w__*\n"},
	})
	env.AwaitServer("w", "untrusted")
	env.MustCommand(wire.CmdTrust, map[string]string{"server": "w", "decision": "trust"}, nil)
	env.AwaitServer("w", "ready")
	prompts := func() int { return len(env.State().RequestParams("window/showMessageRequest")) }
	call := func(answer string) (toolResult, int) {
		t.Helper()
		env.Editor.SetResponder(hosttest.Answer(answer))
		before := prompts()
		var res toolResult
		env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__w__echo", "arguments": map[string]string{"text": "x"}}, &res)
		return res, prompts() - before
	}
	if res, asked := call(wire.TitleDeny); !res.IsError || asked != 1 {
		t.Fatalf("inherited grant: result %+v, %d prompts; want asked and denied", res, asked)
	}
	if res, asked := call(wire.TitleAllowServer); res.IsError || asked != 1 {
		t.Fatalf("allow server: result %+v, %d prompts", res, asked)
	}
	if res, asked := call(wire.TitleDeny); res.IsError || asked != 0 {
		t.Fatalf("after allow server: result %+v, %d prompts; want run without asking", res, asked)
	}
	// A changed definition is another program: trusted again, it is asked again.
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"w": map[string]any{"command": server()["command"], "args": []string{}, "env": map[string]string{"CHANGED": "1"}}}})
	writeFile(t, filepath.Join(env.Workspace, ".mcp.json"), string(b))
	env.MustCommand(wire.CmdReconnect, nil, nil)
	env.MustCommand(wire.CmdTrust, map[string]string{"server": "w", "decision": "trust"}, nil)
	env.AwaitServer("w", "ready")
	if res, asked := call(wire.TitleDeny); !res.IsError || asked != 1 {
		t.Fatalf("changed definition: result %+v, %d prompts; want asked and denied", res, asked)
	}
}

// wsonlyFile is a workspace file that defines only server "wsonly" (the test server with args).
func wsonlyFile(args ...string) string {
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"wsonly": server(args...)}})
	return string(b)
}

// An explicit grant through switchboard.allowlist.set for a trusted workspace-only server binds to
// its current definition, as the prompt's "always" does: the next call runs without asking.
// Revoking it there (an empty list) asks again.
func TestAllowlistSetGrantsTrustedWorkspaceServer(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{Files: map[string]string{".mcp.json": wsonlyFile()}})
	env.AwaitServer("wsonly", "untrusted")
	env.MustCommand(wire.CmdTrust, map[string]string{"server": "wsonly", "decision": "trust"}, nil)
	env.AwaitServer("wsonly", "ready")
	call := wsonlyCaller(t, env)

	var set struct{ Entries []string }
	env.MustCommand(wire.CmdAllowlistSet, map[string]any{"prefix": "mcp__wsonly__", "entries": []string{"mcp__wsonly__echo"}}, &set)
	if len(set.Entries) != 1 || set.Entries[0] != "mcp__wsonly__echo" {
		t.Fatalf("allowlist.set = %+v", set)
	}
	if res, asked := call(); res.IsError || asked != 0 {
		t.Fatalf("after allowlist.set: result %+v, %d prompts; want run without asking", res, asked)
	}
	var tools []struct {
		Name        string
		Allowlisted bool
	}
	env.MustCommand(wire.CmdTools, map[string]string{"server": "wsonly"}, &tools)
	for _, tl := range tools {
		if tl.Name == "mcp__wsonly__echo" && !tl.Allowlisted {
			t.Errorf("switchboard.tools says %s is not allowlisted, the gate runs it", tl.Name)
		}
	}
	env.MustCommand(wire.CmdAllowlistSet, map[string]any{"prefix": "mcp__wsonly__", "entries": []string{}}, nil)
	if res, asked := call(); !res.IsError || asked != 1 {
		t.Fatalf("after revoking: result %+v, %d prompts; want asked and denied", res, asked)
	}
	// A whole-server grant binds as well.
	env.MustCommand(wire.CmdAllowlistSet, map[string]any{"prefix": "mcp__wsonly__", "entries": []string{"mcp__wsonly__*"}}, nil)
	if res, asked := call(); res.IsError || asked != 0 {
		t.Fatalf("after mcp__wsonly__*: result %+v, %d prompts; want run without asking", res, asked)
	}
}

// The attacker's move: after the user granted wsonly's echo, the workspace file changes wsonly's
// command. The changed definition is not trusted, and once trusted (the person answers the new
// trust prompt) it inherits no grant: its call is asked again.
func TestAllowlistSetGrantDoesNotSurviveChangedCommand(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{Files: map[string]string{".mcp.json": wsonlyFile()}})
	env.AwaitServer("wsonly", "untrusted")
	env.MustCommand(wire.CmdTrust, map[string]string{"server": "wsonly", "decision": "trust"}, nil)
	env.AwaitServer("wsonly", "ready")
	call := wsonlyCaller(t, env)
	env.MustCommand(wire.CmdAllowlistSet, map[string]any{"prefix": "mcp__wsonly__", "entries": []string{"mcp__wsonly__*"}}, nil)
	if res, asked := call(); res.IsError || asked != 0 {
		t.Fatalf("granted: result %+v, %d prompts; want run without asking", res, asked)
	}

	// The same test binary under another path is another command (what the repository runs).
	other := filepath.Join(t.TempDir(), "evil-server")
	if err := os.Link(mcptestBin, other); err != nil {
		data, rerr := os.ReadFile(mcptestBin)
		if rerr != nil {
			t.Fatal(rerr)
		}
		writeFile(t, other, string(data))
		if err := os.Chmod(other, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"wsonly": map[string]any{"command": other, "args": []string{}}}})
	writeFile(t, filepath.Join(env.Workspace, ".mcp.json"), string(b))
	var servers []hosttest.ServerStatus
	env.MustCommand(wire.CmdReconnect, nil, &servers)
	env.AwaitServer("wsonly", "untrusted")
	env.MustCommand(wire.CmdTrust, map[string]string{"server": "wsonly", "decision": "trust"}, nil)
	env.AwaitServer("wsonly", "ready")
	if res, asked := call(); !res.IsError || asked != 1 {
		t.Fatalf("changed command: result %+v, %d prompts; want asked and denied", res, asked)
	}
}

// wsonlyCaller calls mcp__wsonly__echo, denying any approval, and returns the result and how many
// approval prompts it raised.
func wsonlyCaller(t *testing.T, env *hosttest.Env) func() (toolResult, int) {
	prompts := func() int { return len(env.State().RequestParams("window/showMessageRequest")) }
	return func() (toolResult, int) {
		t.Helper()
		env.Editor.SetResponder(hosttest.Answer(wire.TitleDeny))
		before := prompts()
		var res toolResult
		env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__wsonly__echo", "arguments": map[string]string{"text": "x"}}, &res)
		return res, prompts() - before
	}
}
