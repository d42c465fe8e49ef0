package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
)

// snapTools is a registry double that publishes snapshots like *mcpbridge.Registry.
type snapTools struct {
	snap  atomic.Pointer[mcpbridge.ToolSet]
	calls atomic.Int64
}

func newSnapTools(n int) *snapTools {
	f := &snapTools{}
	f.set(n)
	return f
}

// set publishes n tools mcp__srv__t0000... plus mcp__srv__echo.
func (f *snapTools) set(n int) {
	tools := make([]mcpbridge.Tool, 0, n+1)
	for i := range n {
		name := fmt.Sprintf("t%04d", i)
		tools = append(tools, mcpbridge.Tool{Name: "mcp__srv__" + name, Server: "srv", Tool: name,
			Description: "dummy " + name, InputSchema: json.RawMessage(`{ "type": "object", "properties": {"x": {"type": "string"}} }`)})
	}
	tools = append(tools, mcpbridge.Tool{Name: "mcp__srv__echo", Server: "srv", Tool: "echo", Definition: "def-1",
		InputSchema: json.RawMessage(`{"type":"object"}`)})
	slices.SortFunc(tools, func(a, b mcpbridge.Tool) int { return cmpString(a.Name, b.Name) })
	f.snap.Store(mcpbridge.NewToolSet(tools))
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (f *snapTools) Snapshot() *mcpbridge.ToolSet { return f.snap.Load() }
func (f *snapTools) Tools() []mcpbridge.Tool      { return slices.Clone(f.snap.Load().All()) }
func (f *snapTools) Instructions() map[string]string {
	return nil
}
func (f *snapTools) Call(_ context.Context, name string, _ json.RawMessage) (mcpbridge.Result, error) {
	f.calls.Add(1)
	return mcpbridge.Result{Name: name, Text: "hi", Bytes: 2}, nil
}

// recGate allows everything and keeps the last request.
type recGate struct {
	last atomic.Pointer[permissions.Request]
}

func (g *recGate) Check(_ context.Context, req permissions.Request) (permissions.Decision, error) {
	g.last.Store(&req)
	return permissions.Decision{Allowed: true, By: permissions.ByMode}, nil
}

func callAllocs(t *testing.T, n int) float64 {
	t.Helper()
	m := session.NewManager(session.Options{Tools: newSnapTools(n), Gate: allowGate{}})
	defer m.Close()
	args := json.RawMessage(`{"text":"hi"}`)
	return testing.AllocsPerRun(200, func() {
		if res, _ := m.CallTool(context.Background(), "mcp__srv__echo", args, permissions.AlwaysAllow); res.IsError {
			t.Fatalf("call: %+v", res)
		}
	})
}

// A direct call's allocations do not grow with the number of registered tools: it must not copy
// the tool list or build a map of it per call.
func TestCallAllocsConstantInToolCount(t *testing.T) {
	small, big := callAllocs(t, 10), callAllocs(t, 1000)
	if big > small {
		t.Fatalf("allocations per call: %v with 10 tools, %v with 1000", small, big)
	}
}

// A change of the registry's snapshot is seen by the next call and the next tool list; the gate
// still gets the tool's definition and server.
func TestSnapshotChangeSeen(t *testing.T) {
	f := newSnapTools(2)
	g := &recGate{}
	m := session.NewManager(session.Options{Tools: f, Gate: g})
	defer m.Close()
	before := len(m.ToolList())
	res, _ := m.CallTool(context.Background(), "mcp__srv__t0005", nil, permissions.AlwaysAllow)
	if !res.IsError {
		t.Fatalf("t0005 should be unknown with 2 tools: %+v", res)
	}
	f.set(10)
	if got := len(m.ToolList()); got != before+8 {
		t.Fatalf("tool list after the change: %d, want %d", got, before+8)
	}
	res, _ = m.CallTool(context.Background(), "mcp__srv__t0005", nil, permissions.AlwaysAllow)
	if res.IsError || res.Text != "hi" {
		t.Fatalf("t0005 after the change: %+v", res)
	}
	m.CallTool(context.Background(), "mcp__srv__echo", nil, permissions.AlwaysAllow)
	if req := g.last.Load(); req == nil || req.Definition != "def-1" || req.Server != "srv" {
		t.Fatalf("gate request: %+v", req)
	}
}

// BenchmarkCallToolCount: one direct call (gate and tool answer at once) with 10, 100 and 1,000
// registered tools. Time and allocations per call should not depend on the count.
func BenchmarkCallToolCount(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := session.NewManager(session.Options{Tools: newSnapTools(n), Gate: allowGate{}})
			defer m.Close()
			args := json.RawMessage(`{"text":"hi"}`)
			b.ReportAllocs()
			for b.Loop() {
				m.CallTool(context.Background(), "mcp__srv__echo", args, permissions.AlwaysAllow)
			}
		})
	}
}

// What counts as a JSON object for a call's arguments.
func TestCallArgumentsMustBeObject(t *testing.T) {
	m := session.NewManager(session.Options{Tools: newSnapTools(1), Gate: allowGate{}})
	defer m.Close()
	for _, tc := range []struct {
		args string
		ok   bool
	}{
		{`{}`, true}, {` {"a":1} `, true}, {"\n{\"a\":[1,{}]}\t", true},
		{`null`, false}, {`[]`, false}, {`"x"`, false}, {`1`, false}, {`{"a":1} x`, false},
		{`{"a":}`, false}, {"\v{}", false}, {`{`, false},
	} {
		res, d := m.CallTool(context.Background(), "mcp__srv__echo", json.RawMessage(tc.args), permissions.AlwaysAllow)
		if got := d.By != session.ByInvalid; got != tc.ok {
			t.Errorf("arguments %q: accepted %v, want %v (%+v)", tc.args, got, tc.ok, res)
		}
	}
}

// recModel asks for one echo call per step for steps steps, keeping each request's tool specs.
type recModel struct {
	steps int
	mu    sync.Mutex
	seen  [][]session.ToolSpec
}

func (p *recModel) Stream(_ context.Context, req session.Request) iter.Seq2[session.Chunk, error] {
	p.mu.Lock()
	p.seen = append(p.seen, req.Tools)
	n := len(p.seen)
	p.mu.Unlock()
	return func(yield func(session.Chunk, error) bool) {
		if n > p.steps {
			yield(session.Chunk{Text: "done"}, nil)
			return
		}
		yield(session.Chunk{Kind: 1, ToolCall: session.ToolCall{ID: fmt.Sprint("c", n), Name: "mcp__srv__echo", Args: json.RawMessage(`{}`)}}, nil)
	}
}

// The model gets the same tool specs, built once, at every step while the tools do not change
// (prompt caching needs identical bytes), with compact schemas; a change gives new specs.
func TestToolSpecsBuiltOncePerSnapshot(t *testing.T) {
	f := newSnapTools(3)
	m := session.NewManager(session.Options{Tools: f, Gate: allowGate{}})
	defer m.Close()
	turn := func(p *recModel) {
		m.UseProvider(p)
		done := make(chan struct{})
		if _, _, err := m.Start(context.Background(), session.StartParams{Prompt: "go"}, func(e session.Event) {
			if e.Kind == session.KindDone {
				close(done)
			}
		}); err != nil {
			t.Fatal(err)
		}
		<-done
	}
	p := &recModel{steps: 3}
	turn(p)
	if len(p.seen) != 4 {
		t.Fatalf("%d model calls, want 4", len(p.seen))
	}
	for i, specs := range p.seen[1:] {
		if &specs[0] != &p.seen[0][0] {
			t.Errorf("step %d: the specs were built again", i+1)
		}
	}
	for _, s := range p.seen[0] {
		if s.Name == "mcp__srv__t0000" && string(s.InputSchema) != `{"type":"object","properties":{"x":{"type":"string"}}}` {
			t.Errorf("schema sent as %s, want it compact", s.InputSchema)
		}
	}
	f.set(4)
	p2 := &recModel{steps: 0}
	turn(p2)
	if got, was := len(p2.seen[0]), len(p.seen[0]); got != was+1 {
		t.Errorf("after the change: %d specs, want %d", got, was+1)
	}
}
