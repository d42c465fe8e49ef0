package session_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

// TestCallToolVia: the caller's own call function runs an allowed MCP call (with the gate's ctx
// and the call's name and arguments); a denied call never reaches it; built-ins do not use it;
// nil is CallTool.
func TestCallToolVia(t *testing.T) {
	tools := sessiontest.NewTools().Add("fs", "echo", sessiontest.Echo).Add("fs", "write", sessiontest.Echo)
	m := newManager(t, session.Options{Tools: tools, Gate: sessiontest.DenyTools("mcp__fs__write")}, "")
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "caller")
	var got []string
	via := func(cctx context.Context, name string, args json.RawMessage) (mcpbridge.Result, error) {
		if cctx.Value(key{}) != "caller" {
			t.Errorf("call %s did not get the caller's ctx", name)
		}
		got = append(got, name+" "+string(args))
		return tools.Call(cctx, name, args)
	}
	res, d := m.CallToolVia(ctx, "mcp__fs__echo", json.RawMessage(`{"a":1}`), permissions.SingleConfirm, via)
	if res.IsError || res.Text != `{"a":1}` || !d.Allowed {
		t.Errorf("echo: %+v %+v", res, d)
	}
	if res, d := m.CallToolVia(ctx, "mcp__fs__write", nil, permissions.SingleConfirm, via); !res.IsError || d.Allowed {
		t.Errorf("denied: %+v %+v", res, d)
	}
	m.CallToolVia(ctx, "list_files", nil, permissions.AlwaysAllow, via)
	if len(got) != 1 || got[0] != `mcp__fs__echo {"a":1}` {
		t.Errorf("the call function ran for %q, want only the allowed MCP call", got)
	}
	if res, _ := m.CallToolVia(ctx, "mcp__fs__echo", json.RawMessage(`{"b":2}`), permissions.AlwaysAllow, nil); res.Text != `{"b":2}` || len(got) != 1 {
		t.Errorf("nil call function: %+v (ran %q)", res, got)
	}
}
