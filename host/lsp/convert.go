package lsp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/jsonscan"
	"github.com/switchboard-dev/switchboard/session"
)

// The edge: the application's types to the contract's (host/wire) and back. Nothing else in this
// package puts a domain type on the wire.

func wireStatuses(in []mcpbridge.ServerStatus) []wire.ServerStatus {
	out := make([]wire.ServerStatus, len(in))
	for i, st := range in {
		out[i] = wire.ServerStatus{
			Name: st.Name, State: st.State, Transport: st.Transport, Source: st.Source, Tools: st.Tools,
			Instructions: st.Instructions, Error: st.Error, StderrTail: st.StderrTail, Command: st.Command,
			TrustPrompt: st.TrustPrompt, ProtocolVersion: st.ProtocolVersion, Sandbox: st.Sandbox, Blocked: st.Blocked,
		}
		if st.Policy != nil {
			out[i].Policy = &wire.PolicyRef{Rule: st.Policy.Rule, Source: st.Policy.Source}
		}
		if sh := st.Shared; sh != nil {
			out[i].Shared = &wire.SharedStatus{Scope: sh.Scope, Windows: sh.Windows, DaemonPid: sh.DaemonPid,
				DaemonBuild: sh.DaemonBuild, Warning: sh.Warning}
		}
	}
	return out
}

// wireResult is a tool result as the editor gets it. For an editor that declared
// experimental.switchboard.textOnce, the text goes once, in text: the text blocks are left out of
// content, whatever the result's size (a capped 1 MiB result was a 2.1 MB frame, and a small one
// paid for its text twice on every call). Others get every block.
func wireResult(r mcpbridge.Result, textOnce bool) wire.ToolResult {
	out := wire.ToolResult{Name: r.Name, IsError: r.IsError, Text: r.Text, Content: r.Content, Truncated: r.Truncated, Bytes: r.Bytes}
	if !textOnce || len(r.Content) == 0 {
		return out
	}
	out.Content = make([]json.RawMessage, 0, len(r.Content))
	for _, b := range r.Content {
		if isTextBlock(b) {
			out.TextOmitted = true
			continue
		}
		out.Content = append(out.Content, b)
	}
	return out
}

// isTextBlock reports whether an MCP content block is {"type":"text",...}. It is on every call's
// way back, so the block is scanned, not decoded; a name or value it is unsure of (an escape, a
// name that differs only in case) is left to encoding/json, which decides as it always has.
func isTextBlock(b json.RawMessage) bool {
	text, unsure := false, false
	valid := jsonscan.Members(b, func(name, value []byte) bool {
		is, u := jsonscan.Name(name, "type")
		// null leaves a decoded field as it was: encoding/json decides that too.
		if u || (is && (bytes.IndexByte(value, '\\') >= 0 || string(value) == "null")) {
			unsure = true
			return false
		}
		if is {
			text = string(value) == `"text"` // encoding/json keeps the last of repeated names: so does this
		}
		return true
	})
	if unsure || !valid {
		var head struct {
			Type string `json:"type"`
		}
		return json.Unmarshal(b, &head) == nil && head.Type == "text"
	}
	return text
}

// marshalToolResult is json.Marshal(r) written by hand (it is on every call's way back). The
// content blocks go as they are, once each is checked to be JSON (encoding/json compacts them
// too, and escapes <, > and &: the same values); a block that is not JSON is left to
// encoding/json, which gives the error.
func marshalToolResult(r wire.ToolResult) ([]byte, error) {
	size := 128 + len(r.Name) + len(r.Text) + len(r.Summary)
	for _, c := range r.Content {
		if !jsonscan.Valid(c) {
			return json.Marshal(r)
		}
		size += len(c) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, `{"name":`...)
	b = jsonscan.AppendString(b, r.Name)
	b = append(b, `,"isError":`...)
	b = strconv.AppendBool(b, r.IsError)
	b = append(b, `,"text":`...)
	b = jsonscan.AppendString(b, r.Text)
	b = append(b, `,"content":`...)
	if r.Content == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range r.Content {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, bytes.TrimSpace(c)...)
		}
		b = append(b, ']')
	}
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, r.Truncated)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, int64(r.Bytes), 10)
	if r.Summary != "" {
		b = append(b, `,"summary":`...)
		b = jsonscan.AppendString(b, r.Summary)
	}
	if r.TextOmitted {
		b = append(b, `,"textOmitted":true`...)
	}
	if r.View != nil {
		v, err := json.Marshal(r.View)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"view":`...), v...)
	}
	if len(r.StructuredContent) > 0 {
		if !jsonscan.Valid(r.StructuredContent) {
			return json.Marshal(r)
		}
		b = append(append(b, `,"structuredContent":`...), bytes.TrimSpace(r.StructuredContent)...)
	}
	return append(b, '}'), nil
}

func wireTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func wireApproval(q *host.Question) wire.Approval {
	req := q.Approval
	return wire.Approval{
		ID: q.ID, Tool: req.Tool, Server: req.Server, Arguments: q.Arguments, Mode: req.Mode.String(),
		Turn: req.Turn, RequestedAt: wireTime(q.Requested),
	}
}

func wireElicitation(q *host.Question) wire.Elicitation {
	e := q.Elicitation
	fields := make([]wire.ElicitField, len(e.Fields))
	for i, f := range e.Fields {
		fields[i] = wire.ElicitField{
			Name: f.Name, Title: f.Title, Description: f.Description, Type: f.Type, Required: f.Required,
			Enum: f.Enum, EnumTitles: f.EnumTitles, Format: f.Format, MinLength: f.MinLength, MaxLength: f.MaxLength,
			Minimum: f.Minimum, Maximum: f.Maximum, MinItems: f.MinItems, MaxItems: f.MaxItems, Default: f.Default,
		}
	}
	return wire.Elicitation{ID: q.ID, Server: e.Server, Message: e.Message, Fields: fields, RequestedAt: wireTime(q.Requested)}
}

func wireEvent(ce host.ChatEvent) wire.Event {
	ev := ce.Event
	out := wire.Event{Turn: ev.Turn, Conversation: ev.Conversation, Kind: ev.Kind, Text: ev.Text,
		StopReason: ev.StopReason, Error: ev.Error}
	if c := ev.ToolCall; c != nil {
		out.ToolCall = &wire.ToolCallEvent{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Approval: c.Approval,
			DecidedBy: c.DecidedBy, Reason: c.Reason, Label: ce.Label}
	}
	if r := ev.Result; r != nil {
		out.Result = &wire.ToolResultEvent{ID: r.ID, Name: r.Name, IsError: r.IsError, Truncated: r.Truncated,
			Bytes: r.Bytes, Text: r.Text, Summary: ce.Summary, View: wireViewRef(ce.View)}
	}
	out.Usage, out.ConversationUsage = wireUsage(ev.Usage), wireUsage(ev.ConversationUsage)
	return out
}

func wireModels(current string, in []host.Model) wire.ModelsResult {
	out := wire.ModelsResult{Current: current, Models: make([]wire.ModelInfo, len(in))}
	for i, m := range in {
		out.Models[i] = wire.ModelInfo{ID: m.ID, DisplayName: m.DisplayName, Created: m.Created}
	}
	return out
}

func wireUsage(u *session.Usage) *wire.Usage {
	if u == nil {
		return nil
	}
	return &wire.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedInputTokens: u.CachedInputTokens,
		CacheWriteTokens: u.CacheWriteTokens, Cost: u.Cost}
}

func sessionPrices(in map[string]wire.Price) *session.Prices {
	if in == nil {
		return nil
	}
	out := make(session.Prices, len(in))
	for model, p := range in {
		out[model] = session.Price{Input: p.Input, CachedInput: p.CachedInput, CacheWrite: p.CacheWrite, Output: p.Output}
	}
	return &out
}

// toolSearch converts the tool-search settings. A threshold is a whole number of tools (a
// fraction is rounded down); 0 means "always search", which session spells 1: the built-in tools
// alone are more than one, so the two behave the same.
func toolSearch(o wire.InitOptions) session.ToolSearchOptions {
	ts := session.ToolSearchOptions{AlwaysLoaded: o.AlwaysLoadedTools}
	if t := o.ToolSearchThreshold; t != nil {
		switch {
		case *t < 0:
			ts.Threshold = -1
		case *t < 1:
			ts.Threshold = 1
		default:
			ts.Threshold = int(min(*t, 1e6))
		}
	}
	return ts
}
