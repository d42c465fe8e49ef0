package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
)

type commandFunc func(ctx context.Context, arg json.RawMessage) (any, error)

func (s *server) commands() map[string]commandFunc {
	return map[string]commandFunc{
		CmdServers:      s.cmdServers,
		CmdTools:        s.cmdTools,
		CmdReconnect:    s.cmdReconnect,
		CmdAllowlistGet: s.cmdAllowlistGet,
		CmdAllowlistSet: s.cmdAllowlistSet,
		CmdApprovals:    s.cmdApprovals,
		CmdApprove:      s.cmdApprove,
		CmdElicitations: func(context.Context, json.RawMessage) (any, error) { return s.elicitations.list(), nil },
		CmdElicit:       s.cmdElicit,
		CmdTrust:        s.cmdTrust,
		CmdCallTool:     s.cmdCallTool,
		CmdChat:         s.cmdChat,
		CmdCancel:       s.cmdCancel,
	}
}

// executeCommand dispatches workspace/executeCommand. It runs async: callTool waits at the gate.
func (s *server) executeCommand(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Command       string            `json:"command"`
		Arguments     []json.RawMessage `json:"arguments"`
		WorkDoneToken json.RawMessage   `json:"workDoneToken"`
	}
	if err := lspconn.Decode(MethodExecuteCommand, raw, &p); err != nil {
		return nil, err
	}
	if p.Command == "" {
		return nil, lspconn.InvalidParams("%s: command is required", MethodExecuteCommand)
	}
	fn, ok := s.cmds[p.Command]
	if !ok {
		return nil, lspconn.InvalidParams("unknown command %q (known: %s)", p.Command, strings.Join(Commands, ", "))
	}
	var arg json.RawMessage
	if len(p.Arguments) > 0 {
		arg = p.Arguments[0]
	}
	res, err := fn(withWorkDoneToken(ctx, p.WorkDoneToken), arg)
	fields := map[string]any{"command": p.Command}
	if err != nil {
		fields["error"] = err.Error()
	}
	s.events.record("command", fields)
	if err != nil {
		return nil, err
	}
	b, merr := json.Marshal(res)
	if merr != nil {
		return nil, fmt.Errorf("host: %s: marshal result: %w", p.Command, merr)
	}
	return json.RawMessage(b), nil
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

func (s *server) cmdServers(ctx context.Context, arg json.RawMessage) (any, error) {
	return s.statuses(s.registry.Servers()), nil
}

// shownStatuses escapes what a server or a config file controls in server statuses bound for the
// editor, which shows them as they come: the error and the stderr tail (block form: their lines
// kept), the command line and the source file.
func shownStatuses(in []mcpbridge.ServerStatus) []mcpbridge.ServerStatus {
	if in == nil {
		return nil
	}
	out := make([]mcpbridge.ServerStatus, len(in))
	for i, st := range in {
		st.Name = safetext.Line(st.Name)
		st.Source = safetext.Line(st.Source)
		st.Command = safetext.Line(st.Command)
		st.Error = safetext.Block(st.Error)
		st.StderrTail = safetext.Block(st.StderrTail)
		out[i] = st
	}
	return out
}

func (s *server) cmdTools(ctx context.Context, arg json.RawMessage) (any, error) {
	var p ToolsParams
	if err := decodeArg(CmdTools, arg, &p); err != nil {
		return nil, err
	}
	if p.Server != "" && !s.knownServer(p.Server) {
		return nil, lspconn.InvalidParams("%s: unknown server %q", CmdTools, p.Server)
	}
	out := []ToolInfo{}
	for _, t := range s.registry.Tools() {
		if p.Server != "" && t.Server != p.Server {
			continue
		}
		_, allowed := s.allow.Match(t.Name)
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		out = append(out, ToolInfo{
			Name: t.Name, Server: t.Server, Tool: t.Tool, Description: safetext.Block(t.Description),
			InputSchema: schema, Allowlisted: allowed,
		})
	}
	return out, nil
}

func (s *server) knownServer(name string) bool {
	for _, st := range s.registry.Servers() {
		if st.Name == name {
			return true
		}
	}
	return false
}

func (s *server) cmdReconnect(ctx context.Context, arg json.RawMessage) (any, error) {
	var p ReconnectParams
	if err := decodeArg(CmdReconnect, arg, &p); err != nil {
		return nil, err
	}
	if p.Server == "" {
		s.expectRestart()
		res := s.registry.Reconnect(ctx)
		go s.reportProgress()
		return s.statuses(res), nil
	}
	if !s.knownServer(p.Server) {
		return nil, lspconn.InvalidParams("%s: unknown server %q", CmdReconnect, p.Server)
	}
	s.expectRestart(p.Server)
	if _, err := s.registry.ReconnectServer(ctx, p.Server); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.log.Debug("host: reconnect", "server", p.Server, "error", err)
	}
	return s.statuses(s.registry.Servers()), nil
}

func (s *server) cmdAllowlistGet(ctx context.Context, arg json.RawMessage) (any, error) {
	res := AllowlistGetResult{Path: s.allow.Path(), Entries: s.allow.Entries()}
	if res.Entries == nil {
		res.Entries = []string{}
	}
	if err := s.allow.Err(); err != nil {
		res.Error = err.Error()
	}
	return res, nil
}

func (s *server) cmdAllowlistSet(ctx context.Context, arg json.RawMessage) (any, error) {
	var p AllowlistSetParams
	if err := decodeArg(CmdAllowlistSet, arg, &p); err != nil {
		return nil, err
	}
	if p.Prefix == "" {
		return nil, lspconn.InvalidParams("%s: prefix is required (mcp__<server>__)", CmdAllowlistSet)
	}
	if p.Entries == nil {
		return nil, lspconn.InvalidParams("%s: entries is required (an empty array revokes every grant under the prefix)", CmdAllowlistSet)
	}
	// Check every entry here as well: the whole request is refused when any entry is bad, even
	// one after a prefix* that collapses the rest (PROTOCOL.md section 3: nothing is written).
	if err := permissions.ValidPrefix(p.Prefix); err != nil {
		return nil, lspconn.InvalidParams("%s: %v", CmdAllowlistSet, err)
	}
	for _, e := range *p.Entries {
		e = strings.TrimSpace(e)
		if err := permissions.ValidEntry(e); err != nil {
			return nil, lspconn.InvalidParams("%s: %v", CmdAllowlistSet, err)
		}
		if !strings.HasPrefix(e, p.Prefix) {
			return nil, lspconn.InvalidParams("%s: entry %q does not start with prefix %q", CmdAllowlistSet, e, p.Prefix)
		}
	}
	entries, err := s.allow.Replace(p.Prefix, *p.Entries)
	if err != nil {
		var ie *permissions.InputError
		if errors.As(err, &ie) {
			return nil, lspconn.InvalidParams("%s: %s", CmdAllowlistSet, ie.Msg)
		}
		return nil, fmt.Errorf("host: %s: %w", CmdAllowlistSet, err)
	}
	if entries == nil {
		entries = []string{}
	}
	return AllowlistSetResult{Entries: entries}, nil
}

func (s *server) cmdApprovals(ctx context.Context, arg json.RawMessage) (any, error) {
	return s.approvals.list(), nil
}

func (s *server) cmdElicit(ctx context.Context, arg json.RawMessage) (any, error) {
	var p ElicitParams
	if err := decodeArg(CmdElicit, arg, &p); err != nil {
		return nil, err
	}
	if err := s.elicitations.answer(p); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func (s *server) cmdApprove(ctx context.Context, arg json.RawMessage) (any, error) {
	var p ApproveParams
	if err := decodeArg(CmdApprove, arg, &p); err != nil {
		return nil, err
	}
	if err := s.approvals.approve(p); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func (s *server) cmdTrust(ctx context.Context, arg json.RawMessage) (any, error) {
	var p TrustParams
	if err := decodeArg(CmdTrust, arg, &p); err != nil {
		return nil, err
	}
	if p.Server == "" {
		return nil, lspconn.InvalidParams("%s: server is required", CmdTrust)
	}
	var trusted bool
	switch p.Decision {
	case "trust":
		trusted = true
	case "deny":
	default:
		return nil, lspconn.InvalidParams("%s: decision must be trust or deny, not %q", CmdTrust, p.Decision)
	}
	res, err := s.setTrust(ctx, p.Server, trusted, "command")
	if err != nil {
		return nil, err
	}
	return s.statuses(res), nil
}

func (s *server) parseMode(cmd string, m *string) (permissions.Mode, error) {
	if m == nil {
		return s.currentMode(), nil
	}
	mode, err := permissions.ParseMode(*m)
	if err != nil || *m == "" { // "" is not a Mode: leave the field out for the configured mode
		return 0, lspconn.InvalidParams("%s: mode must be single-confirm, always-allow or allowlist-only, not %q", cmd, *m)
	}
	return mode, nil
}

func (s *server) cmdCallTool(ctx context.Context, arg json.RawMessage) (any, error) {
	var p CallToolParams
	if err := decodeArg(CmdCallTool, arg, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, lspconn.InvalidParams("%s: name is required", CmdCallTool)
	}
	args := json.RawMessage(strings.TrimSpace(string(p.Arguments)))
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	} else if args[0] != '{' {
		return nil, lspconn.InvalidParams("%s: arguments must be an object, not %s", CmdCallTool, abbreviate(string(args)))
	}
	mode, err := s.parseMode(CmdCallTool, p.Mode)
	if err != nil {
		return nil, err
	}
	s.events.record("toolCallStart", map[string]any{"name": p.Name, "source": "callTool"})
	res, dec := s.sessions.CallTool(ctx, p.Name, args, mode)
	s.events.record("toolCallEnd", map[string]any{"name": p.Name, "source": "callTool", "isError": res.IsError, "decidedBy": dec.By})
	if ctx.Err() != nil {
		return nil, ctx.Err() // the router answers RequestCancelled
	}
	if res.Name == "" {
		res.Name = p.Name
	}
	if res.Content == nil {
		res.Content = []json.RawMessage{}
	}
	return res, nil
}
