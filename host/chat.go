package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/session"
)

// cmdChat starts a turn and answers {conversation, turn} at once; the turn's progress reaches the
// editor as switchboard/event notifications (session.Event as is).
func (s *server) cmdChat(ctx context.Context, arg json.RawMessage) (any, error) {
	var p ChatParams
	if err := decodeArg(CmdChat, arg, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, lspconn.InvalidParams("%s: prompt is required", CmdChat)
	}
	mode, err := s.parseMode(CmdChat, p.Mode)
	if err != nil {
		return nil, err
	}
	conv, turn, err := s.sessions.Start(s.baseCtx, session.StartParams{
		Conversation: p.Conversation, Prompt: p.Prompt, Mode: mode,
	}, s.emit)
	if err != nil {
		return nil, lspconn.InvalidParams("%s: %v", CmdChat, err)
	}
	return ChatResult{Conversation: conv, Turn: turn}, nil
}

// emit forwards one session event to the editor and records tool calls in the events file.
func (s *server) emit(ev session.Event) {
	b, err := json.Marshal(ev)
	if err != nil {
		s.log.Error(fmt.Sprintf("host: marshal event: %v", err))
		return
	}
	switch ev.Kind {
	case "toolCall", "toolResult":
		kind := "toolCallStart"
		if ev.Kind == "toolResult" {
			kind = "toolCallEnd"
		}
		var fields map[string]any
		json.Unmarshal(b, &fields) // ignore error: we just marshalled it
		fields["source"] = "chat"
		s.events.record(kind, fields)
	}
	s.send(NotifyEvent, json.RawMessage(b))
}

func (s *server) cmdCancel(ctx context.Context, arg json.RawMessage) (any, error) {
	var p CancelParams
	if err := decodeArg(CmdCancel, arg, &p); err != nil {
		return nil, err
	}
	if p.Turn == "" {
		return nil, lspconn.InvalidParams("%s: turn is required", CmdCancel)
	}
	s.sessions.Cancel(p.Turn) // an unknown or finished turn is not an error: the user's intent holds
	return struct{}{}, nil
}
