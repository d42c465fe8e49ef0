package policy

import (
	"strings"
	"testing"
)

// TestSandboxRequired: mcpSandbox "required" blocks every stdio server whose entry has no
// sandbox, from every scope (a workspace's, a managed-mcp.json's own), and admits a sandboxed
// one; HTTP servers are not its business; the most restrictive value of every file wins.
func TestSandboxRequired(t *testing.T) {
	const file = "/etc/switchboard/managed-settings.json"
	const required = `{"mcpSandbox": "required"}`
	boxed := stdio("fs", "npx", "/usr/bin/npx", "-y", "@modelcontextprotocol/server-filesystem")
	boxed.Sandboxed = true
	plain := boxed
	plain.Sandboxed = false
	ws := plain
	ws.Scope = ScopeWorkspace
	managedMCP := MemSource{Path: "/etc/switchboard/managed-mcp.json", Kind: KindMCP, Data: []byte(`{"mcpServers": {"fs": {"command": "npx"}}}`)}
	managed := plain
	managed.Scope, managed.Managed = ScopeManaged, managedMCP.Path
	cases := []struct {
		name     string
		settings string
		more     []MemSource
		launch   Launch
		allowed  bool
	}{
		{"no key: an unsandboxed server starts", `{}`, nil, plain, true},
		{"optional: an unsandboxed server starts", `{"mcpSandbox": "optional"}`, nil, plain, true},
		{"required: an unsandboxed server is blocked", required, nil, plain, false},
		{"required: a sandboxed server starts", required, nil, boxed, true},
		{"required: an HTTP server is not a local process", required, nil, remote("api", "https://mcp.example.com/v1"), true},
		{"attack: a workspace's unsandboxed server", required, nil, ws, false},
		{"required: managed-mcp.json's own servers too", required, []MemSource{managedMCP}, managed, false},
		{"most restrictive wins: a drop-in requires what the main file leaves optional", `{"mcpSandbox": "optional"}`,
			[]MemSource{{Path: "/etc/switchboard/managed-settings.d/50-sandbox.json", Data: []byte(required)}}, plain, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mem(t, tc.settings, tc.more...)
			d := p.Admit(tc.launch)
			if d.Allowed != tc.allowed {
				t.Fatalf("Admit(%+v).Allowed = %v, want %v; reason %q, chain %+v", tc.launch, d.Allowed, tc.allowed, d.Reason, d.Chain)
			}
			if tc.allowed {
				return
			}
			if d.Rule == nil || d.Rule.Pointer != "/mcpSandbox" || !strings.Contains(d.Message, `mcpSandbox "required" in `+d.Rule.File+":1:") {
				t.Errorf("decision %+v: want the mcpSandbox rule and its place named", d)
			}
			if c := d.Chain[len(d.Chain)-2]; c.Check != "mcpSandbox" {
				t.Errorf("chain %+v does not show the mcpSandbox check", d.Chain)
			}
		})
	}
	if rules := mem(t, required).Rules(); len(rules) != 1 || rules[0].Effect != "local servers run sandboxed only" || rules[0].Rule.Loc() != file+"#/mcpSandbox" {
		t.Errorf("Rules() = %+v", rules)
	}
}

// TestSandboxRequiredMessage: the person's sentence says what to do; where this system cannot
// sandbox, it says that instead (adding a sandbox would not help).
func TestSandboxRequiredMessage(t *testing.T) {
	p := mem(t, `{"mcpSandbox": "required", "adminContact": {"email": "it@example.com"}}`)
	l := stdio("fs", "npx", "/usr/bin/npx")
	want := `Blocked by your organisation: mcpSandbox "required" in /etc/switchboard/managed-settings.json:1:16: add "sandbox": true to the server's entry. Contact it@example.com.`
	if d := p.Admit(l); d.Message != want {
		t.Errorf("message\n got %s\nwant %s", d.Message, want)
	}
	l.NoSandbox = "this kernel has no Landlock"
	want = `Blocked by your organisation: mcpSandbox "required" in /etc/switchboard/managed-settings.json:1:16: this system cannot run a sandboxed server (this kernel has no Landlock). Contact it@example.com.`
	if d := p.Admit(l); d.Message != want {
		t.Errorf("message\n got %s\nwant %s", d.Message, want)
	}
}

// TestSandboxRequiredBadValue: a wrong value is a broken policy (every server blocked), named
// by file:line:column.
func TestSandboxRequiredBadValue(t *testing.T) {
	p := FromSources(noLookPath, MemSource{Path: "/etc/switchboard/managed-settings.json", Data: []byte("{\n  \"mcpSandbox\": true\n}")})
	if err := p.Broken(); err == nil || err.Error() != `/etc/switchboard/managed-settings.json:2:17: mcpSandbox must be a string, not a boolean` {
		t.Errorf("Broken() = %v", err)
	}
	p = FromSources(noLookPath, MemSource{Path: "/etc/switchboard/managed-settings.json", Data: []byte(`{"mcpSandbox": "yes"}`)})
	if err := p.Broken(); err == nil || err.Error() != `/etc/switchboard/managed-settings.json:1:16: mcpSandbox must be one of optional, required, not "yes"` {
		t.Errorf("Broken() = %v", err)
	}
}
