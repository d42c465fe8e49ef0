package permissions_test

// This external test joins mcpbridge's naming (what the registry registers) with the allowlist's
// matching; the permissions package itself imports no sibling.

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// entriesFor are the allowlist entries a user can hold for the tool registered as name of server:
// the exact name, the whole server, and a tool-name prefix within the server.
func entriesFor(t *testing.T, server, name string) []string {
	_, tool, ok := mcpbridge.ParseToolName(name)
	if !ok {
		t.Fatalf("registered name %q does not parse", name)
	}
	return []string{name, permissions.ServerPrefix(server) + "*", permissions.ServerPrefix(server) + tool[:1+len(tool)/2] + "*"}
}

func matches(t *testing.T, entry, tool string) bool {
	a, _ := permissions.OpenAllowlist("")
	if err := a.Add(entry); err != nil {
		t.Fatalf("Add(%q): %v", entry, err)
	}
	_, ok := a.Match(tool)
	return ok
}

// FuzzEntryIdentity: for random (server, tool) pairs (with '_', '-', unicode and long names) named
// the way the registry names them, an allowlist entry made for one pair never matches a tool of
// another server, an exact entry never matches another tool, and the three packages that check
// server names (the configuration, the allowlist, the organisation's policy) agree on which are
// valid: a name one accepts and another refuses would be a server the policy cannot name, or a
// rule naming a server nobody can configure.
func FuzzEntryIdentity(f *testing.F) {
	for _, s := range [][4]string{
		{"github", "delete_repo", "github_", "delete_repo"},
		{"github", "_delete_repo", "github", "delete_repo"},
		{"a", "_x", "a_", "x"},
		{"a", "x", "a-b", "x"},
		{"gith", "x", "github", "x"},
		{"s", "read file/ü", "s", "read_file"},
		{strings.Repeat("s", 32), strings.Repeat("t", 80), strings.Repeat("s", 31), "s" + strings.Repeat("t", 80)},
		{"x", "", "x", "-"},
		{"日本", "ツール", "x", "_"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, s1, t1, s2, t2 string) {
		for _, s := range []string{s1, s2} {
			if (config.ValidServerName(s) == nil) != (permissions.ValidServerName(s) == nil) {
				t.Fatalf("ValidServerName(%q): mcpbridge %v, permissions %v", s, config.ValidServerName(s), permissions.ValidServerName(s))
			}
			if policyRefuses(s) != (permissions.ValidServerName(s) != nil) {
				t.Fatalf("server name %q: the policy refuses it %v, permissions.ValidServerName %v", s, policyRefuses(s), permissions.ValidServerName(s))
			}
		}
		if config.ValidServerName(s1) != nil || config.ValidServerName(s2) != nil {
			return
		}
		n1, n2 := mcpbridge.RegisteredName(s1, t1), mcpbridge.RegisteredName(s2, t2)
		if p, _, ok := mcpbridge.ParseToolName(n1); !ok || p != s1 {
			t.Fatalf("ParseToolName(%q) = %q, %v; want server %q", n1, p, ok, s1)
		}
		for i, e := range entriesFor(t, s1, n1) {
			if err := permissions.ValidEntry(e); err != nil {
				t.Fatalf("entry %q for (%q, %q): %v", e, s1, t1, err)
			}
			if !matches(t, e, n1) {
				t.Fatalf("entry %q does not match its own tool %q", e, n1)
			}
			if n1 == n2 {
				continue // one name, one pair: the registry hashes both sides of a collision
			}
			if m := matches(t, e, n2); m && (s1 != s2 || i == 0) {
				t.Fatalf("entry %q for (%q, %q) matches %q of (%q, %q)", e, s1, t1, n2, s2, t2)
			}
		}
	})
}

// policyRefuses reports whether the organisation's policy refuses name in a deny rule (its own
// copy of the name rule: the policy is a leaf and imports neither sibling).
func policyRefuses(name string) bool {
	// Bytes that are not UTF-8 become U+FFFD, which no name rule accepts either.
	rule, _ := json.Marshal(map[string]any{"deniedMcpServers": []map[string]string{{"serverName": name}}}) // ignore error: strings always encode
	p := policy.FromSources(func(string) (string, error) { return "", exec.ErrNotFound },
		policy.MemSource{Path: "/etc/switchboard/managed-settings.json", Data: rule})
	return len(p.Errors()) > 0
}
