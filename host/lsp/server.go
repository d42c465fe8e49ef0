package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// Lifecycle states.
const (
	stateCreated = iota
	stateInitialized
	stateShutdown
)

// server is one editor connection: the router's handlers and the LSP implementation of host.UI.
// Its fields are set in Serve, then only read, except where a mutex says otherwise.
type server struct {
	opts  Options
	app   *host.App
	log   *slog.Logger // forwards warnings and errors to the editor (see logHandler)
	conn  *connection
	docs  *documents
	cmds  map[string]commandFunc
	tools progressSet   // tool calls showing progress in the editor
	forms formSet       // elicitations announced to the editor as forms
	poke  chan struct{} // poked on every server change (buffered 1): the startup progress

	connecting    sync.Mutex // guards connectingRun
	connectingRun bool       // a startup progress sequence runs (ServersStarting)

	stateMu sync.Mutex // guards state, caps
	state   int
	caps    clientCaps

	life lifecycle
}

// clientCaps is what the editor said it supports.
type clientCaps struct {
	progress bool // window.workDoneProgress
	forms    bool // capabilities.experimental.switchboard.elicitation: elicitation forms
	// pinReview: capabilities.experimental.switchboard.pinReview: the editor shows its own review
	// of changed tool definitions on switchboard/pinsChanged (no showMessageRequest).
	pinReview bool
	inputs    bool // capabilities.experimental.switchboard.inputs: input boxes (inputs.go)
	// textOnce: capabilities.experimental.switchboard.textOnce: a big tool result's text is sent
	// once, in text (wireResult).
	textOnce bool
	// taskResults: capabilities.experimental.switchboard.taskResults: the editor shows a task's
	// result itself on switchboard/showTaskResult (else the host opens a file: tasks.go).
	taskResults bool
	// viewMessages: capabilities.experimental.switchboard.viewMessages: the editor shows a chat
	// turn a view started (switchboard/viewMessage); without it a view's ui/message is refused,
	// so that no turn runs whose message the editor never showed.
	viewMessages bool
}

// lifecycle is the once-only steps of a connection.
type lifecycle struct {
	exited   chan struct{} // closed by the exit notification
	exitOnce sync.Once
	downOnce sync.Once // teardown
}

var _ host.UI = (*server)(nil)

func (s *server) capabilities() clientCaps {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.caps
}

func (s *server) wasShutdown() bool {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.state == stateShutdown
}

// record writes to the events file (host.EventsEnv).
// recording reports whether record keeps anything (a test's events file): callers on a tool
// call's way build their fields only then.
func (s *server) recording() bool { return s.app != nil && s.app.Recording() }

func (s *server) record(kind string, fields map[string]any) {
	if s.app != nil {
		s.app.Record(kind, fields)
	}
}

// connection is the jsonrpc2 connection to the editor, with what is sent before it exists.
type connection struct {
	conn    jsonrpc2.Conn
	log     *slog.Logger    // the plain logger (never back to the editor)
	baseCtx context.Context // parent of every request and background task; cancelled by teardown
	cancel  context.CancelFunc
	gone    chan struct{} // closed when the editor is gone (or we are exiting)

	// Nothing reaches the editor before initialize is answered: notifications are kept in early
	// and calls wait for open, until flushEarly (the first message after initialize). The
	// application starts during initialize, so its first notices (servers starting, warnings) are
	// kept here.
	earlyMu sync.Mutex    // guards early and the closing of open
	early   []earlyNote   // notifications kept until flushEarly
	opened  atomic.Bool   // flushEarly has run
	open    chan struct{} // closed by flushEarly
}

// maxEarly bounds what is held for an editor that never speaks after initialize (a chatty server's
// log lines would otherwise pile up).
const maxEarly = 4096

type earlyNote struct {
	method string
	params any
}

// errEditorGone is the error of a call to the editor when the connection is lost.
var errEditorGone = fmt.Errorf("lsp: editor connection lost")

// sendJSON sends a notification whose params are marshalled with encoding/json (wire types).
func (c *connection) sendJSON(method string, params any) {
	b, err := json.Marshal(params)
	if err != nil {
		c.log.Error(fmt.Sprintf("lsp: marshal %s: %v", method, err))
		return
	}
	c.send(method, json.RawMessage(b))
}

// send sends a notification; protocol types go through the protocol codec.
func (c *connection) send(method string, params any) {
	if !c.opened.Load() {
		c.earlyMu.Lock()
		if !c.opened.Load() { // flushEarly sends these in order, then marks opened under earlyMu
			if len(c.early) >= maxEarly {
				c.earlyMu.Unlock()
				c.log.Debug("lsp: dropping a notification held for an editor that has said nothing since initialize", "method", method)
				return
			}
			c.early = append(c.early, earlyNote{method, params})
			c.earlyMu.Unlock()
			return
		}
		c.earlyMu.Unlock()
	}
	if c.conn == nil || c.isGone() {
		return
	}
	if err := c.conn.Notify(c.baseCtx, method, params); err != nil {
		c.log.Debug("lsp: notify failed", "method", method, "error", err)
	}
}

// call makes a request to the editor; never call it from a handler that has not released the read
// loop (jsonrpc2.Async) or from a notification handler.
func (c *connection) call(ctx context.Context, method string, params, result any) error {
	if !c.opened.Load() {
		select {
		case <-c.open:
		case <-c.gone:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if c.conn == nil || c.isGone() {
		return errEditorGone
	}
	_, err := c.conn.Call(ctx, method, params, result)
	return err
}

// flushEarly sends the notifications kept so far, in order, and from then on lets everything
// through (calls waiting for it go on). Run it once initialize has been answered.
func (c *connection) flushEarly() {
	c.earlyMu.Lock()
	defer c.earlyMu.Unlock()
	if c.opened.Load() {
		return
	}
	for _, n := range c.early {
		if c.conn != nil && !c.isGone() {
			if err := c.conn.Notify(c.baseCtx, n.method, n.params); err != nil {
				c.log.Debug("lsp: notify failed", "method", n.method, "error", err)
			}
		}
	}
	c.early = nil
	c.opened.Store(true)
	close(c.open)
}

func (c *connection) isGone() bool {
	select {
	case <-c.gone:
		return true
	default:
		return false
	}
}

// showMessage sends window/showMessage and records it. The text is escaped (safetext.Block): it
// often quotes a server's or a config file's words.
func (s *server) showMessage(typ protocol.MessageType, msg string) {
	msg = noLinks(safetext.Block(msg))
	s.record("showMessage", map[string]any{"type": int(typ), "message": msg})
	s.conn.send(wire.MethodShowMessage, &protocol.ShowMessageParams{Type: typ, Message: msg})
}

// noLinks is safetext.NoLinks: servers and views put text in these messages.
func noLinks(msg string) string { return safetext.NoLinks(msg) }

// logHandler passes records to the configured logger and sends warnings and errors to the editor
// as window/logMessage (and the events file).
type logHandler struct {
	next  slog.Handler
	s     *server
	attrs []slog.Attr
	group string
}

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		var b strings.Builder
		b.WriteString(r.Message)
		add := func(a slog.Attr) bool {
			if a.Key == "stack" {
				return true
			}
			key := a.Key
			if h.group != "" {
				key = h.group + "." + key
			}
			fmt.Fprintf(&b, " %s=%v", key, a.Value.Resolve())
			return true
		}
		for _, a := range h.attrs {
			add(a)
		}
		r.Attrs(add)
		typ, level := protocol.MessageTypeWarning, "warning"
		if r.Level >= slog.LevelError {
			typ, level = protocol.MessageTypeError, "error"
		}
		msg := safetext.Block(b.String()) // log lines quote servers' stderr, errors and names
		h.s.record("log", map[string]any{"level": level, "message": msg})
		h.s.conn.send(wire.MethodLogMessage, &protocol.LogMessageParams{Type: typ, Message: msg})
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &logHandler{next: h.next.WithAttrs(as), s: h.s, attrs: append(append([]slog.Attr(nil), h.attrs...), as...), group: h.group}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	g := name
	if h.group != "" {
		g = h.group + "." + name
	}
	return &logHandler{next: h.next.WithGroup(name), s: h.s, attrs: h.attrs, group: g}
}

func cleanPath(p string) string { return filepath.Clean(p) }

// promptParams is window/showMessageRequest's params (protocol.ShowMessageRequestParams, not
// embedded: its own marshalling would drop the field after it) with Switchboard's own field.
type promptParams struct {
	Type        protocol.MessageType         `json:"type"`
	Message     string                       `json:"message"`
	Actions     []protocol.MessageActionItem `json:"actions,omitempty"`
	Switchboard *wire.PromptAbout            `json:"switchboard,omitempty"`
}

// askButtons puts a question with buttons to the user (window/showMessageRequest) and returns the
// title clicked. ok is false when the prompt was dismissed (null), failed, answered with a title
// not offered, or ctx ended: every caller treats that as "no answer". about (nil: none) says
// which question the prompt is, for an editor that answers it later by command (wire.PromptAbout).
func (s *server) askButtons(ctx context.Context, typ protocol.MessageType, msg string, about *wire.PromptAbout, titles ...string) (string, bool) {
	actions := make([]protocol.MessageActionItem, len(titles))
	for i, t := range titles {
		actions[i] = protocol.MessageActionItem{Title: t}
	}
	var reply json.RawMessage
	msg = noLinks(safetext.Block(msg)) // callers bound and escape what they quote; this is the last line of defence
	params := &promptParams{Type: typ, Message: msg, Actions: actions, Switchboard: about}
	if err := s.conn.call(ctx, wire.MethodShowMessageRequest, params, &reply); err != nil {
		if ctx.Err() == nil {
			s.log.Debug("lsp: prompt failed", "message", msg, "error", err)
		}
		return "", false
	}
	var item struct {
		Title string `json:"title"`
	}
	if len(reply) == 0 || string(reply) == "null" || json.Unmarshal(reply, &item) != nil || !slices.Contains(titles, item.Title) {
		return "", false
	}
	return item.Title, true
}
