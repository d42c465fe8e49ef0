package host

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"

	"go.lsp.dev/protocol"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// Elicitation: an MCP server asking the user for input (MCP elicitation/create), see README
// "Protocol additions". Form mode goes to an editor that declared
// capabilities.experimental.switchboard.elicitation as switchboard/elicitationRequested and is
// answered with switchboard.elicit; other editors get the simple forms (one yes/no or one choice)
// as a window/showMessageRequest. URL mode is a showMessageRequest and window/showDocument in any
// editor. Every way out (answer, timeout, the server cancelling, the editor gone) resolves the
// question once, announced by switchboard/elicitationResolved.

type elicitations struct {
	s *server

	mu      sync.Mutex // guards seq, pending
	seq     int
	pending map[string]*pendingElicitation
}

type pendingElicitation struct {
	wire   Elicitation
	fields []mcpbridge.ElicitField
	answer chan mcpbridge.ElicitResult // buffered(1); written once by resolve
}

// Titles of the showMessageRequest fallbacks.
const (
	TitleOpen    = "Open"
	TitleDecline = "Decline"
	TitleYes     = "Yes"
	TitleNo      = "No"
)

// maxChoiceButtons bounds the buttons of the showMessageRequest fallback for a choice.
const maxChoiceButtons = 6

func newElicitations(s *server) *elicitations {
	return &elicitations{s: s, pending: map[string]*pendingElicitation{}}
}

// elicit is mcpbridge.Options.Elicit.
func (el *elicitations) elicit(ctx context.Context, e mcpbridge.Elicitation) mcpbridge.ElicitResult {
	s := el.s
	if s.isGone() {
		return mcpbridge.ElicitResult{Action: mcpbridge.ElicitCancel}
	}
	ctx, cancel := context.WithTimeout(ctx, s.questionTimeout())
	defer cancel()
	if e.Mode == "url" {
		return el.openURL(ctx, e)
	}
	s.stateMu.Lock()
	editorForms := s.elicitCap
	s.stateMu.Unlock()
	if editorForms {
		return el.ask(ctx, e)
	}
	return el.askSimple(ctx, e)
}

// ask raises a form in the editor and waits for switchboard.elicit, the end of ctx (timeout, the
// server cancelling) or the loss of the editor.
func (el *elicitations) ask(ctx context.Context, e mcpbridge.Elicitation) mcpbridge.ElicitResult {
	s := el.s
	p := &pendingElicitation{fields: e.Fields, answer: make(chan mcpbridge.ElicitResult, 1)}
	el.mu.Lock()
	el.seq++
	p.wire = Elicitation{
		ID:          "e" + strconv.Itoa(el.seq),
		Server:      e.Server,
		Message:     safetext.Bounded(e.Message, maxElicitMessage),
		Fields:      displayFields(e.Fields),
		RequestedAt: s.now().UTC().Format(time.RFC3339),
	}
	el.pending[p.wire.ID] = p
	el.mu.Unlock()
	id := p.wire.ID
	s.events.record("elicitationRequested", map[string]any{"elicitation": p.wire})
	s.sendJSON(NotifyElicitationRequested, p.wire)

	cancelled := mcpbridge.ElicitResult{Action: mcpbridge.ElicitCancel}
	select {
	case ans := <-p.answer:
		return ans
	case <-ctx.Done():
		by := ResolvedByCancelled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			by = ResolvedByTimeout
		}
		el.resolve(id, cancelled, by) // false when answered just before: then that answer stands
		return <-p.answer
	case <-s.gone:
		el.resolve(id, cancelled, ResolvedByDisconnect) // ignore result: either way p.answer has it
		return <-p.answer
	}
}

// displayFields is the form as the editor shows it: the server's labels with control and bidi
// characters escaped, so that a label cannot hide or disguise what the user picks. Names and
// values stay as they are: the editor sends them back.
func displayFields(fields []mcpbridge.ElicitField) []mcpbridge.ElicitField {
	out := make([]mcpbridge.ElicitField, len(fields))
	for i, f := range fields {
		f.Title = safetext.Bounded(f.Title, 200)
		if f.Title == "" && safetext.Bounded(f.Name, 200) != f.Name {
			f.Title = safetext.Bounded(f.Name, 200) // editors show the name when there is no title
		}
		f.Description = safetext.Bounded(f.Description, 500)
		titles := make([]string, len(f.EnumTitles))
		for k, t := range f.EnumTitles {
			titles[k] = safetext.Bounded(t, 200)
		}
		if len(titles) > 0 {
			f.EnumTitles = titles
		}
		out[i] = f
	}
	return out
}

// maxElicitMessage bounds a server's message (in characters).
const maxElicitMessage = 2000

// resolve answers a pending elicitation; false when id is unknown or already resolved.
func (el *elicitations) resolve(id string, res mcpbridge.ElicitResult, by string) bool {
	el.mu.Lock()
	p, ok := el.pending[id]
	delete(el.pending, id)
	el.mu.Unlock()
	if !ok {
		return false
	}
	el.s.events.record("elicitationResolved", map[string]any{"id": id, "action": res.Action, "by": by})
	el.s.sendJSON(NotifyElicitationResolved, ElicitationResolvedParams{ID: id, Action: res.Action, By: by})
	p.answer <- res
	return true
}

// answer is switchboard.elicit. Content that does not fit the form is InvalidParams and leaves the
// question pending, so the editor can ask again.
func (el *elicitations) answer(p ElicitParams) error {
	if p.ID == "" {
		return lspconn.InvalidParams("%s: id is required", CmdElicit)
	}
	el.mu.Lock()
	pe, ok := el.pending[p.ID]
	el.mu.Unlock()
	if !ok {
		return lspconn.InvalidParams("%s: no pending elicitation %q (unknown, already answered or timed out)", CmdElicit, p.ID)
	}
	res := mcpbridge.ElicitResult{Action: p.Action}
	switch p.Action {
	case mcpbridge.ElicitAccept:
		content := p.Content
		if content == nil {
			content = map[string]any{}
		}
		if err := mcpbridge.ValidateElicitation(pe.fields, content); err != nil {
			return lspconn.InvalidParams("%s: %s", CmdElicit, safetext.Bounded(err.Error(), maxElicitMessage)) // it quotes the server's titles and values
		}
		res.Content = content
	case mcpbridge.ElicitDecline, mcpbridge.ElicitCancel:
		if len(p.Content) > 0 {
			return lspconn.InvalidParams("%s: content goes only with accept", CmdElicit)
		}
	default:
		return lspconn.InvalidParams("%s: action must be accept, decline or cancel, not %q", CmdElicit, p.Action)
	}
	if !el.resolve(p.ID, res, ResolvedByUser) {
		return lspconn.InvalidParams("%s: no pending elicitation %q (unknown, already answered or timed out)", CmdElicit, p.ID)
	}
	return nil
}

// list returns the pending elicitations, oldest first.
func (el *elicitations) list() []Elicitation {
	return oldestFirst(&el.mu, el.pending, func(p *pendingElicitation) Elicitation { return p.wire }, func(w Elicitation) string { return w.ID })
}

// cancelAll resolves every pending elicitation (shutdown).
func (el *elicitations) cancelAll(by string) {
	for _, e := range el.list() {
		el.resolve(e.ID, mcpbridge.ElicitResult{Action: mcpbridge.ElicitCancel}, by)
	}
}

// askSimple asks a form of one yes/no or one choice with window/showMessageRequest, for editors
// without forms. Any other form cannot be asked: cancel, and say so.
func (el *elicitations) askSimple(ctx context.Context, e mcpbridge.Elicitation) mcpbridge.ElicitResult {
	s := el.s
	cancelled := mcpbridge.ElicitResult{Action: mcpbridge.ElicitCancel}
	var f mcpbridge.ElicitField
	var titles []string
	var values []any
	if len(e.Fields) == 1 {
		f = e.Fields[0]
		switch {
		case f.Type == "boolean":
			titles, values = []string{TitleYes, TitleNo}, []any{true, false}
		case f.Type == "string" && len(f.Enum) > 0 && len(f.Enum) <= maxChoiceButtons:
			for i, v := range f.Enum {
				titles = append(titles, safetext.Bounded(f.EnumTitles[i], 40))
				values = append(values, v)
			}
		}
	}
	if titles == nil || slices.Contains(titles, TitleDecline) || !unique(titles) {
		s.log.Warn(fmt.Sprintf("host: MCP server '%s' asked for input this editor cannot show (a form of %d field(s)); "+
			"the Switchboard extension for VS Code or plugin for Neovim can show it. Answered: cancel.", e.Server, len(e.Fields)))
		return cancelled
	}
	label := f.Title
	if label == "" {
		label = f.Name
	}
	msg := fmt.Sprintf("MCP server '%s' asks: %s (%s)", e.Server, safetext.Bounded(e.Message, maxElicitMessage), safetext.Bounded(label, 80))
	title, ok := s.askButtons(ctx, protocol.MessageTypeInfo, msg, append(titles, TitleDecline)...)
	switch {
	case !ok:
		return cancelled
	case title == TitleDecline:
		return mcpbridge.ElicitResult{Action: mcpbridge.ElicitDecline}
	}
	i := slices.Index(titles, title)
	if i < 0 {
		return cancelled
	}
	return mcpbridge.ElicitResult{Action: mcpbridge.ElicitAccept, Content: map[string]any{f.Name: values[i]}}
}

// openURL asks whether to open the page a server names (url mode) and opens it in the browser.
func (el *elicitations) openURL(ctx context.Context, e mcpbridge.Elicitation) mcpbridge.ElicitResult {
	s := el.s
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		s.log.Warn(fmt.Sprintf("host: MCP server '%s' asked to open %q, which is not an http(s) URL; declined", e.Server, safetext.Bounded(e.URL, 200)))
		return mcpbridge.ElicitResult{Action: mcpbridge.ElicitDecline}
	}
	link := safetext.Bounded(u.String(), 500)
	msg := fmt.Sprintf("MCP server '%s' asks you to open %s: %s", e.Server, link, safetext.Bounded(e.Message, maxElicitMessage))
	title, ok := s.askButtons(ctx, protocol.MessageTypeInfo, msg, TitleOpen, TitleDecline)
	switch {
	case !ok:
		return mcpbridge.ElicitResult{Action: mcpbridge.ElicitCancel}
	case title == TitleDecline:
		return mcpbridge.ElicitResult{Action: mcpbridge.ElicitDecline}
	case title != TitleOpen:
		return mcpbridge.ElicitResult{Action: mcpbridge.ElicitCancel}
	}
	var shown struct {
		Success bool `json:"success"`
	}
	_, err = s.call(ctx, MethodShowDocument, map[string]any{"uri": u.String(), "external": true, "takeFocus": true}, &shown)
	if err != nil || !shown.Success {
		s.showMessage(protocol.MessageTypeInfo, fmt.Sprintf("Switchboard could not open the page; open it yourself: %s", link))
	}
	return mcpbridge.ElicitResult{Action: mcpbridge.ElicitAccept}
}

// unique reports whether no two titles are the same (cut titles can collide: a button must map
// back to one value).
func unique(titles []string) bool {
	seen := make(map[string]bool, len(titles))
	for _, t := range titles {
		if seen[t] {
			return false
		}
		seen[t] = true
	}
	return true
}
