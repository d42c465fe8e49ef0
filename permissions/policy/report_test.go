package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReport: check's Policy section names each source, the effective rules, every server's
// decision with its rule as file#/json/pointer and line, and the tool marks; --json carries
// the same.
func TestReport(t *testing.T) {
	p := mem(t, "{\n  \"deniedMcpServers\": [{\"serverName\": \"shell\"}],\n  \"permissions\": {\"deny\": [\"mcp__github__delete_repository\", \"mcp__github__issue_delete\"], \"ask\": [\"mcp__github__create_*\"]}\n}",
		MemSource{Path: "/etc/claude-code/managed-settings.json", From: FromClaudeCode, Data: []byte(`{"permissions": {"deny": ["Bash(rm:*)"]}}`)})
	r := p.Report([]Launch{stdio("shell", "sh", "/bin/sh"), stdio("github", "npx", "")},
		[]ToolName{{Name: "mcp__github__delete_repository", Server: "github"}, {Name: "mcp__github__create_issue", Server: "github"},
			{Name: "mcp__github__get_issue", Server: "github"}, {Name: "mcp__github__issue_delete_1a2b3c4d", Server: "github", Original: "issue.delete"}})
	var b strings.Builder
	r.WriteText(&b)
	text := b.String()
	for _, want := range []string{
		"source /etc/switchboard/managed-settings.json (Switchboard)",
		"source /etc/claude-code/managed-settings.json (restrict-only from Claude Code)",
		"server shell: blocked by /etc/switchboard/managed-settings.json#/deniedMcpServers/0 (line 2)",
		"server github: allowed",
		"tool mcp__github__delete_repository: policy-deny by /etc/switchboard/managed-settings.json#/permissions/deny/0",
		"tool mcp__github__create_issue: policy-ask",
		// Registered under a made-safe name: judged by the server's own name too, as the gate does.
		"tool mcp__github__issue_delete_1a2b3c4d: policy-deny",
		`warning: /etc/claude-code/managed-settings.json#/permissions/deny/0: "Bash(rm:*)" is a Claude Code rule`,
		"denies by name only",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "mcp__github__get_issue") {
		t.Errorf("a tool without a rule is marked:\n%s", text)
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Servers map[string]ServerReport `json:"servers"`
	}
	json.Unmarshal(js, &back)
	if s := back.Servers["shell"]; s.Decision != "blocked" || s.Rule != "/etc/switchboard/managed-settings.json#/deniedMcpServers/0" || s.Line != 2 {
		t.Errorf("json servers.shell = %+v", s)
	}
}

// TestExplainText: `policy explain` shows each step with its rule.
func TestExplainText(t *testing.T) {
	p := mem(t, `{"permissions": {"deny": ["mcp__everything__echo"]}, "adminContact": {"email": "it@example.com"}}`)
	var b strings.Builder
	p.ExplainTool("mcp__everything__echo").WriteExplain(&b, "mcp__everything__echo")
	text := b.String()
	for _, want := range []string{"mcp__everything__echo: policy-deny", "1. permissions.deny: denied", "#/permissions/deny/0", "people see: Blocked by your organisation", "Contact it@example.com."} {
		if !strings.Contains(text, want) {
			t.Errorf("explain lacks %q:\n%s", want, text)
		}
	}
}

// TestReportWindowsOwner: on Windows check names a source's owner by its SID (and name), not as
// uid -1.
func TestReportWindowsOwner(t *testing.T) {
	r := Report{Sources: []Source{{Path: `C:\Program Files\Switchboard\managed-settings.json`, From: FromSwitchboard, Owner: -1, OwnerSID: sidAdministrators}}}
	var b strings.Builder
	r.WriteText(&b)
	if text := b.String(); !strings.Contains(text, "owner Administrators (S-1-5-32-544)") || strings.Contains(text, "uid -1") {
		t.Errorf("report:\n%s", text)
	}
}

// TestReportManagedAllowWorkspace: a managed allow rule marks the tool of the server it names,
// but not the same-named tool of a server a workspace file defines (the gate asks about that
// one: a repository can give its server any name).
func TestReportManagedAllowWorkspace(t *testing.T) {
	p := mem(t, `{"permissions": {"allow": ["mcp__github__get_issue"]}}`)
	for _, tc := range []struct {
		workspace bool
		mark      string
	}{{false, "policy-allow"}, {true, ""}} {
		r := p.Report(nil, []ToolName{{Name: "mcp__github__get_issue", Server: "github", Workspace: tc.workspace}})
		if got := r.Tools["mcp__github__get_issue"].Mark; got != tc.mark {
			t.Errorf("workspace=%v: mark %q, want %q", tc.workspace, got, tc.mark)
		}
	}
}
