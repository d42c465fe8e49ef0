package permissions

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// The findings, as an attacker would try them. A workspace file the user trusted defines server
// "github_" with tool "delete_repo": registered as mcp__github___delete_repo, it ran without a
// prompt under the user's entry mcp__github__* (a raw string prefix of the name).
func TestGateServerEntryDoesNotCoverLookalikeServer(t *testing.T) {
	a, _ := OpenAllowlist("")
	if err := a.Add("mcp__github__*"); err != nil {
		t.Fatal(err)
	}
	p := &fakePrompter{ans: AnswerDeny}
	g := NewGate(GateOptions{Allowlist: a, Prompter: p})
	d, _ := g.Check(context.Background(), Request{Tool: "mcp__github___delete_repo", Server: "github_"})
	if d.Allowed || d.By == ByAllowlist || p.calls != 1 {
		t.Fatalf("decision = %+v after %d prompts; want the user asked (and denying)", d, p.calls)
	}
	// The entry still covers github's own tools.
	if d, _ := g.Check(context.Background(), Request{Tool: "mcp__github__list_issues", Server: "github"}); !d.Allowed || d.By != ByAllowlist {
		t.Errorf("github's own tool: %+v", d)
	}
}

// An exact entry mcp__a___x (made for tool "x" of server "a_") approved tool "_x" of server "a".
// Such an entry names no one server now: the file is malformed and grants nothing.
func TestGateExactEntryDoesNotCrossServers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "allow_tool")
	writeFile(t, path, "mcp__a___x\n")
	a, _ := OpenAllowlist(path)
	var pe *ParseError
	if !errors.As(a.Err(), &pe) || pe.Line != 1 {
		t.Fatalf("Err() = %v; want a ParseError at line 1", a.Err())
	}
	p := &fakePrompter{ans: AnswerOnce}
	g := NewGate(GateOptions{Allowlist: a, Prompter: p})
	for _, req := range []Request{{Tool: "mcp__a___x", Server: "a"}, {Tool: "mcp__a___x", Server: "a_"}} {
		if d, _ := g.Check(context.Background(), req); d.By == ByAllowlist || p.calls == 0 {
			t.Errorf("%+v: decision %+v; want asked", req, d)
		}
	}
}

// A wildcard that does not name one whole server is refused with file:line, not a grant across
// servers.
func TestEntryWildcardAcrossServers(t *testing.T) {
	for _, e := range []string{"mcp__gith*", "mcp__*", "mcp_*", "edit_*", "mcp__github___*", "mcp____*", "mcp__github_x_*"} {
		_, err := parseAllowlist("F", []byte("mcp__github__*\n"+e+"\n"))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.HasPrefix(err.Error(), "F:2: ") {
			t.Errorf("parse %q = %v; want a ParseError at F:2", e, err)
		}
	}
	for _, e := range []string{"mcp__github__*", "mcp__github__list*", "mcp__github__a__*", "mcp__github__-x*", "edit_file", "mcp__g__x"} {
		if err := ValidEntry(e); err != nil {
			t.Errorf("ValidEntry(%q) = %v; want ok", e, err)
		}
	}
}

// "switchboard allow set mcp__github__" deleted the entries of server "github_", and a prefix for
// such a server was accepted. Now the prefix is refused with the name rule, and a file holding an
// entry that names no one server is never rewritten.
func TestReplaceAmbiguousServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "allow_tool")
	const content = "mcp__github__*\nmcp__github___delete_repo\n"
	writeFile(t, path, content)
	a, _ := OpenAllowlist(path)
	if _, err := a.Replace("mcp__github__", nil); err == nil || !strings.Contains(err.Error(), path+":2:") {
		t.Errorf("Replace on a file with an ambiguous entry = %v; want an error naming %s:2", err, path)
	}
	if got := readFile(t, path); got != content {
		t.Errorf("file changed to %q", got)
	}
	b, _ := OpenAllowlist("")
	var ie *InputError
	if _, err := b.Replace("mcp__github___", []string{"mcp__github___x"}); !errors.As(err, &ie) || !strings.Contains(err.Error(), "must not end in '_'") {
		t.Errorf("Replace(mcp__github___) = %v; want an InputError stating the rule", err)
	}
	if err := ValidServerName("github_"); err == nil || !strings.Contains(err.Error(), "must not end in '_'") {
		t.Errorf("ValidServerName(github_) = %v", err)
	}
}

// Matching compares parsed servers: a tool of server "github-x" is not matched by github's
// prefix entries, and a tool whose name does not parse matches no prefix entry.
func TestMatchParsedServer(t *testing.T) {
	a, _ := OpenAllowlist("")
	for _, e := range []string{"mcp__github__*", "mcp__gh__li*"} {
		if err := a.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	for tool, want := range map[string]string{
		"mcp__github__x":      "mcp__github__*",
		"mcp__github-x__x":    "",
		"mcp__githubx__x":     "",
		"mcp__gh__list":       "mcp__gh__li*",
		"mcp__gh__li":         "mcp__gh__li*",
		"mcp__gh__l":          "",
		"mcp__gh_li__x":       "",
		"mcp__github___x":     "", // not a registered name
		"mcp__github__":       "",
		"mcp__github__a__b":   "mcp__github__*",
		"mcp__x__mcp__github": "",
	} {
		e, ok := a.Match(tool)
		if e != want || ok != (want != "") {
			t.Errorf("Match(%q) = %q, %v; want %q", tool, e, ok, want)
		}
	}
}
