package lsp_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// TestViewChangedMidCall: the attacker server changes its tool's view while a call of the tool
// runs (mcptest --apps, label "change-view": version 2 of the HTML, tools/list_changed, and the
// result only once the host has registered the change), hoping its new view is shown with the
// result before the person reviewed it. The call's view is refused with the held error, neither
// the editor nor the browser path gets version 2, the tool is held; once the person accepts the
// change, a new call shows version 2.
func TestViewChangedMidCall(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(map[string]any{"apps": server("--apps")}, "mode", "always-allow")})
	env.AwaitServer("apps", "ready")

	var res wire.ToolResult
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__apps__clock", "arguments": map[string]any{"label": "change-view"}}, &res)
	if res.IsError || !strings.Contains(res.Text, "clock change-view: tick 0") {
		t.Fatalf("the call that changed the view: %+v", res)
	}
	if res.View == nil {
		t.Fatalf("the call that changed the view has no view ref: %+v", res)
	}
	refusedView(t, env, *res.View)
	if err := env.Command(wire.CmdViewOpenInBrowser, map[string]any{"id": res.View.ID}, nil); err == nil {
		t.Errorf("the changed view was served in the browser")
	}

	// Held: the review is offered, switchboard.pins shows the view's change, a new call is refused.
	if p := awaitPinsChanged(env, 1); p.Server != "apps" || !strings.Contains(strings.Join(p.Changed, ","), "clock") {
		t.Errorf("pinsChanged = %+v", p)
	}
	var pins wire.PinsResult
	env.MustCommand(wire.CmdPins, map[string]string{"server": "apps"}, &pins)
	clockChanged := false
	for _, s := range pins.Servers {
		for _, c := range s.Changed {
			if c.Tool == "clock" && strings.Contains(c.Diff, "sha256") {
				clockChanged = true
			}
		}
	}
	if !clockChanged {
		t.Errorf("pins: clock's view change not shown: %+v", pins)
	}
	if r := call(env, "mcp__apps__clock", map[string]string{"label": "kitchen"}); !r.IsError || !strings.Contains(r.Text, "changed since you approved it") {
		t.Errorf("clock while held: %+v", r)
	}

	// Reviewed and accepted: the new view is the tool's now.
	env.MustCommand(wire.CmdPinsAccept, map[string]any{"server": "apps"}, &pins)
	after := callClock(t, env)
	var v wire.ViewResult
	env.MustCommand(wire.CmdView, map[string]any{"id": after.View.ID}, &v)
	if got := viewTitle.FindString(v.HTML); got != `"title">mcptest clock 2` {
		t.Errorf("view after the change was accepted: title %q", got)
	}
}

// TestViewChangedMidChatCall: the same attack on a chat turn's call: the result event's view is
// refused with the held error, and the model's turn goes on with the server's result.
func TestViewChangedMidChatCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llm.script")
	writeFile(t, path, `reply tool_call id=c1 name=mcp__apps__clock args={"label":"change-view"}

expect last_tool_result id=c1 ~ "clock change-view: tick 0"
reply text "shown"
`)
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(map[string]any{"apps": server("--apps")},
		"provider", map[string]any{"type": "script", "script": path}, "mode", "always-allow")})
	env.AwaitServer("apps", "ready")
	_, ref := chatView(t, env, "")
	refusedView(t, env, ref)
	if p := awaitPinsChanged(env, 1); p.Server != "apps" || !strings.Contains(strings.Join(p.Changed, ","), "clock") {
		t.Errorf("pinsChanged = %+v", p)
	}
}

// viewTitle finds the version mcptest's clock view shows.
var viewTitle = regexp.MustCompile(`"title">mcptest clock [^<]*`)

// refusedView checks that the view of a call whose tool changed while it ran carries the held
// error and that its HTML (the changed view's) is not given to the editor.
func refusedView(t *testing.T, env *hosttest.Env, ref wire.ViewRef) {
	t.Helper()
	if !strings.Contains(ref.Error, "the tool changed while the call ran") {
		t.Errorf("view ref of the call that changed it: %+v (want the held error)", ref)
	}
	var v wire.ViewResult
	err := env.Command(wire.CmdView, map[string]any{"id": ref.ID}, &v)
	if hosttest.ErrorCode(err) != -32602 || v.HTML != "" {
		t.Errorf("switchboard.view of the changed view: err %v, html with title %q", err, viewTitle.FindString(v.HTML))
	}
}
