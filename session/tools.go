package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
)

// Tool-count limits per model request.
const (
	WarnTools = 20  // above this, one warning (the seed's guideline)
	MaxTools  = 128 // above this, the turn fails
)

// Decision "By" values the session adds to the permissions.By* ones. The gate is not consulted for
// these calls.
const (
	ByUnknown = "unknown" // no such tool
	ByInvalid = "invalid" // the arguments are not a JSON object
	// ByRepeat: the call repeats, with the same name and arguments, a call of this turn that the
	// gate denied or that failed twice; it is neither asked again nor run.
	ByRepeat = "repeat"
)

// toolSet is the tools for one model call or direct call: the built-ins, then the MCP tools of
// one registry snapshot. It is built once per snapshot (the specs, with their schemas, included,
// so the bytes sent to the model stay identical from step to step) and shared: never modify it.
type toolSet struct {
	src      *mcpbridge.ToolSet // the registry snapshot it was built from
	list     []mcpbridge.Tool   // built-ins, then MCP tools (registry order)
	specs    []ToolSpec         // list as offered to the model
	mcp      *mcpbridge.ToolSet // MCP tools by name, without any that would shadow a built-in
	index    map[string]int     // list index by name
	nbuiltin int                // how many of list are built-ins

	searchSpec ToolSpec           // search_tools, offered above the tool-search threshold
	search     *ToolSearchOptions // the tool-search options it was built with (Manager.SetToolSearch)
	baseOnce   sync.Once
	base       []ToolSpec // see Manager.searchBase
}

// snapshot returns the current toolSet: in O(1) while the registry's snapshot and the
// tool-search options are unchanged.
func (m *Manager) snapshot() *toolSet {
	var src *mcpbridge.ToolSet
	switch t := m.opts.Tools.(type) {
	case nil:
	case ToolSnapshotter:
		src = t.Snapshot()
	default:
		src = mcpbridge.NewToolSet(t.Tools()) // no snapshots: build one per call
	}
	search := m.toolSearch.Load()
	if cur := m.tools.Load(); cur != nil && cur.src == src && cur.search == search {
		return cur
	}
	_, resources := m.opts.Tools.(ResourceReader)
	ts := newToolSet(src, resources)
	ts.search = search
	m.tools.Store(ts) // racing builders each use their own; the last stored is as good
	return ts
}

// newToolSet builds the toolSet of src; resources offers read_resource (rich.go).
func newToolSet(src *mcpbridge.ToolSet, resources bool) *toolSet {
	mcp := src.All()
	ts := &toolSet{src: src, list: make([]mcpbridge.Tool, 0, len(builtins)+1+len(mcp)), mcp: src}
	shadow := false
	for _, b := range builtins {
		ts.list = append(ts.list, b.tool)
	}
	if resources {
		ts.list = append(ts.list, readResourceBuiltin.tool)
	}
	ts.nbuiltin = len(ts.list)
	for _, t := range mcp {
		if _, dup := builtinByName[t.Name]; dup {
			shadow = true
			continue // cannot happen with mcp__ names; never let a server shadow a built-in
		}
		if t.Held {
			continue // held back by its pin (host): callable, so the gate says why, but not offered
		}
		if !t.UI.ModelVisible() {
			continue // MCP Apps: an app-only tool is for its server's views, never the model's
		}
		ts.list = append(ts.list, t)
	}
	if shadow {
		ts.mcp = mcpbridge.NewToolSet(ts.list[ts.nbuiltin:])
	}
	ts.specs = make([]ToolSpec, len(ts.list))
	ts.index = make(map[string]int, len(ts.list))
	for i, t := range ts.list {
		ts.specs[i] = ToolSpec{Name: t.Name, Description: t.Description, InputSchema: specSchema(t.InputSchema)}
		ts.index[t.Name] = i
	}
	st := searchToolsBuiltin.tool
	ts.searchSpec = ToolSpec{Name: st.Name, Description: st.Description, InputSchema: specSchema(st.InputSchema)}
	return ts
}

// specSchema is a tool's input schema as sent to the model: compact, an empty object schema
// when the tool has none.
func specSchema(s json.RawMessage) json.RawMessage {
	if len(s) == 0 || string(s) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var b bytes.Buffer
	if json.Compact(&b, s) != nil {
		return s
	}
	return b.Bytes()
}

// serverOf returns the MCP server of a tool name: from the registry's Tool when known, else by
// parsing mcp__<server>__<tool>.
func serverOf(ts *toolSet, name string) string {
	if t, ok := ts.mcp.Lookup(name); ok {
		return t.Server
	}
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return ""
	}
	server, _, _ := strings.Cut(rest, "__")
	return server
}

func unknownTool(name string) string { return errorJSON("Unknown tool: " + name) }

// errorJSON is {"error": msg} written literally: no HTML escaping of <, > and &, so the text the
// model sees is exactly what PROTOCOL.md section 5 spells.
func errorJSON(msg string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]string{"error": msg}) // ignore error: a string map always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// deniedText is what the model (or the direct caller) gets for a denied call.
func deniedText(name string, d permissions.Decision) string {
	var why string
	switch d.By {
	case permissions.ByUser:
		why = "the user denied it"
	case permissions.ByTimeout:
		why = "the user did not answer the approval prompt in time, which counts as a denial"
	case permissions.ByCancel:
		why = "the request was cancelled before the user answered"
	case permissions.ByMode:
		why = "the permission mode does not allow it (allowlist-only and the tool is not on the allowlist)"
	case permissions.ByPin:
		why = "its definition is not the one the user approved"
	default:
		why = "the confirm gate denied it"
	}
	s := fmt.Sprintf("Tool call %s was not run: %s (decided by %s", name, why, d.By)
	if d.Reason != "" {
		s += ": " + d.Reason
	}
	return s + "). Do not retry it unless the user asks."
}

// callOne runs one call through the gate and the tool. onDecision (may be nil) is called after
// the gate. conv is nil for direct calls. A denied, unknown, invalid or failed call is a Result with
// IsError; the returned Decision says what the gate (or the session, By unknown/invalid) decided.
func (m *Manager) callOne(ctx context.Context, ts *toolSet, conv *convo, turn string, mode permissions.Mode,
	name string, args json.RawMessage, onDecision func(permissions.Decision), via CallFunc, from permissions.Request) (mcpbridge.Result, permissions.Decision) {
	decided := func(d permissions.Decision) permissions.Decision {
		if onDecision != nil {
			onDecision(d)
		}
		return d
	}
	bi := builtinByName[name]
	mcpTool, isMCP := ts.mcp.Lookup(name)
	if bi == nil && !isMCP || isMCP && turn != "" && !mcpTool.UI.ModelVisible() {
		// An app-only tool (MCP Apps visibility ["app"]) does not exist for the model: a turn that
		// names it anyway (an injected instruction) gets what an unknown name gets.
		d := decided(permissions.Decision{By: ByUnknown, Reason: "unknown tool"})
		return errResult(name, unknownTool(name)), d
	}
	if !validObject(args) {
		d := decided(permissions.Decision{By: ByInvalid, Reason: "arguments are not a JSON object"})
		return errResult(name, errorJSON(fmt.Sprintf("invalid arguments for %s: want a JSON object, got %s", name, cutUTF8(string(args), 200)))), d
	}
	req := permissions.Request{Tool: name, Server: serverOf(ts, name), Definition: mcpTool.Definition, Arguments: args, Mode: mode, Turn: turn}
	req.Via, req.ViewID = from.Via, from.ViewID // who asked, besides the person (CallToolFrom)
	if bi != nil {
		req.ReadOnlyBuiltin = bi.readOnly
	}
	if name == ToolReadResource {
		// A read of a server's resource is gated as a call of that server's tools: the URI goes
		// to the server, and what comes back is the server's.
		req.Server, req.Definition = resourceRequest(ts, args)
	}
	var d permissions.Decision
	if m.opts.Gate == nil {
		d = permissions.Decision{By: permissions.ByError, Reason: "no confirm gate is configured"}
	} else {
		var err error
		d, err = m.opts.Gate.Check(ctx, req)
		if err != nil {
			d = permissions.Decision{By: permissions.ByError, Reason: err.Error()}
		}
	}
	decided(d)
	if !d.Allowed {
		return errResult(name, deniedText(name, d)), d
	}
	if bi != nil && bi.runResult != nil {
		res, err := bi.runResult(ctx, m, conv, args)
		if err != nil {
			if ctx.Err() != nil {
				return errResult(name, "cancelled: "+ctx.Err().Error()), d
			}
			return errResult(name, errorJSON(err.Error())), d
		}
		return res, d
	}
	if bi != nil {
		text, err := bi.run(ctx, m, conv, args)
		if err != nil {
			if ctx.Err() != nil {
				return errResult(name, "cancelled: "+ctx.Err().Error()), d
			}
			return errResult(name, errorJSON(err.Error())), d
		}
		return mcpbridge.Result{Name: name, Text: text, Bytes: len(text),
			Content: []json.RawMessage{textBlock(text)}}, d
	}
	call := via // runs an allowed MCP call; nil: Options.Tools.Call (see CallToolVia)
	if call == nil {
		call = m.opts.Tools.Call
	}
	res, err := call(ctx, name, args)
	if res.Name == "" {
		res.Name = name
	}
	if err != nil {
		res.IsError = true
		if res.Text == "" {
			res.Text = "cancelled: " + err.Error()
			res.Bytes = len(res.Text)
		}
	}
	return res, d
}

// validObject reports whether args is one JSON object (surrounding JSON white space allowed),
// without decoding it: a call must not pay for a map of its arguments.
func validObject(args json.RawMessage) bool {
	b := bytes.TrimLeft(args, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(args)
}

func textBlock(s string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
	return b
}

func errResult(name, text string) mcpbridge.Result {
	return mcpbridge.Result{Name: name, IsError: true, Text: text, Bytes: len(text), Content: []json.RawMessage{textBlock(text)}}
}

// ToolList returns the tools as sent to the model: the built-ins (Server "") then the MCP tools.
func (m *Manager) ToolList() []mcpbridge.Tool { return slices.Clone(m.snapshot().list) }

// CallTool is the one path for a direct tool call (switchboard.callTool, `switchboard call`):
// built-in or MCP, through the gate under mode. Denied, unknown and failed calls are Results with
// IsError. read_tool_result needs a conversation and fails here.
func (m *Manager) CallTool(ctx context.Context, name string, args json.RawMessage, mode permissions.Mode) (mcpbridge.Result, permissions.Decision) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return m.callOne(ctx, m.snapshot(), nil, "", mode, name, args, nil, nil, permissions.Request{})
}
