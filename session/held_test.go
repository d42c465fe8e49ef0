package session

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
)

type heldTools struct{ set *mcpbridge.ToolSet }

func (h heldTools) Tools() []mcpbridge.Tool         { return h.set.All() }
func (h heldTools) Snapshot() *mcpbridge.ToolSet    { return h.set }
func (h heldTools) Instructions() map[string]string { return nil }
func (h heldTools) Call(context.Context, string, json.RawMessage) (mcpbridge.Result, error) {
	return mcpbridge.Result{Text: "ran"}, nil
}

type recordGate struct{ reqs []permissions.Request }

func (g *recordGate) Check(_ context.Context, r permissions.Request) (permissions.Decision, error) {
	g.reqs = append(g.reqs, r)
	return permissions.Decision{By: permissions.ByPin, Reason: "definition changed"}, nil
}

// A tool the host holds back (its definition changed since approved) is not offered to the model,
// and a call to it still reaches the gate, which says why it is refused.
func TestHeldToolNotOffered(t *testing.T) {
	set := mcpbridge.NewToolSet([]mcpbridge.Tool{
		{Name: "mcp__s__ok", Server: "s", Tool: "ok"},
		{Name: "mcp__s__changed", Server: "s", Tool: "changed", Held: true},
	})
	g := &recordGate{}
	m := NewManager(Options{Tools: heldTools{set}, Gate: g})
	defer m.Close()
	for _, t2 := range m.ToolList() {
		if t2.Name == "mcp__s__changed" {
			t.Errorf("held tool offered to the model")
		}
	}
	res, d := m.CallTool(context.Background(), "mcp__s__changed", nil, permissions.AlwaysAllow)
	if !res.IsError || d.By != permissions.ByPin || len(g.reqs) != 1 {
		t.Errorf("call to held tool = %+v, %+v, gate saw %d", res, d, len(g.reqs))
	}
}
