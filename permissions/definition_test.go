package permissions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// defGate is a gate over a fresh allowlist file (holding content) and trust store.
func defGate(t *testing.T, content string, p Prompter, withTrust bool) (*Gate, *Allowlist, *TrustStore) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "allow_tool")
	if content != "" {
		writeFile(t, path, content)
	}
	al, _ := OpenAllowlist(path)
	var ts *TrustStore
	if withTrust {
		ts, _ = OpenTrustStore(filepath.Join(dir, "trust.json"))
	}
	return NewGate(GateOptions{Allowlist: al, Trust: ts, Prompter: p}), al, ts
}

// A workspace file defines its own "github" server. The user had granted mcp__github__* to their
// own github server; the workspace's definition does not inherit it: it is asked, not run. After
// "allow server" it runs; after its definition changes it is asked again.
func TestWorkspaceDefinitionDoesNotInheritGrant(t *testing.T) {
	ctx := context.Background()
	p := &fakePrompter{ans: AnswerDeny}
	g, al, ts := defGate(t, "mcp__github__*\n", p, true)
	ws := Request{Tool: "mcp__github__delete_repo", Server: "github", Definition: "fp-A"}

	d, _ := g.Check(ctx, ws)
	if d.Allowed || p.calls != 1 || !strings.Contains(d.Reason, "mcp__github__* was ignored") {
		t.Fatalf("first call: %+v after %d prompts; want asked, denied, saying the entry was ignored", d, p.calls)
	}
	// The user's own definition still has its grant.
	if d, _ := g.Check(ctx, Request{Tool: ws.Tool, Server: "github"}); !d.Allowed || d.By != ByAllowlist {
		t.Fatalf("user-defined server: %+v", d)
	}
	// allowlist-only says why it denied.
	if d, _ := g.Check(ctx, Request{Tool: ws.Tool, Server: "github", Definition: "fp-A", Mode: AllowlistOnly}); d.Allowed || !strings.Contains(d.Reason, "another definition") {
		t.Fatalf("allowlist-only: %+v", d)
	}

	p.ans = AnswerServer
	if d, _ := g.Check(ctx, ws); !d.Allowed || d.By != ByUser || d.Entry != "mcp__github__*" {
		t.Fatalf("allow server: %+v", d)
	}
	if !ts.Granted("fp-A", "mcp__github__*") {
		t.Fatal("the grant was not recorded for the definition")
	}
	p.calls = 0
	d, _ = g.Check(ctx, ws)
	if !d.Allowed || d.By != ByAllowlist || p.calls != 0 || !strings.Contains(d.Reason, "granted for this workspace definition") {
		t.Fatalf("after allow server: %+v (%d prompts); want run by the allowlist", d, p.calls)
	}

	p.ans = AnswerDeny
	changed := ws
	changed.Definition = "fp-B"
	if d, _ := g.Check(ctx, changed); d.Allowed || p.calls != 1 {
		t.Fatalf("changed definition: %+v (%d prompts); want asked", d, p.calls)
	}

	// Revoking the entry in the allowlist revokes the grant.
	if _, err := al.Replace("mcp__github__", nil); err != nil {
		t.Fatal(err)
	}
	if d, _ := g.Check(ctx, ws); d.Allowed || p.calls != 2 {
		t.Fatalf("after revoke: %+v (%d prompts); want asked", d, p.calls)
	}
}

// "Always" for one tool of a workspace definition writes the exact entry even though a prefix
// entry (made for another definition) covers the name, so the grant is visible and counts.
func TestWorkspaceDefinitionAlwaysUnderPrefix(t *testing.T) {
	ctx := context.Background()
	p := &fakePrompter{ans: AnswerAlways}
	g, al, _ := defGate(t, "mcp__github__*\n", p, true)
	ws := Request{Tool: "mcp__github__list_issues", Server: "github", Definition: "fp-A"}
	if d, _ := g.Check(ctx, ws); !d.Allowed || d.Entry != ws.Tool {
		t.Fatalf("always: %+v", d)
	}
	if got := strings.Join(al.Entries(), " "); got != "mcp__github__* mcp__github__list_issues" {
		t.Fatalf("entries = %q", got)
	}
	p.calls = 0
	if d, _ := g.Check(ctx, ws); !d.Allowed || d.By != ByAllowlist || d.Entry != ws.Tool || p.calls != 0 {
		t.Fatalf("second call: %+v", d)
	}
	if d, _ := g.Check(ctx, Request{Tool: "mcp__github__delete_repo", Server: "github", Definition: "fp-A"}); p.calls != 1 || d.By == ByAllowlist {
		t.Fatalf("another tool: %+v; want asked", d)
	}
}

// Without a trust store, a workspace definition's allowlist matches never count and its
// "always" answers are not saved (nothing it could not be held to).
func TestWorkspaceDefinitionNoTrustStore(t *testing.T) {
	ctx := context.Background()
	p := &fakePrompter{ans: AnswerServer}
	g, al, _ := defGate(t, "mcp__github__*\n", p, false)
	ws := Request{Tool: "mcp__github__x", Server: "github", Definition: "fp-A"}
	for range 2 {
		d, _ := g.Check(ctx, ws)
		if !d.Allowed || d.By != ByUser || d.Entry != "" || !strings.Contains(d.Reason, "not saved") {
			t.Fatalf("%+v; want allowed once, not saved", d)
		}
	}
	if p.calls != 2 || len(al.Entries()) != 1 {
		t.Fatalf("prompts %d, entries %v", p.calls, al.Entries())
	}
}

// A request whose tool name does not belong to its server matches nothing and saves nothing.
func TestGateToolServerMismatch(t *testing.T) {
	p := &fakePrompter{ans: AnswerServer}
	g, al, _ := defGate(t, "mcp__github__*\n", p, true)
	d, _ := g.Check(context.Background(), Request{Tool: "mcp__github__x", Server: "evil"})
	if d.By == ByAllowlist || p.calls != 1 || d.Entry != "" || len(al.Entries()) != 1 {
		t.Fatalf("%+v, entries %v; want asked and nothing saved", d, al.Entries())
	}
}

// Grants and trust decisions share trust.json; writing one keeps the other.
func TestTrustStoreGrantsKeepDecisions(t *testing.T) {
	ts, _ := OpenTrustStore(filepath.Join(t.TempDir(), "trust.json"))
	if err := ts.Set("w", "fp", true); err != nil {
		t.Fatal(err)
	}
	if err := ts.AddGrant("w", "fp", "mcp__w__*"); err != nil {
		t.Fatal(err)
	}
	if err := ts.Set("v", "fp2", false); err != nil {
		t.Fatal(err)
	}
	if ts.Get("w", "fp") != Trusted || !ts.Granted("fp", "mcp__w__*") || ts.Granted("fp2", "mcp__w__*") || ts.Granted("fp", "mcp__w__x") {
		t.Fatal("trust decisions and grants did not survive each other's writes")
	}
}

// The audit reason says why an entry matched.
func TestAllowlistReasonDescribesEntry(t *testing.T) {
	g, _, _ := defGate(t, "mcp__gh__*\nmcp__db__read*\n", nil, false)
	for tool, want := range map[string]string{
		"mcp__gh__x":      "(every tool of server gh)",
		"mcp__db__read_q": `(tools of server db whose names start with "read")`,
	} {
		s, _, _ := strings.Cut(strings.TrimPrefix(tool, "mcp__"), "__")
		if d, _ := g.Check(context.Background(), Request{Tool: tool, Server: s}); !d.Allowed || !strings.Contains(d.Reason, want) {
			t.Errorf("%s: %+v; want reason containing %q", tool, d, want)
		}
	}
}

// SetGrants makes one server's entries of a list exactly the grants of one definition: entries of
// other servers are skipped, what the list no longer has is no longer granted, an empty list
// removes the record, and another definition's grants stay.
func TestSetGrants(t *testing.T) {
	ts, err := OpenTrustStore(filepath.Join(t.TempDir(), "trust.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.AddGrant("w", "other", "mcp__w__a"); err != nil {
		t.Fatal(err)
	}
	if err := ts.SetGrants("w", "fp", []string{"edit_file", "mcp__w__a", "mcp__w-x__b", "mcp__w__b*", "mcp__w__a"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fp, entry string
		want      bool
	}{
		{"fp", "mcp__w__a", true}, {"fp", "mcp__w__b*", true}, {"fp", "edit_file", false}, {"fp", "mcp__w-x__b", false},
		{"other", "mcp__w__a", true}, {"other", "mcp__w__b*", false},
	} {
		if got := ts.Granted(tc.fp, tc.entry); got != tc.want {
			t.Errorf("after SetGrants: Granted(%q, %q) = %v, want %v", tc.fp, tc.entry, got, tc.want)
		}
	}
	if err := ts.SetGrants("w", "fp", []string{"mcp__w__b*"}); err != nil || ts.Granted("fp", "mcp__w__a") || !ts.Granted("fp", "mcp__w__b*") {
		t.Errorf("replacing: %v; mcp__w__a granted %v, mcp__w__b* granted %v", err, ts.Granted("fp", "mcp__w__a"), ts.Granted("fp", "mcp__w__b*"))
	}
	if err := ts.SetGrants("w", "fp", nil); err != nil || ts.Granted("fp", "mcp__w__b*") || !ts.Granted("other", "mcp__w__a") {
		t.Errorf("revoking: %v; fp granted %v, other granted %v", err, ts.Granted("fp", "mcp__w__b*"), ts.Granted("other", "mcp__w__a"))
	}
	if data, _ := os.ReadFile(ts.Path()); strings.Contains(string(data), `"fp"`) {
		t.Errorf("an empty grant list left its record: %s", data)
	}
	for _, bad := range [][2]string{{"w", ""}, {"w__x", "fp"}} {
		if err := ts.SetGrants(bad[0], bad[1], []string{"mcp__w__a"}); err == nil {
			t.Errorf("SetGrants(%q, %q) = nil, want an error", bad[0], bad[1])
		}
	}
}
