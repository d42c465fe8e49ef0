package mcpbridge

import (
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
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
		{"mcp__x___y", "", "", false},       // no registered name has a tool part starting with '_'
		{"mcp__x__-y", "x", "-y", true},
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

// Every name the registry can register parses back to its server, and its tool part never starts
// with '_'; tools whose names would (or are empty) are made safe.
func TestRegisteredNameParses(t *testing.T) {
	long := strings.Repeat("s", config.MaxServerNameLen)
	for _, tc := range [][2]string{
		{"x", "_y"}, {"x", "__y"}, {"x", ""}, {"x", "_"}, {"a", "_x"}, {long, strings.Repeat("t", 100)},
		{long, "_" + strings.Repeat("é", 40)}, {"g-h", "a__b"}, {"s", "é"},
	} {
		n := registeredName(tc[0], tc[1])
		s, tl, ok := ParseToolName(n)
		if !ok || s != tc[0] || !isSafeName(n) {
			t.Errorf("registeredName(%q, %q) = %q parses to %q, %q, %v; want server %q", tc[0], tc[1], n, s, tl, ok, tc[0])
		}
	}
	if got, want := registeredName("x", "_y"), "mcp__x__-y_"+shortHash("x", "_y"); got != want {
		t.Errorf("registeredName(x, _y) = %q; want %q", got, want)
	}
}

// FuzzToolNameIdentity: for valid server names, the registered name of (server, tool) parses back
// to server, its tool part never starts with '_', and two pairs with different servers never get
// names that parse to the same server. Unicode, '_', '-' and long names come from the seeds.
// serverNameRE is config's pattern for server names (config/names.go), copied: the fuzz target
// below tells a name refused for that pattern from one refused for the rules of tool naming.
var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

func FuzzToolNameIdentity(f *testing.F) {
	for _, s := range [][4]string{
		{"github", "delete_repo", "github_", "delete_repo"},
		{"github", "_delete_repo", "github", "delete_repo"},
		{"a", "_x", "a_", "x"},
		{"a-b", "c", "a", "b__c"},
		{"s", "read file/ü", "s", "read_file"},
		{strings.Repeat("s", 32), strings.Repeat("t", 80), strings.Repeat("s", 31), "s" + strings.Repeat("t", 80)},
		{"x", "", "x", "-"},
		{"日本", "ツール", "x", "_"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, s1, t1, s2, t2 string) {
		if config.ValidServerName(s1) != nil || config.ValidServerName(s2) != nil {
			if len(s1) > 0 && serverNameRE.MatchString(s1) && config.ValidServerName(s1) != nil {
				// refused names are exactly those whose names would not decode to one server
				if !strings.Contains(s1, "__") && !strings.HasSuffix(s1, "_") && len(s1) <= config.MaxServerNameLen {
					t.Fatalf("ValidServerName(%q) refused a name for no stated reason", s1)
				}
			}
			return
		}
		n1, n2 := registeredName(s1, t1), registeredName(s2, t2)
		p1, tp1, ok1 := ParseToolName(n1)
		p2, _, ok2 := ParseToolName(n2)
		if !ok1 || p1 != s1 || !ok2 || p2 != s2 {
			t.Fatalf("ParseToolName(%q) = %q, %v; ParseToolName(%q) = %q, %v", n1, p1, ok1, n2, p2, ok2)
		}
		if !isSafeName(n1) || strings.HasPrefix(tp1, "_") {
			t.Fatalf("registered name %q is not safe or its tool part starts with '_'", n1)
		}
		// A collision registers the hashed form instead: it parses to the server too.
		if h := hashedName(s1, t1); !isSafeName(h) {
			t.Fatalf("hashedName(%q, %q) = %q is not safe", s1, t1, h)
		} else if p, tp, ok := ParseToolName(h); !ok || p != s1 || strings.HasPrefix(tp, "_") {
			t.Fatalf("ParseToolName(hashedName(%q, %q) = %q) = %q, %q, %v", s1, t1, h, p, tp, ok)
		}
		if s1 != s2 && strings.HasPrefix(n1, ToolName(s2, "")) {
			t.Fatalf("%q (server %q) starts with server %q's prefix", n1, s1, s2)
		}
		if n1 == n2 && (s1 != s2 || t1 != t2) && ToolName(s1, t1) == n1 && ToolName(s2, t2) == n2 {
			t.Fatalf("(%q, %q) and (%q, %q) share the plain name %q", s1, t1, s2, t2, n1)
		}
	})
}
