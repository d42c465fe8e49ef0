package session_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

type appTools struct {
	set   *mcpbridge.ToolSet
	calls []string
}

func (a *appTools) Tools() []mcpbridge.Tool         { return a.set.All() }
func (a *appTools) Snapshot() *mcpbridge.ToolSet    { return a.set }
func (a *appTools) Instructions() map[string]string { return nil }
func (a *appTools) Call(_ context.Context, name string, _ json.RawMessage) (mcpbridge.Result, error) {
	a.calls = append(a.calls, name)
	return mcpbridge.Result{Name: name, Text: "ran"}, nil
}

// An MCP Apps tool with visibility ["app"] is never offered to the model, and a model that names
// it anyway (an injected instruction) gets "unknown tool": it is not run and the gate is not
// asked. A direct call (the person, or the host for a view) still reaches the gate.
func TestAppOnlyToolNotForTheModel(t *testing.T) {
	appOnly := &mcpbridge.ToolUI{ResourceURI: "ui://s/v", Visibility: []string{mcpbridge.VisibleToApp}}
	both := &mcpbridge.ToolUI{ResourceURI: "ui://s/v"}
	tools := &appTools{set: mcpbridge.NewToolSet([]mcpbridge.Tool{
		{Name: "mcp__s__show", Server: "s", Tool: "show", UI: both},
		{Name: "mcp__s__tick", Server: "s", Tool: "tick", UI: appOnly},
	})}
	gate := sessiontest.AllowAll()
	m := session.NewManager(session.Options{Tools: tools, Gate: gate})
	t.Cleanup(m.Close)
	for _, tl := range m.ToolList() {
		if tl.Name == "mcp__s__tick" {
			t.Errorf("app-only tool offered to the model")
		}
	}
	m.UseProvider(sessiontest.Script(t, `reply tool_call id=c1 name=mcp__s__tick args={}
reply tool_call id=c2 name=mcp__s__show args={}
reply text "ok"`))
	_, evs := runTurn(t, m, session.StartParams{Prompt: "go", Mode: permissions.AlwaysAllow})
	var texts []string
	for _, ev := range evs {
		if ev.Result != nil {
			texts = append(texts, ev.Result.Name+"="+ev.Result.Text)
		}
	}
	sort.Strings(texts) // the calls of one reply may end in either order
	if got := strings.Join(texts, " "); got != `mcp__s__show=ran mcp__s__tick={"error":"Unknown tool: mcp__s__tick"}` {
		t.Errorf("results: %s", got)
	}
	if got := strings.Join(tools.calls, " "); got != "mcp__s__show" {
		t.Errorf("ran %q", got)
	}
	res, d := m.CallTool(context.Background(), "mcp__s__tick", nil, permissions.AlwaysAllow)
	if res.IsError || !d.Allowed {
		t.Errorf("direct call of the app-only tool: %+v %+v", res, d)
	}
}
