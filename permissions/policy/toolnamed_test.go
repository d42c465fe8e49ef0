package policy

import "testing"

// TestToolNamed: a tool registered under a made-safe name is judged by the rules that name it as
// Claude Code does (deny and ask); an allow rule grants only the registered name.
func TestToolNamed(t *testing.T) {
	p := mem(t, `{
		"permissions": {
			"deny":  ["mcp__s__files_read"],
			"ask":   ["mcp__s__files_write"],
			"allow": ["mcp__s__files_list", "mcp__s__files_write_3c4d5e6f"]
		}
	}`)
	cases := []struct {
		tool, original, want string
	}{
		{"mcp__s__files_read_1a2b3c4d", "files.read", "deny"},
		{"mcp__s__files_read_1a2b3c4d", "files/read", "deny"},
		{"mcp__s__files_write_3c4d5e6f", "files.write", "ask"}, // ask beats the allow of its registered name
		{"mcp__s__files_list_5e6f7a8b", "files.list", ""},      // an allow never reaches a made-safe name
		{"mcp__s__files_read", "files_read", "deny"},
		{"mcp__s__other_9a8b7c6d", "other!", ""},
	}
	for _, tc := range cases {
		v := p.ToolNamed(tc.tool, "s", tc.original)
		got := ""
		switch {
		case v.Deny != nil:
			got = "deny"
		case v.Ask != nil:
			got = "ask"
		case v.Allow != nil:
			got = "allow"
		}
		if got != tc.want {
			t.Errorf("ToolNamed(%s, %s) = %q, want %q", tc.tool, tc.original, got, tc.want)
		}
	}
}
