package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// maxReviewText bounds the diff shown in the Review prompt (switchboard.pins has it whole).
const maxReviewText = 6000

func (s *server) cmdPins(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.PinsParams
	if err := decodeArg(wire.CmdPins, arg, &p); err != nil {
		return nil, err
	}
	r, err := s.app.Pins(p.Server)
	if err != nil {
		return nil, err
	}
	return wirePins(r), nil
}

func (s *server) cmdPinsAccept(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.PinsAcceptParams
	if err := decodeArg(wire.CmdPinsAccept, arg, &p); err != nil {
		return nil, err
	}
	if p.Server == "" {
		return nil, lspconn.InvalidParams("%s: server is required", wire.CmdPinsAccept)
	}
	r, err := s.app.AcceptPins(p.Server, p.Tools)
	if err != nil {
		return nil, err
	}
	return wirePins(r), nil
}

func wirePins(r host.PinReport) wire.PinsResult {
	out := wire.PinsResult{Pinning: r.Pinning, File: safetext.Line(r.File), Problem: r.Problem, Servers: []wire.ServerPins{}}
	for _, sc := range r.Servers {
		out.Servers = append(out.Servers, wireServerPins(sc))
	}
	return out
}

func wireServerPins(sc host.ServerPinChanges) wire.ServerPins {
	sp := wire.ServerPins{Server: safetext.Line(sc.Server), Changed: []wire.PinChange{}, New: []wire.PinChange{}, Removed: []wire.PinChange{}}
	for _, c := range sc.Changes {
		pc := wire.PinChange{Tool: safetext.Line(c.Tool), Name: c.Name, Diff: c.Diff(),
			Old: safetext.Block(mcpbridge.PrettyDefinition(c.Old)), New: safetext.Block(mcpbridge.PrettyDefinition(c.New))}
		switch c.Kind {
		case host.PinChanged:
			sp.Changed = append(sp.Changed, pc)
		case host.PinNew:
			sp.New = append(sp.New, pc)
		case host.PinRemoved:
			sp.Removed = append(sp.Removed, pc)
		}
	}
	return sp
}

// askPins shows a review of changed tool definitions: switchboard/pinsChanged for editors that
// show their own review (a diff editor), and a prompt with Review / Accept all / Keep blocked;
// Review shows the diff as text with Accept / Keep blocked.
func (s *server) askPins(q *host.Question) {
	sp := wireServerPins(q.Pins)
	names := func(cs []wire.PinChange) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.Tool
		}
		return out
	}
	params := wire.PinsChangedParams{ID: q.ID, Server: sp.Server, Changed: names(sp.Changed), New: names(sp.New), Removed: names(sp.Removed), Message: q.Text}
	s.record("pinsChanged", map[string]any{"pins": params})
	s.conn.sendJSON(wire.NotifyPinsChanged, params)
	if s.capabilities().pinReview {
		return // the editor reviews (a diff editor) and answers with switchboard.pins.accept
	}
	s.prompt(q, protocol.MessageTypeWarning, q.Text, func(title string) {
		switch title {
		case wire.TitleAcceptAll:
			q.Answer(host.Reply{Allow: true}) // ignore error: resolved another way first
		case wire.TitleReview:
			text := "Changes of MCP server '" + sp.Server + "':\n"
			for _, c := range append(append(append([]wire.PinChange{}, sp.Changed...), sp.New...), sp.Removed...) {
				text += "\n" + c.Tool + "\n" + c.Diff
			}
			s.prompt(q, protocol.MessageTypeWarning, safetext.Bounded(text, maxReviewText), func(title string) {
				if title == wire.TitleAccept {
					q.Answer(host.Reply{Allow: true}) // ignore error
				} else {
					q.Dismiss()
				}
			}, q.Dismiss, wire.TitleAccept, wire.TitleKeepBlocked)
		default:
			q.Dismiss()
		}
	}, q.Dismiss, wire.TitleReview, wire.TitleAcceptAll, wire.TitleKeepBlocked)
}
