package permissions

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// allowlist10k writes a 10,000-entry file: 9,000 exact tool names and 1,000 prefix grants of
// varying length.
func allowlist10k(tb testing.TB) *Allowlist {
	tb.Helper()
	var b strings.Builder
	b.WriteString("# 10k entries\n")
	for i := range 9000 {
		fmt.Fprintf(&b, "mcp__server%d__tool_%d\n", i%300, i)
	}
	for i := range 1000 {
		fmt.Fprintf(&b, "mcp__pfx%d__%s*\n", i, strings.Repeat("r", i%17))
	}
	path := filepath.Join(tb.TempDir(), "allow_tool")
	writeFile(tb, path, b.String())
	a, err := OpenAllowlist(path)
	if err != nil || a.Err() != nil || len(a.Entries()) != 10000 {
		tb.Fatalf("setup: %v %v %d", err, a.Err(), len(a.Entries()))
	}
	return a
}

// BenchmarkGateAllowlisted10k measures one gate decision on an allowlisted tool with 10,000
// entries (goal: under 5 µs; it sits on every tool call).
func BenchmarkGateAllowlisted10k(b *testing.B) {
	a := allowlist10k(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name  string
		req   Request
		audit bool
	}{
		{"exact", Request{Tool: "mcp__server7__tool_4507", Server: "server7"}, false},
		{"prefix", Request{Tool: "mcp__pfx990__rrrrrrrrrrrrrrrr_query", Server: "pfx990"}, false},
		{"allowlist-only-miss", Request{Tool: "mcp__nope__x", Server: "nope", Mode: AllowlistOnly}, false},
		{"exact+audit", Request{Tool: "mcp__server7__tool_4507", Server: "server7", Arguments: []byte(`{"q":"select 1"}`)}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			opts := GateOptions{Allowlist: a}
			if bc.audit {
				l, err := OpenAuditLog(filepath.Join(b.TempDir(), "audit.jsonl"), 0)
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				l.SetLogger(slog.New(slog.DiscardHandler)) // the flood drops lines; don't log it
				opts.Audit = l
			}
			g := NewGate(opts)
			want := bc.req.Mode != AllowlistOnly
			b.ReportAllocs()
			for b.Loop() {
				d, _ := g.Check(ctx, bc.req)
				if d.Allowed != want {
					b.Fatalf("decision %+v", d)
				}
			}
		})
	}
}

// BenchmarkGateAllowlisted10kWithAudit is BenchmarkGateAllowlisted10k with the audit log on, as
// in production. "exact" and "prefix" time the decision path alone: the writer runs beside it,
// and lines it cannot keep up with are dropped (drops/op says how many). "exact+flush" waits
// for the writer every 512 calls (less than the queue, so nothing is dropped): the whole cost
// of an audited decision, file write included, spread over the calls.
func BenchmarkGateAllowlisted10kWithAudit(b *testing.B) {
	a := allowlist10k(b)
	ctx := context.Background()
	args := []byte(`{"q":"select 1"}`)
	for _, bc := range []struct {
		name  string
		req   Request
		flush bool
	}{
		{"exact", Request{Tool: "mcp__server7__tool_4507", Server: "server7", Arguments: args}, false},
		{"prefix", Request{Tool: "mcp__pfx990__rrrrrrrrrrrrrrrr_query", Server: "pfx990", Arguments: args}, false},
		{"exact+flush", Request{Tool: "mcp__server7__tool_4507", Server: "server7", Arguments: args}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l, err := OpenAuditLog(filepath.Join(b.TempDir(), "audit.jsonl"), 0)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			l.SetLogger(slog.New(slog.DiscardHandler))
			g := NewGate(GateOptions{Allowlist: a, Audit: l})
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				d, _ := g.Check(ctx, bc.req)
				if !d.Allowed {
					b.Fatalf("decision %+v", d)
				}
				if n++; bc.flush && n%512 == 0 {
					l.Flush()
				}
			}
			if bc.flush {
				l.Flush()
			}
			b.ReportMetric(float64(l.Dropped())/float64(n), "drops/op")
			if err := l.Err(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkMatch10k(b *testing.B) {
	a := allowlist10k(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := a.Match("mcp__pfx990__rrrrrrrrrrrrrrrr_query"); !ok {
			b.Fatal("no match")
		}
	}
}

// trustStoreOf writes a trust file with n workspace server definitions, each trusted with its
// definition stored (as the host stores it, about 400 bytes) and one grant, and opens it.
func trustStoreOf(tb testing.TB, n int) (*TrustStore, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "trust.json")
	ts, err := OpenTrustStore(path)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		fp := fmt.Sprintf("%064x", i)
		def := fmt.Sprintf(`{"command":"npx","args":["-y","@example/server-%d@1.2.3","--root","/home/user/src/project"],"env":{"API_URL":"https://example.com/api/v%d","LOG_LEVEL":"info"},"cwd":"/home/user/src/project","source":"/home/user/src/project/.vscode/mcp.json"}`, i, i)
		if err := ts.SetDefinition(fmt.Sprintf("ws%d", i), fp, true, []byte(def)); err != nil {
			tb.Fatal(err)
		}
		if err := ts.AddGrant(fmt.Sprintf("ws%d", i), fp, fmt.Sprintf("mcp__ws%d__query", i)); err != nil {
			tb.Fatal(err)
		}
	}
	// Read an hour after it was written, as a trust file usually is (one just written is parsed on
	// every look for racyWindow, see TrustStore.current).
	ts.wall = func() time.Time { return time.Now().Add(time.Hour) }
	return ts, fmt.Sprintf("%064x", n-1)
}

// BenchmarkGateWorkspaceGrant measures one gate decision on a workspace-defined server's
// allowlisted tool (single-confirm mode, so the allowlist decides), with 1, 10 and 100 workspace
// definitions in the trust file. The grant is looked up in the trust store on every call: its
// cost should not grow with the file.
func BenchmarkGateWorkspaceGrant(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("definitions=%d", n), func(b *testing.B) {
			ts, fp := trustStoreOf(b, n)
			server := fmt.Sprintf("ws%d", n-1)
			al := allowlistWith(b, "mcp__"+server+"__query")
			g := NewGate(GateOptions{Allowlist: al, Trust: ts})
			req := Request{Tool: "mcp__" + server + "__query", Server: server, Definition: fp, Mode: SingleConfirm}
			b.ReportAllocs()
			for b.Loop() {
				d, _ := g.Check(ctx, req)
				if !d.Allowed {
					b.Fatalf("decision %+v", d)
				}
			}
		})
	}
}

// allowlistWith opens an allowlist file holding entries.
func allowlistWith(tb testing.TB, entries ...string) *Allowlist {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "allow_tool")
	writeFile(tb, path, strings.Join(entries, "\n")+"\n")
	a, err := OpenAllowlist(path)
	if err != nil || a.Err() != nil {
		tb.Fatalf("setup: %v %v", err, a.Err())
	}
	return a
}
