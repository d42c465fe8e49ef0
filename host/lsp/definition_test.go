package lsp_test

import (
	"encoding/json"
	"github.com/switchboard-dev/switchboard/host/wire"
	"path/filepath"
	"testing"

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
