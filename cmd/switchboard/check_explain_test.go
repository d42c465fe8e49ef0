package main

import (
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// TestCheckExplainHintAgrees: the `policy explain NAME` that check's mark names for a tool says
// what the mark says. A tool registered under a made-safe name (files.read) that a server-wide
// allow grants and a rule on the tool's own name denies is marked policy-deny; explain of its
// registered name would say policy-allow, so the hint names the rule's spelling of it.
func TestCheckExplainHintAgrees(t *testing.T) {
	for _, tc := range []struct{ name, policy string }{
		{"deny alone", `{"permissions": {"deny": ["mcp__s__files_read"]}}`},
		{"deny under a server-wide allow", `{"permissions": {"allow": ["mcp__s"], "deny": ["mcp__s__files_read"]}}`},
		{"ask under a server-wide allow", `{"permissions": {"allow": ["mcp__s"], "ask": ["mcp__s__files_read"]}}`},
		{"allow alone", `{"permissions": {"allow": ["mcp__s"]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := policy.FromSources(nil, policy.MemSource{Path: "/etc/switchboard/settings.json", Data: []byte(tc.policy)})
			if err := pol.Broken(); err != nil {
				t.Fatal(err)
			}
			tool := mcpbridge.Tool{Name: mcpbridge.RegisteredName("s", "files.read"), Server: "s", Tool: "files.read"}
			rep := pol.Report(nil, []policy.ToolName{{Name: tool.Name, Server: tool.Server, Original: tool.Tool}})
			mark := rep.Tools[tool.Name].Mark
			if mark == "" {
				t.Fatalf("%s is unmarked", tool.Name)
			}
			name := explainName(pol, tool, mark)
			if name == "" {
				name = tool.Name
			}
			if got := pol.ExplainTool(name).Verdict; got != mark {
				t.Errorf("check marks %s %s and names `policy explain %s`, which says %s", tool.Name, mark, name, got)
			}
		})
	}
}
