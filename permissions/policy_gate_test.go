package permissions

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGatePolicy is the gate's policy step (design section 6.3, gate order): a deny refuses in
// every mode even when allowlisted; an ask asks even in always-allow and when allowlisted, and
// denies in allowlist-only; a managed allow runs without asking; a disabled mode is decided as
// its fallback; allowManagedPermissionRulesOnly makes the user's allowlist grant nothing.
func TestGatePolicy(t *testing.T) {
	const rule = "/etc/switchboard/managed-settings.json#/permissions/deny/0"
	cases := []struct {
		name    string
		pol     PolicyVerdict
		mode    Mode
		listed  bool   // the tool is in the user's allowlist
		answer  Answer // the prompter's answer, if asked
		allowed bool
		by      string
		asked   bool
		def     string // the server is workspace-defined, with this definition fingerprint
	}{
		{"deny beats always-allow", PolicyVerdict{Deny: true, Rule: rule}, AlwaysAllow, false, AnswerOnce, false, ByPolicy, false, ""},
		{"deny beats the allowlist", PolicyVerdict{Deny: true, Rule: rule}, SingleConfirm, true, AnswerOnce, false, ByPolicy, false, ""},
		{"ask beats always-allow", PolicyVerdict{Ask: true, Rule: rule}, AlwaysAllow, false, AnswerOnce, true, ByUser, true, ""},
		{"ask beats the allowlist", PolicyVerdict{Ask: true, Rule: rule}, SingleConfirm, true, AnswerDeny, false, ByUser, true, ""},
		{"ask in allowlist-only denies", PolicyVerdict{Ask: true, Rule: rule}, AllowlistOnly, true, AnswerOnce, false, ByPolicy, false, ""},
		{"managed allow", PolicyVerdict{Allow: true, Rule: rule}, SingleConfirm, false, AnswerDeny, true, ByPolicy, false, ""},
		// A repository's server that takes the name the organisation's rule names is not the
		// server the organisation allowed: its calls are asked about.
		{"managed allow does not grant a workspace server", PolicyVerdict{AllowNotHere: true, Rule: rule}, SingleConfirm, false, AnswerDeny, false, ByUser, true, "def1"},
		{"managed allow, workspace server, allowlist-only", PolicyVerdict{AllowNotHere: true, Rule: rule}, AllowlistOnly, false, AnswerOnce, false, ByMode, false, "def1"},
		// The user's own server that takes ${workspaceFolder} has a definition per folder, and
		// a repository cannot take its name: the organisation's rule grants.
		{"managed allow, the user's per-folder server", PolicyVerdict{Allow: true, Rule: rule}, SingleConfirm, false, AnswerDeny, true, ByPolicy, false, "def1"},
		{"always-allow disabled falls back to asking", PolicyVerdict{ModeOff: true, Fallback: SingleConfirm, ModeRule: rule}, AlwaysAllow, false, AnswerDeny, false, ByUser, true, ""},
		{"managed rules only: the allowlist grants nothing", PolicyVerdict{NoUserGrants: true}, SingleConfirm, true, AnswerOnce, true, ByUser, true, ""},
		{"managed rules only in allowlist-only", PolicyVerdict{NoUserGrants: true}, AllowlistOnly, true, AnswerOnce, false, ByMode, false, ""},
		{"no policy: the allowlist grants", PolicyVerdict{}, SingleConfirm, true, AnswerDeny, true, ByAllowlist, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "allow_tool")
			if tc.listed {
				writeFile(t, path, testTool+"\n")
			}
			al, err := OpenAllowlist(path)
			if err != nil {
				t.Fatal(err)
			}
			p := &fakePrompter{ans: tc.answer}
			g := NewGate(GateOptions{Allowlist: al, Prompter: p, Policy: func(Request) PolicyVerdict { return tc.pol }})
			d, err := g.Check(t.Context(), Request{Tool: testTool, Server: "github", Mode: tc.mode, Definition: tc.def})
			if err != nil {
				t.Fatal(err)
			}
			if tc.pol.AllowNotHere && !strings.Contains(d.Reason, "does not count for a server a workspace file defines") {
				t.Errorf("reason %q does not say why the organisation's allow rule was not applied", d.Reason)
			}
			if d.Allowed != tc.allowed || d.By != tc.by || (p.calls > 0) != tc.asked {
				t.Errorf("got allowed=%v by=%s asked=%v (%s); want allowed=%v by=%s asked=%v", d.Allowed, d.By, p.calls > 0, d.Reason, tc.allowed, tc.by, tc.asked)
			}
			if d.By == ByPolicy && d.Entry != rule {
				t.Errorf("policy decision names %q, want the rule %s", d.Entry, rule)
			}
		})
	}
}

// TestGatePolicyNoSave: with allowManagedPermissionRulesOnly an "always" answer is taken once and
// not written to the allowlist (it would grant nothing and mislead the user).
func TestGatePolicyNoSave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "allow_tool")
	al, _ := OpenAllowlist(path)
	g := NewGate(GateOptions{Allowlist: al, Prompter: &fakePrompter{ans: AnswerAlways},
		Policy: func(Request) PolicyVerdict { return PolicyVerdict{NoUserGrants: true} }})
	d, _ := g.Check(t.Context(), Request{Tool: testTool, Server: "github"})
	if !d.Allowed || !strings.Contains(d.Reason, "not saved: the organisation's policy allows only its own rules") || readFile(t, path) != "" {
		t.Errorf("decision %+v, allowlist %q", d, readFile(t, path))
	}
}
