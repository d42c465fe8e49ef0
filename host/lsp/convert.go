package lsp

import (
	"time"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// The edge: the application's types to the contract's (host/wire) and back. Nothing else in this
// package puts a domain type on the wire.

func wireStatuses(in []mcpbridge.ServerStatus) []wire.ServerStatus {
	out := make([]wire.ServerStatus, len(in))
	for i, st := range in {
		out[i] = wire.ServerStatus{
			Name: st.Name, State: st.State, Transport: st.Transport, Source: st.Source, Tools: st.Tools,
			Instructions: st.Instructions, Error: st.Error, StderrTail: st.StderrTail, Command: st.Command,
			TrustPrompt: st.TrustPrompt,
		}
	}
	return out
}

func wireResult(r mcpbridge.Result) wire.ToolResult {
	return wire.ToolResult{Name: r.Name, IsError: r.IsError, Text: r.Text, Content: r.Content, Truncated: r.Truncated, Bytes: r.Bytes}
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
			Bytes: r.Bytes, Text: r.Text, Summary: ce.Summary}
	}
	if u := ev.Usage; u != nil {
		out.Usage = &wire.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	}
	return out
}
