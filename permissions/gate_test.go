package permissions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakePrompter answers with a fixed answer, or misbehaves as told.
type fakePrompter struct {
	ans    Answer
	err    error
	block  bool               // wait until ctx ends and return ctx.Err()
	late   bool               // wait until ctx ends, then return the answer it took before (Prompter)
	cancel context.CancelFunc // cancel the caller's ctx first (the turn is cancelled)
	calls  int
}

func (p *fakePrompter) Confirm(ctx context.Context, req Request) (Answer, error) {
	p.calls++
	if p.cancel != nil {
		p.cancel()
	}
	if p.block || p.cancel != nil {
		<-ctx.Done()
		return AnswerDeny, ctx.Err()
	}
	if p.late {
		<-ctx.Done()
		return p.ans, nil
	}
	return p.ans, p.err
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

const testTool = "mcp__github__create_issue"

func TestGateTable(t *testing.T) {
	modes := []Mode{SingleConfirm, AlwaysAllow, AllowlistOnly}
	lists := map[string]string{
		"empty":  "",
		"other":  "mcp__other__*\nread_file\n",
		"exact":  "# mine\n" + testTool + "\n",
		"prefix": "mcp__github__*\n",
		"broken": testTool + "\nnot valid!\n",
	}
	matching := map[string]string{"exact": testTool, "prefix": "mcp__github__*"}
	prompts := []string{"none", "deny", "once", "always", "server", "error", "timeout", "cancel", "late"}

	type result struct {
		Allowed bool
		By      string
		Answer  Answer
		Entry   string
		Asked   bool
	}
	// want states PROTOCOL.md section 4 plainly: mode, then allowlist, then the prompter.
	want := func(mode Mode, list, prompt string) result {
		if mode == AlwaysAllow {
			return result{Allowed: true, By: ByMode}
		}
		if e, ok := matching[list]; ok {
			return result{Allowed: true, By: ByAllowlist, Entry: e}
		}
		if mode == AllowlistOnly {
			return result{By: ByMode}
		}
		switch prompt {
		case "none":
			return result{By: ByError}
		case "deny":
			return result{By: ByUser, Asked: true}
		case "once", "late": // late: the prompter owns the order, so its answer was taken in time
			return result{Allowed: true, By: ByUser, Answer: AnswerOnce, Asked: true}
		case "always", "server":
			r := result{Allowed: true, By: ByUser, Answer: AnswerAlways, Entry: testTool, Asked: true}
			if prompt == "server" {
				r.Answer, r.Entry = AnswerServer, "mcp__github__*"
			}
			if list == "broken" {
				r.Entry = "" // allowed once, not saved
			}
			return r
		case "error":
			return result{By: ByError, Asked: true}
		case "timeout":
			return result{By: ByTimeout, Asked: true}
		case "cancel":
			return result{By: ByCancel, Asked: true}
		}
		panic(prompt)
	}

	for _, mode := range modes {
		for list, content := range lists {
			for _, prompt := range prompts {
				name := fmt.Sprintf("%s/%s/%s", mode, list, prompt)
				t.Run(name, func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						path := filepath.Join(t.TempDir(), "allow_tool")
						if content != "" {
							writeFile(t, path, content)
						}
						al, err := OpenAllowlist(path)
						if err != nil {
							t.Fatal(err)
						}
						ctx, cancel := context.WithCancel(t.Context())
						defer cancel()
						var p *fakePrompter
						switch prompt {
						case "none":
						case "deny":
							p = &fakePrompter{ans: AnswerDeny}
						case "once":
							p = &fakePrompter{ans: AnswerOnce}
						case "always":
							p = &fakePrompter{ans: AnswerAlways}
						case "server":
							p = &fakePrompter{ans: AnswerServer}
						case "error":
							p = &fakePrompter{err: errors.New("editor went away")}
						case "timeout":
							p = &fakePrompter{block: true}
						case "late":
							p = &fakePrompter{late: true, ans: AnswerOnce}
						case "cancel":
							p = &fakePrompter{cancel: cancel}
						}
						opts := GateOptions{Allowlist: al, Timeout: 5 * time.Second}
						if p != nil {
							opts.Prompter = p
						}
						g := NewGate(opts)
						start := time.Now()
						d, err := g.Check(ctx, Request{Tool: testTool, Server: "github", Mode: mode, Arguments: json.RawMessage(`{"title":"x"}`)})
						if err != nil {
							t.Fatalf("Check: %v", err)
						}
						got := result{Allowed: d.Allowed, By: d.By, Answer: d.Answer, Entry: d.Entry, Asked: p != nil && p.calls > 0}
						if d.By != ByUser {
							got.Answer = 0
						}
						if diff := cmp.Diff(want(mode, list, prompt), got); diff != "" {
							t.Errorf("decision (-want +got):\n%s\nreason: %s", diff, d.Reason)
						}
						if d.Reason == "" {
							t.Error("empty Reason")
						}
						if d.By == ByAllowlist && d.File != path {
							t.Errorf("File = %q, want %q", d.File, path)
						}
						if prompt == "timeout" && got.Asked {
							if el := time.Since(start); el != 5*time.Second {
								t.Errorf("timed out after %v, want the 5s approval timeout", el)
							}
						}
						// Saved entries are on disk when Check returns; a broken file is untouched.
						after := readFile(t, path)
						switch {
						case list == "broken":
							if after != content {
								t.Errorf("broken file was rewritten:\n%s", after)
							}
						case got.Entry != "" && d.By == ByUser:
							if !strings.Contains(after, got.Entry+"\n") {
								t.Errorf("file lacks %q after %s:\n%s", got.Entry, prompt, after)
							}
							if _, ok := al.Match(testTool); !ok {
								t.Errorf("Match(%q) fails after %s", testTool, prompt)
							}
						default:
							if after != content {
								t.Errorf("file changed:\n%s", after)
							}
						}
					})
				})
			}
		}
	}
}

func TestGateSpecialCases(t *testing.T) {
	ctx := t.Context()
	t.Run("read-only built-in runs without asking", func(t *testing.T) {
		for _, mode := range []Mode{SingleConfirm, AllowlistOnly} {
			p := &fakePrompter{ans: AnswerDeny}
			g := NewGate(GateOptions{Prompter: p})
			d, _ := g.Check(ctx, Request{Tool: "read_file", Mode: mode, ReadOnlyBuiltin: true})
			if !d.Allowed || d.By != ByBuiltin || p.calls != 0 {
				t.Errorf("%v: got %+v, asked %d times", mode, d, p.calls)
			}
		}
		// An MCP tool never gets the built-in pass, even if a caller sets the flag.
		g := NewGate(GateOptions{})
		d, _ := g.Check(ctx, Request{Tool: testTool, Server: "github", ReadOnlyBuiltin: true})
		if d.Allowed {
			t.Errorf("MCP tool with ReadOnlyBuiltin allowed: %+v", d)
		}
	})
	t.Run("server answer for a built-in adds the tool", func(t *testing.T) {
		g := NewGate(GateOptions{Prompter: &fakePrompter{ans: AnswerServer}})
		d, _ := g.Check(ctx, Request{Tool: "write_file"})
		if !d.Allowed || d.Entry != "write_file" {
			t.Errorf("got %+v", d)
		}
		if diff := cmp.Diff([]string{"write_file"}, g.Allowlist().Entries()); diff != "" {
			t.Errorf("entries (-want +got):\n%s", diff)
		}
	})
	t.Run("server answer collapses the server's entries", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "allow_tool")
		writeFile(t, path, "mcp__github__list_issues\nwrite_file\n")
		al, _ := OpenAllowlist(path)
		g := NewGate(GateOptions{Allowlist: al, Prompter: &fakePrompter{ans: AnswerServer}})
		if d, _ := g.Check(ctx, Request{Tool: testTool, Server: "github"}); !d.Allowed {
			t.Fatalf("got %+v", d)
		}
		if diff := cmp.Diff("mcp__github__*\nwrite_file\n", readFile(t, path)); diff != "" {
			t.Errorf("file (-want +got):\n%s", diff)
		}
	})
	t.Run("persist failure still allows once", func(t *testing.T) {
		g := NewGate(GateOptions{Prompter: &fakePrompter{ans: AnswerAlways}})
		d, _ := g.Check(ctx, Request{Tool: "weird.tool"}) // "." is not allowed in an entry
		if !d.Allowed || d.By != ByUser || d.Entry != "" || !strings.Contains(d.Reason, "could not add") {
			t.Errorf("got %+v", d)
		}
	})
	t.Run("cancelled before the gate", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		d, _ := NewGate(GateOptions{}).Check(cctx, Request{Tool: "x", Mode: AlwaysAllow})
		if d.Allowed || d.By != ByCancel {
			t.Errorf("got %+v", d)
		}
	})
	t.Run("unknown mode", func(t *testing.T) {
		d, err := NewGate(GateOptions{}).Check(ctx, Request{Tool: "x", Mode: Mode(9)})
		if d.Allowed || d.By != ByError || err == nil {
			t.Errorf("got %+v, %v", d, err)
		}
	})
	t.Run("unknown answer", func(t *testing.T) {
		d, _ := NewGate(GateOptions{Prompter: &fakePrompter{ans: Answer(7)}}).Check(ctx, Request{Tool: "x"})
		if d.Allowed || d.By != ByError {
			t.Errorf("got %+v", d)
		}
	})
	t.Run("SetPrompter and SetTimeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := NewGate(GateOptions{})
			if d, _ := g.Check(t.Context(), Request{Tool: "x"}); d.By != ByError {
				t.Errorf("no prompter: got %+v", d)
			}
			g.SetPrompter(&fakePrompter{block: true})
			g.SetTimeout(time.Minute)
			start := time.Now()
			if d, _ := g.Check(t.Context(), Request{Tool: "x"}); d.By != ByTimeout || time.Since(start) != time.Minute {
				t.Errorf("got %+v after %v", d, time.Since(start))
			}
			g.SetTimeout(0)
			start = time.Now()
			g.Check(t.Context(), Request{Tool: "x"})
			if el := time.Since(start); el != DefaultTimeout {
				t.Errorf("default timeout: waited %v", el)
			}
		})
	})
}

func TestGateAudit(t *testing.T) {
	dir := t.TempDir()
	audit, err := OpenAuditLog(filepath.Join(dir, "audit.jsonl"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	al, _ := OpenAllowlist(filepath.Join(dir, "allow_tool"))
	al.Replace("mcp__github__", []string{"mcp__github__list_issues"})
	clock := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(1500 * time.Microsecond); return clock }
	audit.now = now
	g := NewGate(GateOptions{Allowlist: al, Audit: audit, Now: now, Prompter: &fakePrompter{ans: AnswerDeny}})
	args := json.RawMessage(`{"secret":"hunter2"}`)
	g.Check(t.Context(), Request{Tool: "mcp__github__list_issues", Server: "github", Arguments: args, Turn: "t1"})
	g.Check(t.Context(), Request{Tool: testTool, Server: "github", Arguments: args, Mode: SingleConfirm})

	if err := audit.Flush(); err != nil { // Record hands lines to a background writer
		t.Fatal(err)
	}
	data := readFile(t, audit.Path())
	if strings.Contains(data, "hunter2") {
		t.Fatalf("audit log contains the arguments:\n%s", data)
	}
	var got []AuditEntry
	for _, l := range strings.Split(strings.TrimSpace(data), "\n") {
		var e AuditEntry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("bad line %q: %v", l, err)
		}
		got = append(got, e)
	}
	sum := ArgsSha256(args)
	want := []AuditEntry{
		{Time: clock.Add(-4500 * time.Microsecond), Tool: "mcp__github__list_issues", Server: "github", ArgsSha256: sum, Mode: "single-confirm",
			Decision: "allow", By: ByAllowlist, Entry: "mcp__github__list_issues", File: al.Path(), Turn: "t1",
			Reason: "allowed by allowlist entry mcp__github__list_issues in " + al.Path(), LatencyMs: 1.5},
		{Time: clock, Tool: testTool, Server: "github", ArgsSha256: sum, Mode: "single-confirm",
			Decision: "deny", By: ByUser, Answer: "deny", Reason: "denied by the user", LatencyMs: 1.5},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
}

// orderingPrompter takes its answer at a chosen moment and returns only after ctx ends, as the
// host does when the user's answer and the approval timeout arrive together: it owns the order.
type orderingPrompter struct {
	answerFirst bool // the answer came before the deadline; else the deadline came first
	deadline    time.Time
}

func (p *orderingPrompter) Confirm(ctx context.Context, req Request) (Answer, error) {
	p.deadline = req.Deadline
	<-ctx.Done()
	if p.answerFirst {
		return AnswerOnce, nil
	}
	return AnswerDeny, fmt.Errorf("host: %w", ErrNoAnswer{By: ByTimeout})
}

// TestGatePrompterOrders: an answer the prompter took before the timeout counts even when Confirm
// returns after it; a prompter that saw the deadline first gets a denial by timeout. The prompter
// learns the deadline from the request.
func TestGatePrompterOrders(t *testing.T) {
	for _, tc := range []struct {
		answerFirst bool
		want        Decision
	}{
		{true, Decision{Allowed: true, By: ByUser, Answer: AnswerOnce, Reason: "allowed once by the user"}},
		{false, Decision{By: ByTimeout, Reason: "denied: no answer within 5s"}},
	} {
		t.Run(fmt.Sprintf("answerFirst=%v", tc.answerFirst), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &orderingPrompter{answerFirst: tc.answerFirst}
				g := NewGate(GateOptions{Prompter: p, Timeout: 5 * time.Second})
				start := time.Now()
				d, err := g.Check(t.Context(), Request{Tool: testTool, Server: "github", Mode: SingleConfirm})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, d); diff != "" {
					t.Errorf("decision (-want +got):\n%s", diff)
				}
				if want := start.Add(5 * time.Second); !p.deadline.Equal(want) {
					t.Errorf("Request.Deadline = %v, want %v", p.deadline, want)
				}
			})
		})
	}
}

// TestGateNoAnswer: a prompter that reports nobody can answer (the editor went away, the host shut
// down) gets a denial recorded by that cause, not by the user nor as a plain error.
func TestGateNoAnswer(t *testing.T) {
	for _, by := range []string{ByDisconnect, ByShutdown} {
		g := NewGate(GateOptions{Prompter: &fakePrompter{err: fmt.Errorf("host: %w", ErrNoAnswer{By: by})}})
		d, err := g.Check(context.Background(), Request{Tool: "mcp__s__t", Server: "s"})
		if err != nil || d.Allowed || d.By != by || !strings.Contains(d.Reason, "no answer") {
			t.Errorf("%s: Check = %+v, %v; want a denial by %s", by, d, err, by)
		}
	}
	g := NewGate(GateOptions{Prompter: &fakePrompter{err: ErrNoAnswer{By: "user"}}})
	if d, _ := g.Check(context.Background(), Request{Tool: "t"}); d.By != ByError {
		t.Errorf("ErrNoAnswer{By: user}: By = %q, want error (a prompter cannot claim an answer it did not get)", d.By)
	}
}

// TestGateNotAsked: a prompter that refuses to ask at all (a view with a question open, or muted)
// gets a denial by "limit" carrying its reason, never an allowance.
func TestGateNotAsked(t *testing.T) {
	g := NewGate(GateOptions{Prompter: &fakePrompter{err: fmt.Errorf("host: %w", ErrNotAsked{Why: "the view of x already has a question open"})}})
	d, err := g.Check(context.Background(), Request{Tool: "mcp__s__t", Server: "s", Via: "mcp__s__v", ViewID: "v1"})
	if err != nil || d.Allowed || d.By != ByLimit || d.Reason != "denied: the view of x already has a question open" {
		t.Errorf("Check = %+v, %v; want a denial by limit with the reason", d, err)
	}
}
