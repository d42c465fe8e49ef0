package lsp_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// TestToolsAllowlistedAgreesWithGate: an allowlist entry for a workspace server's tool that was not
// granted for the server's current definition (hand-written, or granted for an earlier definition)
// lets nothing run without asking, so switchboard.tools must not show the tool as allowed.
func TestToolsAllowlistedAgreesWithGate(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{
		Files:     map[string]string{".mcp.json": workspaceServer()},
		UserFiles: map[string]string{"allow_tool": "mcp__w__echo\n"},
	})
	env.AwaitServer("w", "untrusted")
	env.MustCommand(wire.CmdTrust, map[string]string{"server": "w", "decision": "trust"}, nil)
	env.AwaitServer("w", "ready")
	var tools []toolInfo
	env.MustCommand(wire.CmdTools, map[string]string{"server": "w"}, &tools)
	if len(tools) == 0 {
		t.Fatal("no tools")
	}
	for _, ti := range tools {
		if ti.Allowlisted {
			t.Errorf("%s allowlisted = true, but the gate would ask (no grant for this definition)", ti.Name)
		}
	}
	// The gate agrees: the call asks.
	done := make(chan toolResult, 1)
	go func() {
		var res toolResult
		env.TryCall("workspace/executeCommand", map[string]any{"command": wire.CmdCallTool,
			"arguments": []any{map[string]any{"name": "mcp__w__echo", "arguments": map[string]string{"text": "x"}}}}, &res)
		done <- res
	}()
	a := env.AwaitApproval(1)
	env.MustCommand(wire.CmdApprove, map[string]string{"id": a.ID, "decision": "always"}, nil)
	<-done
	env.MustCommand(wire.CmdTools, map[string]string{"server": "w"}, &tools)
	for _, ti := range tools {
		if ti.Allowlisted != (ti.Name == "mcp__w__echo") {
			t.Errorf("after granting echo for this definition: %s allowlisted = %v", ti.Name, ti.Allowlisted)
		}
	}
}
