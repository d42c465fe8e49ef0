package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// askInput shows a config file's input question: switchboard/inputRequested to an editor that
// declared capabilities.experimental.switchboard.inputs (it shows an input box, masked for a
// password, and answers with switchboard.input); any other editor cannot take text through
// window/showMessageRequest, so it is told how to set the value from a terminal, with a
// Reconnect button for when that is done.
func (s *server) askInput(q *host.Question) {
	if s.capabilities().inputs {
		req := wireInput(q)
		s.record("inputRequested", map[string]any{"id": q.ID, "server": req.Server, "input": req.Input})
		s.conn.sendJSON(wire.NotifyInputRequested, req)
		return
	}
	file := safetext.Line(q.Input.File)
	msg := fmt.Sprintf("%s This editor cannot ask for it: run `switchboard mcp input set %s --file %s` in a terminal, then reconnect the server.",
		q.Text, shellWord(q.Input.ID), shellWord(file))
	server := q.Server.Name
	s.prompt(q, protocol.MessageTypeWarning, msg, func(title string) {
		q.Dismiss()
		if title == wire.TitleReconnect {
			if _, err := s.app.Reconnect(s.conn.baseCtx, server); err != nil {
				s.log.Warn(fmt.Sprintf("lsp: reconnect %s: %v", server, err))
			}
		}
	}, q.Dismiss, wire.TitleReconnect)
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func wireInput(q *host.Question) wire.InputRequest {
	in := q.Input
	return wire.InputRequest{
		ID: q.ID, Server: safetext.Line(q.Server.Name), Input: in.ID, Message: q.Text, Description: in.Description,
		Password: in.Password, Options: in.Options, File: safetext.Line(in.File), RequestedAt: wireTime(q.Requested),
	}
}

// inputResolved announces the end of an input question announced to the editor (never its value).
func (s *server) inputResolved(q *host.Question) {
	if !s.capabilities().inputs {
		return
	}
	o := q.Outcome()
	s.record("inputResolved", map[string]any{"id": q.ID, "by": o.By})
	s.conn.sendJSON(wire.NotifyInputResolved, wire.InputResolvedParams{ID: q.ID, By: o.By})
}

// cmdInput is switchboard.input: the person's value for an input question, or cancel.
func (s *server) cmdInput(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.InputParams
	if err := decodeArg(wire.CmdInput, arg, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, lspconn.InvalidParams("%s: id is required", wire.CmdInput)
	}
	notPending := lspconn.InvalidParams("%s: no pending input %q (unknown, already answered or cancelled)", wire.CmdInput, p.ID)
	if p.Cancel {
		q, ok := s.app.Pending(host.KindInput), false
		for _, x := range q {
			if x.ID == p.ID {
				x.Dismiss()
				ok = true
			}
		}
		if !ok {
			return nil, notPending
		}
		return struct{}{}, nil
	}
	err := s.app.Answer(host.KindInput, p.ID, host.Reply{Value: p.Value})
	var re *host.RequestError
	switch {
	case errors.As(err, &re) && strings.HasPrefix(re.Msg, "no pending"):
		return nil, notPending
	case errors.As(err, &re):
		return nil, lspconn.InvalidParams("%s: %s", wire.CmdInput, re.Msg)
	case err != nil:
		return nil, err
	}
	return struct{}{}, nil
}
