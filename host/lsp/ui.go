package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
)

// The LSP implementation of host.UI (PROTOCOL.md sections 2, 4 and 6, and the README's "Protocol
// additions"): every question is shown at once in every way the editor supports, and the first
// answer from any of them wins (the Question decides).

// Titles of the sampling prompt: none is an approval's or a trust prompt's title, so an editor
// that routes those by title never mistakes this prompt for one.
const (
	TitleSampleOnce   = "Allow this time"
	TitleSampleServer = "Allow this server"
	TitleSampleRefuse = "Refuse"
)

// maxChoiceButtons bounds the buttons of the showMessageRequest fallback for a choice.
const maxChoiceButtons = 6

// Ask is host.UI. Every prompt runs on its own goroutine (never on the read loop) and ends when
// the question is resolved another way.
func (s *server) Ask(q *host.Question) {
	switch q.Kind {
	case host.KindApproval:
		ap := wireApproval(q)
		s.record("approvalRequested", map[string]any{"approval": ap})
		s.conn.sendJSON(wire.NotifyApprovalRequested, ap) // before the prompt, so it precedes approvalResolved
		s.prompt(q, protocol.MessageTypeWarning, q.Text, func(title string) {
			q.Answer(host.Reply{Decision: answerFromTitle(title)}) // ignore error: resolved another way first
		}, nil, wire.TitleAllowOnce, wire.TitleAllowTool, wire.TitleAllowServer, wire.TitleDeny)
	case host.KindTrust:
		s.prompt(q, protocol.MessageTypeWarning, q.Text, func(title string) {
			q.Answer(host.Reply{Allow: title == wire.TitleTrust}) // ignore error
		}, q.Dismiss, wire.TitleTrust, wire.TitleDontTrust)
	case host.KindSampling:
		s.prompt(q, protocol.MessageTypeInfo, q.Text, func(title string) {
			q.Answer(host.Reply{Allow: title != TitleSampleRefuse, Always: title == TitleSampleServer}) // ignore error
		}, q.Dismiss, TitleSampleOnce, TitleSampleServer, TitleSampleRefuse)
	case host.KindElicitation:
		s.askElicitation(q)
	case host.KindSignIn:
		s.prompt(q, protocol.MessageTypeInfo, q.Text, func(title string) {
			q.Answer(host.Reply{Allow: title == wire.TitleSignIn}) // ignore error
		}, q.Dismiss, wire.TitleSignIn, wire.TitleNotNow)
	case host.KindViewMessage: // views.go: a view's ui/message
		s.prompt(q, protocol.MessageTypeInfo, q.Text, func(title string) {
			q.Answer(host.Reply{Allow: title == wire.TitleSend}) // ignore error: resolved another way first
		}, q.Dismiss, wire.TitleSend, wire.TitleDontSend)
	case host.KindPin:
		s.askPins(q)
	case host.KindInput:
		s.askInput(q) // inputs.go
	}
}

// about says which question a prompt is: an approval by its id, a trust question by its server.
func about(q *host.Question) *wire.PromptAbout {
	switch q.Kind {
	case host.KindApproval:
		return &wire.PromptAbout{Approval: q.ID}
	case host.KindTrust:
		return &wire.PromptAbout{TrustServer: q.Server.Name, Fingerprint: q.Server.Fingerprint()}
	}
	return nil
}

// prompt shows q.Text as a window/showMessageRequest with titles; answered gets the title
// clicked, dismissed (when set) a dismissed or failed prompt. A dismissed approval stays pending:
// a code action or switchboard.approve can still answer it.
func (s *server) prompt(q *host.Question, typ protocol.MessageType, text string, answered func(string), dismissed func(), titles ...string) {
	ctx, stop := context.WithCancel(s.conn.baseCtx)
	go func() {
		select {
		case <-q.Done():
		case <-ctx.Done():
		}
		stop()
	}()
	go func() {
		defer stop()
		title, ok := s.askButtons(ctx, typ, text, about(q), titles...)
		switch {
		case ok:
			answered(title)
		case dismissed != nil:
			dismissed()
		}
	}()
}

// askElicitation shows a server's question: a page to open (url mode), a form for an editor that
// shows forms, else one yes/no or one choice as buttons. Any other form cannot be shown here: it
// is cancelled, with a warning saying where it can be answered.
func (s *server) askElicitation(q *host.Question) {
	e := q.Elicitation
	cancel := host.Reply{Elicit: mcpbridge.ElicitResult{Action: mcpbridge.ElicitCancel}}
	decline := host.Reply{Elicit: mcpbridge.ElicitResult{Action: mcpbridge.ElicitDecline}}
	if e.Mode == "url" {
		s.prompt(q, protocol.MessageTypeInfo, q.Text, func(title string) {
			if title != wire.TitleOpen {
				q.Answer(decline) // ignore error: resolved another way first
				return
			}
			var shown struct {
				Success bool `json:"success"`
			}
			err := s.conn.call(s.conn.baseCtx, wire.MethodShowDocument, map[string]any{"uri": e.URL, "external": true, "takeFocus": true}, &shown)
			if err != nil || !shown.Success {
				s.showMessage(protocol.MessageTypeInfo, fmt.Sprintf("Switchboard could not open the page; open it yourself: %s", safetext.Bounded(e.URL, 500)))
			}
			q.Answer(host.Reply{Elicit: mcpbridge.ElicitResult{Action: mcpbridge.ElicitAccept}}) // ignore error
		}, q.Dismiss, wire.TitleOpen, wire.TitleDecline)
		return
	}
	if s.capabilities().forms {
		s.forms.add(q.ID)
		el := wireElicitation(q)
		s.record("elicitationRequested", map[string]any{"elicitation": el})
		s.conn.sendJSON(wire.NotifyElicitationRequested, el)
		return
	}
	label, choices, ok := host.Choices(e, host.ChoiceOptions{Yes: wire.TitleYes, No: wire.TitleNo, Max: maxChoiceButtons, Reserved: []string{wire.TitleDecline}})
	if !ok {
		s.log.Warn(fmt.Sprintf("lsp: MCP server '%s' asked for input this editor cannot show (a form of %d field(s)); "+
			"the Switchboard extension for VS Code or plugin for Neovim can show it. Answered: cancel.", e.Server, len(e.Fields)))
		q.Answer(cancel) // ignore error
		return
	}
	titles := make([]string, 0, len(choices)+1)
	for _, c := range choices {
		titles = append(titles, c.Title)
	}
	s.prompt(q, protocol.MessageTypeInfo, fmt.Sprintf("%s (%s)", q.Text, label), func(title string) {
		if title == wire.TitleDecline {
			q.Answer(decline) // ignore error
			return
		}
		i := slices.Index(titles, title)
		if i < 0 {
			q.Dismiss()
			return
		}
		q.Answer(choices[i].Reply) // ignore error
	}, q.Dismiss, append(titles, wire.TitleDecline)...)
}

// answerFromTitle maps an approval prompt's button to its answer.
func answerFromTitle(title string) permissions.Answer {
	switch title {
	case wire.TitleAllowOnce:
		return permissions.AnswerOnce
	case wire.TitleAllowTool:
		return permissions.AnswerAlways
	case wire.TitleAllowServer:
		return permissions.AnswerServer
	}
	return permissions.AnswerDeny
}

// Resolved is host.UI: approvals and forms announced to the editor are announced resolved.
func (s *server) Resolved(q *host.Question) {
	o := q.Outcome()
	switch q.Kind {
	case host.KindApproval:
		decision := permissions.AnswerDeny
		if o.By == host.ByUser {
			decision = o.Reply.Decision
		}
		res := wire.ApprovalResolvedParams{ID: q.ID, Decision: decision.String(), By: o.By}
		s.record("approvalResolved", map[string]any{"id": q.ID, "decision": res.Decision, "by": o.By})
		s.conn.sendJSON(wire.NotifyApprovalResolved, res)
	case host.KindElicitation:
		if !s.forms.remove(q.ID) {
			return
		}
		action := mcpbridge.ElicitCancel
		if o.By == host.ByUser {
			action = o.Reply.Elicit.Action
		}
		s.record("elicitationResolved", map[string]any{"id": q.ID, "action": action, "by": o.By})
		s.conn.sendJSON(wire.NotifyElicitationResolved, wire.ElicitationResolvedParams{ID: q.ID, Action: action, By: o.By})
	case host.KindInput:
		s.inputResolved(q) // inputs.go
	}
}

// Notify is host.UI: window/showMessage.
func (s *server) Notify(level host.Level, msg string) {
	typ := protocol.MessageTypeInfo
	switch level {
	case host.LevelWarning:
		typ = protocol.MessageTypeWarning
	case host.LevelError:
		typ = protocol.MessageTypeError
	}
	s.showMessage(typ, msg)
}

// ServersChanged is host.UI: switchboard/serversChanged, and a poke for the startup progress.
func (s *server) ServersChanged(servers []mcpbridge.ServerStatus) {
	s.conn.sendJSON(wire.NotifyServersChanged, wire.ServersChangedParams{Servers: wireStatuses(servers)})
	s.pokeProgress()
}

// ChatEvent is host.UI: one chat event to the editor (switchboard/event).
func (s *server) ChatEvent(ev host.ChatEvent) {
	b, err := json.Marshal(wireEvent(ev))
	if err != nil {
		s.log.Error(fmt.Sprintf("lsp: marshal event: %v", err))
		return
	}
	s.conn.send(wire.NotifyEvent, json.RawMessage(b))
}

// formSet is the elicitations shown to the editor as forms (switchboard/elicitationRequested):
// only they are listed, answered with switchboard.elicit and announced resolved.
type formSet struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (f *formSet) add(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids == nil {
		f.ids = map[string]bool{}
	}
	f.ids[id] = true
}

func (f *formSet) has(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ids[id]
}

// remove reports whether id was there.
func (f *formSet) remove(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	ok := f.ids[id]
	delete(f.ids, id)
	return ok
}
