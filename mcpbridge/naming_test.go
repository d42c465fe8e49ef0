package mcpbridge

import (
	"strings"
	"testing"
)

func TestParseToolName(t *testing.T) {
	for _, tc := range []struct {
		in           string
		server, tool string
		ok           bool
	}{
		{"mcp__github__create_issue", "github", "create_issue", true},
		{"mcp__sqlite-notes__read_query", "sqlite-notes", "read_query", true},
		{"mcp__s__a__b", "s", "a__b", true}, // tools may contain "__"; servers may not
		{"mcp__x___y", "x", "_y", true},
		{"github__create_issue", "", "", false},
		{"mcp__github", "", "", false},
		{"mcp____tool", "", "", false},
		{"mcp__github__", "", "", false},
		{"mcp__-bad__t", "", "", false},
		{"", "", "", false},
	} {
		server, tool, ok := ParseToolName(tc.in)
		if server != tc.server || tool != tc.tool || ok != tc.ok {
			t.Errorf("ParseToolName(%q) = %q, %q, %v; want %q, %q, %v", tc.in, server, tool, ok, tc.server, tc.tool, tc.ok)
		}
	}
}

func TestToolNameRoundTrip(t *testing.T) {
	for _, tc := range [][2]string{{"github", "create_issue"}, {"a", "b__c"}, {"S-1", "x"}} {
		s, tl, ok := ParseToolName(ToolName(tc[0], tc[1]))
		if !ok || s != tc[0] || tl != tc[1] {
			t.Errorf("round trip %v = %q %q %v", tc, s, tl, ok)
		}
	}
}

func TestValidServerName(t *testing.T) {
	for name, ok := range map[string]bool{
		"github": true, "sqlite-notes": true, "a_b": true, "A1": true, "x_": true, "9": true,
		"": false, "-a": false, "_a": false, "a__b": false, "a.b": false, "a b": false, "é": false,
	} {
		if err := ValidServerName(name); (err == nil) != ok {
			t.Errorf("ValidServerName(%q) = %v; want ok=%v", name, err, ok)
		}
	}
}

func TestRegisteredName(t *testing.T) {
	long := strings.Repeat("t", 70)
	for _, tc := range []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"fs", "read.file", "mcp__fs__read_file_" + shortHash("fs", "read.file")},
		{"fs", "read file/ü", "mcp__fs__read_file____" + shortHash("fs", "read file/ü")},
		{"s", long, ("mcp__s__" + long)[:55] + "_" + shortHash("s", long)},
		{"s", strings.Repeat("t", 56), "mcp__s__" + strings.Repeat("t", 56)}, // exactly 64
	} {
		got := registeredName(tc.server, tc.tool)
		if got != tc.want {
			t.Errorf("registeredName(%q, %q) = %q; want %q", tc.server, tc.tool, got, tc.want)
		}
		if !isSafeName(got) {
			t.Errorf("registeredName(%q, %q) = %q is not safe", tc.server, tc.tool, got)
		}
	}
	// Distinct tools that sanitise alike stay distinct.
	if registeredName("fs", "a.b") == registeredName("fs", "a/b") {
		t.Error("a.b and a/b got the same name")
	}
}
