package lsp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// TestPolicyDenyMadeSafeName: a policy rule names a tool as Claude Code does (mcp__server__tool,
// characters outside [A-Za-z0-9_-] as '_', never cut), while Switchboard registers a tool whose
// name has such characters, or is too long, under a made-safe name with a hash. The deny must
// still hold: the tool is not offered, marked, and its call refused, in always-allow with an
// allowlist entry for it.
func TestPolicyDenyMadeSafeName(t *testing.T) {
	const long = "export_every_issue_comment_and_attachment_of_the_whole_project"
	ps := policyTree(t, `{"permissions": {"deny": ["mcp__t__files_read", "mcp__t__`+long+`"]}}`)
	env := runWith(t, hosttest.Config{
		InitOptions: initOpts(map[string]any{"t": server()}, "mode", "always-allow"),
		UserFiles:   map[string]string{"allow_tool": "mcp__t__*\n"},
		Options:     withPolicy(ps),
	})
	before := env.AwaitServer("t", "ready").Tools
	// A new tool asks before its first run (pins): the person says yes, the policy must still refuse.
	env.Editor.SetResponder(hosttest.Answer("Allow once"))
	for _, name := range []string{"files.read", long} {
		if res := call(env, "mcp__t__add_tool", map[string]string{"name": name}); res.IsError {
			t.Fatalf("add_tool %s = %+v", name, res)
		}
	}
	env.Await("two more tools", func(s *hosttest.State) bool {
		st, _ := s.Server("t")
		return st.Tools == before+2
	})
	var tools []wire.ToolInfo
	env.MustCommand(wire.CmdTools, map[string]string{"server": "t"}, &tools)
	for _, name := range []string{"files.read", long} {
		i := slices.IndexFunc(tools, func(ti wire.ToolInfo) bool { return ti.Tool == name })
		if i < 0 {
			t.Fatalf("no tool %s in %+v", name, tools)
		}
		ti := tools[i]
		if ti.Name == "mcp__t__"+name {
			t.Fatalf("%s registered as is (%s): the test needs a made-safe name", name, ti.Name)
		}
		if ti.Policy != "deny" {
			t.Errorf("%s (registered %s): policy mark %q, want deny", name, ti.Name, ti.Policy)
		}
		res := call(env, ti.Name, map[string]string{})
		if !res.IsError || !strings.Contains(res.Text, "#/permissions/deny/") {
			t.Errorf("call of %s (registered %s), denied by the policy, = %+v", name, ti.Name, res)
		}
	}
	if res := call(env, "mcp__t__echo", map[string]string{"text": "x"}); res.IsError {
		t.Errorf("echo (no rule) = %+v", res)
	}
}
