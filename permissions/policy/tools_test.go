package policy

import (
	"strings"
	"testing"
)

// TestTool: permissions.deny beats ask beats allow; the MCP forms of Claude Code; imports never
// grant; Claude-only rules are ignored with a warning.
func TestTool(t *testing.T) {
	p := mem(t, `{
		"permissions": {
			"deny":  ["mcp__github__delete_repository", "mcp__shell", "write_file"],
			"ask":   ["mcp__github__create_*", "mcp__github__delete_repository"],
			"allow": ["mcp__github__get_issue", "mcp__github__create_issue", "Bash(ls:*)"]
		}
	}`, MemSource{Path: "/etc/claude-code/managed-settings.json", From: FromClaudeCode, Data: []byte(`{
		"permissions": {"deny": ["mcp__everything__echo", "Read(./.env)", "WebFetch"], "allow": ["mcp__everything__add"]}
	}`)})
	cases := []struct {
		tool, server, want string // want: deny, ask, allow or ""
		ptr                string
	}{
		{"mcp__github__delete_repository", "github", "deny", "/permissions/deny/0"},
		{"mcp__shell__run", "shell", "deny", "/permissions/deny/1"},
		{"mcp__SHELL__run", "SHELL", "deny", "/permissions/deny/1"},
		{"write_file", "", "deny", "/permissions/deny/2"},
		{"mcp__github__create_issue", "github", "ask", "/permissions/ask/0"}, // ask beats the allow
		{"mcp__github__get_issue", "github", "allow", "/permissions/allow/0"},
		{"mcp__github__list_issues", "github", "", ""},
		{"mcp__everything__echo", "everything", "deny", "/permissions/deny/0"},
		{"mcp__everything__add", "everything", "", ""}, // imported allow grants nothing
		// A tool name that is not of its server is judged by nothing (the gate refuses it).
		{"mcp__shell__run", "github", "", ""},
		{"read_file", "", "", ""},
	}
	for _, tc := range cases {
		v := p.Tool(tc.tool, tc.server)
		got, r := "", (*Rule)(nil)
		switch {
		case v.Deny != nil:
			got, r = "deny", v.Deny
		case v.Ask != nil:
			got, r = "ask", v.Ask
		case v.Allow != nil:
			got, r = "allow", v.Allow
		}
		if got != tc.want || (r != nil && r.Pointer != tc.ptr) {
			t.Errorf("Tool(%s, %s) = %s %s, want %s %s", tc.tool, tc.server, got, r.Loc(), tc.want, tc.ptr)
		}
		if got == "deny" && (p.Offered(tc.tool, tc.server) || !strings.Contains(v.Reason, r.Loc())) {
			t.Errorf("Tool(%s): denied but offered, or reason %q lacks the rule", tc.tool, v.Reason)
		}
	}
	w := strings.Join(p.Warnings(), "\n")
	for _, s := range []string{`"Read(./.env)" is a Claude Code rule`, `"WebFetch" names a Claude Code tool`, "permissions.allow is not imported", `"Bash(ls:*)" is a Claude Code rule`} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings lack %q:\n%s", s, w)
		}
	}
}

// TestToolEveryMCP: "mcp__*" in deny (or ask) covers every MCP tool and no built-in one; it is
// refused in allow, where it would grant everything.
func TestToolEveryMCP(t *testing.T) {
	p := mem(t, `{"permissions": {"deny": ["mcp__*"]}}`)
	if p.Tool("mcp__a__b", "a").Deny == nil || p.Tool("read_file", "").Deny != nil {
		t.Errorf("mcp__* deny")
	}
	bad := FromSources(noLookPath, MemSource{Path: "/p.json", Data: []byte(`{"permissions": {"allow": ["mcp__*"]}}`)})
	if bad.Broken() == nil {
		t.Errorf("mcp__* allow accepted")
	}
}

// TestBrokenFailsClosed: a policy with one wrong value blocks every server and refuses every
// MCP call; built-in tools still run.
func TestBrokenFailsClosed(t *testing.T) {
	p := FromSources(noLookPath, MemSource{Path: "/etc/switchboard/managed-settings.json", Data: []byte("{\n  \"mcpAccess\": \"al\"\n}")})
	err := p.Broken()
	if err == nil || err.Error() != `/etc/switchboard/managed-settings.json:2:16: mcpAccess must be one of all, none, registry, not "al"` {
		t.Fatalf("Broken() = %v", err)
	}
	if d := p.Admit(stdio("any", "true", "/bin/true")); d.Allowed || strings.Count(d.Message, "managed-settings.json:2:16") != 1 {
		t.Errorf("broken policy admitted a server, or its sentence does not name where once: %+v", d)
	}
	if v := p.Tool("mcp__any__thing", "any"); strings.Count(v.Message, "managed-settings.json:2:16") != 1 {
		t.Errorf("a call's refusal does not name where once: %q", v.Message)
	}
	if v := p.Tool("mcp__any__thing", "any"); v.Deny == nil {
		t.Errorf("broken policy allowed an MCP call")
	}
	if v := p.Tool("read_file", ""); v.Deny != nil {
		t.Errorf("broken policy refused a built-in tool")
	}
	if p.SamplingDenied() == nil {
		t.Errorf("broken policy allows sampling")
	}
}

// TestMode: a disabled mode asked for is refused; from settings it falls back with a warning.
func TestMode(t *testing.T) {
	for _, src := range []MemSource{
		{Path: "/etc/switchboard/managed-settings.json", Data: []byte(`{"disabledModes": ["always-allow"]}`)},
		{Path: "/etc/switchboard/managed-settings.json", Data: []byte(`{"permissions": {"disableBypassPermissionsMode": "disable"}}`)},
		{Path: "/etc/claude-code/managed-settings.json", From: FromClaudeCode, Data: []byte(`{"permissions": {"disableBypassPermissionsMode": "disable"}}`)},
		{Path: "/etc/vscode/policy.json", From: FromVSCode, Kind: KindVSCode, Data: []byte(`{"ChatToolsAutoApprove": false}`)},
	} {
		p := FromSources(noLookPath, src)
		if p.Broken() != nil {
			t.Fatal(p.Broken())
		}
		if v := p.Mode(ModeAlwaysAllow, true); v.Mode != "" || v.Refused == nil || !strings.Contains(v.Message, src.Path) {
			t.Errorf("%s: explicit always-allow: %+v", src.Data, v)
		}
		if v := p.Mode(ModeAlwaysAllow, false); v.Mode != ModeSingleConfirm || v.Warning == "" {
			t.Errorf("%s: always-allow from settings: %+v", src.Data, v)
		}
		if v := p.Mode(ModeAllowlistOnly, true); v.Mode != ModeAllowlistOnly || v.Refused != nil {
			t.Errorf("%s: allowlist-only: %+v", src.Data, v)
		}
	}
}

// TestRestrictions: pinning, sampling, sharedServers and VS Code's eligible-for-auto-approval.
func TestRestrictions(t *testing.T) {
	p := mem(t, `{"pinning": "warn", "sampling": "deny", "sharedServers": "workspace-only", "allowManagedPermissionRulesOnly": true}`,
		MemSource{Path: "/etc/switchboard/managed-settings.d/10-strict.json", Data: []byte(`{"pinning": "enforce", "sharedServers": "allow"}`)},
		MemSource{Path: "/etc/vscode/policy.json", From: FromVSCode, Kind: KindVSCode, Data: []byte(`{"ChatToolsEligibleForAutoApproval": "{\"mcp__github__merge\": false, \"runInTerminal\": false}", "AdminContactEmail": "help@example.com"}`)})
	if v, r := p.Pinning(); v != "enforce" || r.File != "/etc/switchboard/managed-settings.d/10-strict.json" {
		t.Errorf("Pinning = %s %s", v, r.Loc())
	}
	if v, _ := p.SharedServers(); v != "workspace-only" {
		t.Errorf("SharedServers = %s, want the more restrictive workspace-only", v)
	}
	if p.SamplingDenied() == nil || p.ManagedRulesOnly() == nil {
		t.Errorf("sampling deny or allowManagedPermissionRulesOnly lost")
	}
	if v := p.Tool("mcp__github__merge", "github"); v.Ask == nil || v.Ask.From != FromVSCode {
		t.Errorf("ChatToolsEligibleForAutoApproval: %+v", v)
	}
	if p.Contact().Email != "help@example.com" {
		t.Errorf("contact %+v", p.Contact())
	}
}

// TestExplainTool prints the chain for one tool.
func TestExplainTool(t *testing.T) {
	p := mem(t, `{"permissions": {"ask": ["mcp__github__create_*"]}, "disabledModes": ["always-allow"]}`)
	d := p.ExplainTool("mcp__github__create_issue")
	if !d.Allowed || d.Rule == nil || d.Rule.Pointer != "/permissions/ask/0" {
		t.Fatalf("ExplainTool: %+v", d)
	}
	var checks []string
	for _, s := range d.Chain {
		checks = append(checks, s.Check+"="+s.Outcome)
	}
	got := strings.Join(checks, "; ")
	for _, want := range []string{"permissions.deny=no rule", "permissions.ask=asks every time", "disabledModes=mode always-allow is disabled"} {
		if !strings.Contains(got, want) {
			t.Errorf("chain %q lacks %q", got, want)
		}
	}
}

// TestRegistryURL: the organisation's registry is mcpRegistryUrl, else VS Code's
// McpGalleryServiceUrl; a value that is not a URL breaks the policy (fails closed).
func TestRegistryURL(t *testing.T) {
	vs := MemSource{Path: "/etc/vscode/policy.json", From: FromVSCode, Kind: KindVSCode, Data: []byte(`{"McpGalleryServiceUrl": "https://gallery.example.com"}`)}
	p := FromSources(noLookPath, MemSource{Path: "/etc/switchboard/managed-settings.json", Data: []byte(`{"mcpRegistryUrl": "https://mcp.corp.example/", "mcpAccess": "registry"}`)}, vs)
	if u, r := p.RegistryURL(); u != "https://mcp.corp.example/" || r == nil || r.Pointer != "/mcpRegistryUrl" {
		t.Errorf("RegistryURL = %q, %+v", u, r)
	}
	if !p.RegistryOnly() {
		t.Errorf("RegistryOnly = false with mcpAccess registry")
	}
	p = FromSources(noLookPath, MemSource{Path: "/etc/switchboard/managed-settings.json", Data: []byte(`{}`)}, vs)
	if u, r := p.RegistryURL(); u != "https://gallery.example.com" || r == nil || r.File != "/etc/vscode/policy.json" {
		t.Errorf("RegistryURL from VS Code = %q, %+v", u, r)
	}
	if p.RegistryOnly() {
		t.Errorf("RegistryOnly without mcpAccess registry")
	}
	p = FromSources(noLookPath, MemSource{Path: "/etc/switchboard/managed-settings.json", Data: []byte(`{"mcpRegistryUrl": "ftp://x"}`)})
	if err := p.Broken(); err == nil || !strings.Contains(err.Error(), "mcpRegistryUrl") {
		t.Errorf("a bad mcpRegistryUrl: Broken = %v", err)
	}
}
