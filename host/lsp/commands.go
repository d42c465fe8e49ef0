package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/jsonscan"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
)

// Each command decodes its wire params, calls the application and encodes its answer as wire
// types (convert.go).

type commandFunc func(ctx context.Context, arg json.RawMessage, token json.RawMessage) (any, error)

func (s *server) commands() map[string]commandFunc {
	return map[string]commandFunc{
		wire.CmdServers:      s.cmdServers,
		wire.CmdTools:        s.cmdTools,
		wire.CmdReconnect:    s.cmdReconnect,
		wire.CmdAllowlistGet: s.cmdAllowlistGet,
		wire.CmdAllowlistSet: s.cmdAllowlistSet,
		wire.CmdApprovals:    s.cmdApprovals,
		wire.CmdApprove:      s.cmdApprove,
		wire.CmdElicitations: s.cmdElicitations,
		wire.CmdElicit:       s.cmdElicit,
		wire.CmdTrust:        s.cmdTrust,
		wire.CmdCallTool:     s.cmdCallTool,
		wire.CmdChat:         s.cmdChat,
		wire.CmdCancel:       s.cmdCancel,
		wire.CmdSignIn:       s.cmdSignIn,  // signin.go
		wire.CmdSignOut:      s.cmdSignOut, // signin.go
		wire.CmdModels:       s.cmdModels,
		wire.CmdPins:         s.cmdPins,
		wire.CmdPinsAccept:   s.cmdPinsAccept,

		wire.CmdResources:    s.cmdResources,    // resources.go
		wire.CmdReadResource: s.cmdReadResource, // resources.go
		wire.CmdUnsubscribe:  s.cmdUnsubscribe,  // resources.go
		wire.CmdPrompts:      s.cmdPrompts,      // resources.go
		wire.CmdGetPrompt:    s.cmdGetPrompt,    // resources.go
		wire.CmdComplete:     s.cmdComplete,     // resources.go
		wire.CmdInput:        s.cmdInput,        // inputs.go
		wire.CmdTasks:        s.cmdTasks,        // tasks.go
		wire.CmdCancelTask:   s.cmdCancelTask,   // tasks.go

		wire.CmdView:                   s.cmdView,                   // views.go
		wire.CmdViewCallTool:           s.cmdViewCallTool,           // views.go
		wire.CmdViewOpenLink:           s.cmdViewOpenLink,           // views.go
		wire.CmdViewOpenInBrowser:      s.cmdViewOpenInBrowser,      // views.go
		wire.CmdViewUpdateModelContext: s.cmdViewUpdateModelContext, // views.go
		wire.CmdViewMessage:            s.cmdViewMessage,            // views.go
		wire.CmdChatEnd:                s.cmdChatEnd,                // views.go
	}
}

// executeCommand dispatches workspace/executeCommand. It runs async: callTool waits at the gate.
func (s *server) executeCommand(ctx context.Context, raw json.RawMessage) (any, error) {
	c, ok := scanCommand(raw)
	if !ok {
		// Its own variable, declared here: its address goes to encoding/json, and the usual call's
		// params would be moved to the heap with it.
		var p executeCommandParams
		if err := lspconn.Decode(wire.MethodExecuteCommand, raw, &p); err != nil {
			return nil, err
		}
		c = command{name: p.Command, token: p.WorkDoneToken}
		if len(p.Arguments) > 0 {
			c.arg = p.Arguments[0]
		}
	}
	if c.name == "" {
		return nil, lspconn.InvalidParams("%s: command is required", wire.MethodExecuteCommand)
	}
	fn, ok := s.cmds[c.name]
	if !ok {
		return nil, lspconn.InvalidParams("unknown command %q (known: %s)", c.name, strings.Join(wire.Commands, ", "))
	}
	var res any
	var tool wire.ToolResult // callTool's result, not boxed in res: one allocation fewer per call
	isTool := c.name == wire.CmdCallTool
	var err error
	if isTool {
		tool, err = s.callTool(ctx, c.arg, c.token)
	} else {
		res, err = fn(ctx, c.arg, c.token)
	}
	err = requestError(c.name, err)
	if s.recording() {
		fields := map[string]any{"command": c.name}
		if err != nil {
			fields["error"] = err.Error()
		}
		s.record("command", fields)
	}
	if err != nil {
		return nil, err
	}
	if r, ok := res.(wire.ToolResult); ok {
		tool, isTool = r, true
	}
	var b []byte
	var merr error
	if isTool {
		b, merr = marshalToolResult(tool)
	} else {
		b, merr = json.Marshal(res)
	}
	if merr != nil {
		return nil, fmt.Errorf("lsp: %s: marshal result: %w", c.name, merr)
	}
	return lspconn.Reply(ctx, b), nil
}

type executeCommandParams struct {
	Command       string            `json:"command"`
	Arguments     []json.RawMessage `json:"arguments"`
	WorkDoneToken json.RawMessage   `json:"workDoneToken"`
}

// command is executeCommand's params as the host uses them: of the arguments, only the first.
type command struct {
	name  string
	arg   json.RawMessage // arguments[0], the command's own copy; nil: none
	token json.RawMessage
	// array: arguments was an array, even an empty one (encoding/json leaves an absent or null
	// one nil, an empty one non-nil: the fuzz test compares them).
	array bool
}

// commandNames are the known commands' names, for scanCommand to use instead of a copy of each.
var commandNames = func() map[string]string {
	m := make(map[string]string, len(wire.Commands))
	for _, c := range wire.Commands {
		m[c] = c
	}
	return m
}()

// scanCommand decodes the usual params in one pass, as encoding/json decodes them into
// executeCommandParams; false: decode them with encoding/json, which also says what is wrong (see
// package jsonscan).
func scanCommand(raw json.RawMessage) (command, bool) {
	var c command
	ok := jsonscan.Members(raw, func(name, v []byte) bool {
		which, unsure := jsonscan.Which(name, "command", "arguments", "workDoneToken")
		switch {
		case unsure:
			return false
		case which == 0:
			// A known command written without escapes is that string (jsonscan validated v): the
			// name is the known one, not a copy of the frame's.
			if len(v) >= 2 && v[0] == '"' {
				if known, ok := commandNames[string(v[1:len(v)-1])]; ok {
					c.name = known
					return true
				}
			}
			return jsonscan.SetString(&c.name, v)
		case which == 1:
			c.arg, c.array = nil, false
			if string(v) == "null" {
				return true
			}
			c.array = true
			return jsonscan.Elements(v, func(e []byte) bool {
				if c.arg == nil {
					c.arg = json.RawMessage(bytes.Clone(e))
				}
				return true
			})
		case which == 2:
			c.token = bytes.Clone(v)
		}
		return true
	})
	return c, ok
}

// scanCallToolParams decodes the usual callTool argument in one pass, as decodeArg does; false:
// decode it with decodeArg (see package jsonscan).
func scanCallToolParams(arg json.RawMessage) (wire.CallToolParams, bool) {
	var p wire.CallToolParams
	ok := jsonscan.Members(arg, func(name, v []byte) bool {
		which, unsure := jsonscan.Which(name, "name", "arguments", "mode")
		switch {
		case unsure:
			return false
		case which == 0:
			return jsonscan.SetString(&p.Name, v)
		case which == 1:
			p.Arguments = v // arg is executeCommand's own copy
		case which == 2:
			if string(v) == "null" {
				p.Mode = nil
				return true
			}
			m, ok := jsonscan.String(v)
			p.Mode = &m
			return ok
		}
		return true
	})
	return p, ok
}

// requestError answers the application's *host.RequestError as InvalidParams, prefixed with the
// command.
func requestError(cmd string, err error) error {
	if err == nil {
		return nil
	}
	var re *host.RequestError
	if errors.As(err, &re) {
		return lspconn.InvalidParams("%s: %s", cmd, re.Msg)
	}
	return err
}

// decodeArg decodes arguments[0]; an absent or null argument leaves v zero. The argument must be an
// object.
func decodeArg(cmd string, arg json.RawMessage, v any) error {
	t := strings.TrimSpace(string(arg))
	if t == "" || t == "null" {
		return nil
	}
	if t[0] != '{' {
		return lspconn.InvalidParams("%s: arguments[0] must be an object, not %s", cmd, abbreviate(t))
	}
	if err := json.Unmarshal(arg, v); err != nil {
		return lspconn.InvalidParams("%s: arguments[0]: %s", cmd, jsonProblem(err))
	}
	return nil
}

func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s has the wrong type (%s)", te.Field, te.Value)
	}
	return err.Error()
}

func abbreviate(s string) string { return safetext.Bounded(s, 40) }

func (s *server) cmdServers(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	return wireStatuses(s.app.Servers()), nil
}

func (s *server) cmdTools(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ToolsParams
	if err := decodeArg(wire.CmdTools, arg, &p); err != nil {
		return nil, err
	}
	tools, err := s.app.Tools(p.Server)
	if err != nil {
		return nil, err
	}
	out := make([]wire.ToolInfo, len(tools))
	for i, t := range tools {
		out[i] = wire.ToolInfo{Name: t.Name, Server: t.Server, Tool: t.Tool.Tool, Description: t.Description,
			InputSchema: t.InputSchema, Allowlisted: t.Allowlisted, Pin: t.Pin, TaskSupport: t.TaskSupport,
			View: t.UI != nil && t.UI.ResourceURI != "", AppOnly: !t.UI.ModelVisible(),
			Policy: t.Policy, PolicyRule: t.PolicyRule}
	}
	return out, nil
}

func (s *server) cmdReconnect(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ReconnectParams
	if err := decodeArg(wire.CmdReconnect, arg, &p); err != nil {
		return nil, err
	}
	res, err := s.app.Reconnect(ctx, p.Server)
	if err != nil {
		return nil, err
	}
	return wireStatuses(res), nil
}

func (s *server) cmdAllowlistGet(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	path, entries, problem := s.app.Allowlist()
	res := wire.AllowlistGetResult{Path: path, Entries: entries}
	if problem != nil {
		res.Error = problem.Error()
	}
	return res, nil
}

func (s *server) cmdAllowlistSet(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.AllowlistSetParams
	if err := decodeArg(wire.CmdAllowlistSet, arg, &p); err != nil {
		return nil, err
	}
	if p.Prefix == "" {
		return nil, lspconn.InvalidParams("%s: prefix is required (mcp__<server>__)", wire.CmdAllowlistSet)
	}
	if p.Entries == nil {
		return nil, lspconn.InvalidParams("%s: entries is required (an empty array revokes every grant under the prefix)", wire.CmdAllowlistSet)
	}
	entries, err := s.app.SetAllowlist(p.Prefix, *p.Entries)
	if err != nil {
		return nil, err
	}
	return wire.AllowlistSetResult{Entries: entries}, nil
}

func (s *server) cmdApprovals(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	return s.approvals(), nil
}

// approvals lists the pending approvals, oldest first.
func (s *server) approvals() []wire.Approval {
	out := []wire.Approval{}
	for _, q := range s.app.Pending(host.KindApproval) {
		out = append(out, wireApproval(q))
	}
	return out
}

func (s *server) cmdApprove(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ApproveParams
	if err := decodeArg(wire.CmdApprove, arg, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, lspconn.InvalidParams("%s: id is required", wire.CmdApprove)
	}
	ans, err := permissions.ParseAnswer(p.Decision)
	if err != nil {
		return nil, lspconn.InvalidParams("%s: decision must be once, always, server or deny, not %q", wire.CmdApprove, p.Decision)
	}
	if err := s.app.Answer(host.KindApproval, p.ID, host.Reply{Decision: ans}); err != nil {
		return nil, lspconn.InvalidParams("%s: no pending approval %q (unknown, already resolved or timed out)", wire.CmdApprove, p.ID)
	}
	return struct{}{}, nil
}

func (s *server) cmdElicitations(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	out := []wire.Elicitation{}
	for _, q := range s.app.Pending(host.KindElicitation) {
		if s.forms.has(q.ID) {
			out = append(out, wireElicitation(q))
		}
	}
	return out, nil
}

func (s *server) cmdElicit(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ElicitParams
	if err := decodeArg(wire.CmdElicit, arg, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, lspconn.InvalidParams("%s: id is required", wire.CmdElicit)
	}
	notPending := lspconn.InvalidParams("%s: no pending elicitation %q (unknown, already answered or timed out)", wire.CmdElicit, p.ID)
	if !s.forms.has(p.ID) {
		return nil, notPending
	}
	err := s.app.Answer(host.KindElicitation, p.ID, host.Reply{Elicit: mcpbridge.ElicitResult{Action: p.Action, Content: acceptContent(p)}})
	var re *host.RequestError
	switch {
	case errors.As(err, &re) && strings.HasPrefix(re.Msg, "no pending"):
		return nil, notPending
	case err != nil:
		return nil, err
	}
	return struct{}{}, nil
}

// acceptContent is the content of an accept ({} when absent), as given otherwise.
func acceptContent(p wire.ElicitParams) map[string]any {
	if p.Action == mcpbridge.ElicitAccept && p.Content == nil {
		return map[string]any{}
	}
	return p.Content
}

func (s *server) cmdTrust(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.TrustParams
	if err := decodeArg(wire.CmdTrust, arg, &p); err != nil {
		return nil, err
	}
	if p.Server == "" {
		return nil, lspconn.InvalidParams("%s: server is required", wire.CmdTrust)
	}
	var trusted bool
	switch p.Decision {
	case "trust":
		trusted = true
	case "deny":
	default:
		return nil, lspconn.InvalidParams("%s: decision must be trust or deny, not %q", wire.CmdTrust, p.Decision)
	}
	res, err := s.app.Trust(ctx, p.Server, trusted, p.Fingerprint)
	if err != nil {
		return nil, err
	}
	return wireStatuses(res), nil
}

// parseMode is a command's mode: nil = the configured one.
func parseMode(cmd string, m *string) (*permissions.Mode, error) {
	if m == nil {
		return nil, nil
	}
	mode, err := permissions.ParseMode(*m)
	if err != nil || *m == "" { // "" is not a Mode: leave the field out for the configured mode
		return nil, lspconn.InvalidParams("%s: mode must be single-confirm, always-allow or allowlist-only, not %q", cmd, *m)
	}
	return &mode, nil
}

func (s *server) cmdCallTool(ctx context.Context, arg, token json.RawMessage) (any, error) {
	out, err := s.callTool(ctx, arg, token)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// callTool is cmdCallTool with its result unboxed (executeCommand calls it).
func (s *server) callTool(ctx context.Context, arg, token json.RawMessage) (wire.ToolResult, error) {
	p, ok := scanCallToolParams(arg)
	if !ok {
		// Its own variable (see executeCommand).
		var slow wire.CallToolParams
		if err := decodeArg(wire.CmdCallTool, arg, &slow); err != nil {
			return wire.ToolResult{}, err
		}
		p = slow
	}
	if p.Name == "" {
		return wire.ToolResult{}, lspconn.InvalidParams("%s: name is required", wire.CmdCallTool)
	}
	args := json.RawMessage(bytes.TrimSpace(p.Arguments))
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	} else if args[0] != '{' {
		return wire.ToolResult{}, lspconn.InvalidParams("%s: arguments must be an object, not %s", wire.CmdCallTool, abbreviate(string(args)))
	}
	mode, err := parseMode(wire.CmdCallTool, p.Mode)
	if err != nil {
		return wire.ToolResult{}, err
	}
	res, dec, view := s.app.CallToolView(ctx, host.CallRequest{
		Name: p.Name, Arguments: args, Mode: mode, Source: "callTool",
		Progress: s.newToolProgress(token), // the editor's workDoneToken, when it sent one
		// The request is this call's alone: its stops cancel the request's context rather than
		// one of their own (host.CallRequest.Cancel), and then leave their result to answer.
		Cancel: lspconn.Cancel(ctx),
	})
	if ctx.Err() != nil && !host.Stopped(ctx) {
		return wire.ToolResult{}, ctx.Err() // the router answers RequestCancelled
	}
	out := wireResult(res, s.capabilities().textOnce)
	out.Summary = s.app.Summary(p.Name, res, dec)
	out.View = wireViewRef(view) // views.go
	return out, nil
}

func (s *server) cmdChat(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ChatParams
	if err := decodeArg(wire.CmdChat, arg, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Prompt) == "" && p.ServerPrompt == nil {
		return nil, lspconn.InvalidParams("%s: prompt is required", wire.CmdChat)
	}
	mode, err := parseMode(wire.CmdChat, p.Mode)
	if err != nil {
		return nil, err
	}
	attach, invoke, err := chatAttachments(p)
	if err != nil {
		return nil, err
	}
	started, err := s.app.Chat(host.ChatRequest{Conversation: p.Conversation, Prompt: p.Prompt, Mode: mode,
		Attach: attach, Invoke: invoke})
	if err != nil {
		return nil, requestFailed(err) // a mode the organisation's policy disables: RequestFailed
	}
	out := wire.ChatResult{Conversation: started.Conversation, Turn: started.Turn}
	for _, n := range started.ViewContext {
		out.ViewContext = append(out.ViewContext, wire.ViewContextNote{Server: n.Server, Tool: n.Tool, Text: n.Text})
	}
	return out, nil
}

func (s *server) cmdCancel(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.CancelParams
	if err := decodeArg(wire.CmdCancel, arg, &p); err != nil {
		return nil, err
	}
	if p.Turn == "" {
		return nil, lspconn.InvalidParams("%s: turn is required", wire.CmdCancel)
	}
	s.app.Cancel(p.Turn)
	return struct{}{}, nil
}
