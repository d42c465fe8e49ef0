package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
)

// Lifecycle states.
const (
	stateCreated = iota
	stateInitialized
	stateShutdown
)

// server is one editor connection. Its fields are set in newServer and run, then only read, except
// where a mutex says otherwise.
type server struct {
	opts      Options
	log       *slog.Logger // forwards warnings and errors to the editor (see logHandler)
	getenv    func(string) string
	lookupEnv func(string) (string, bool)
	now       func() time.Time

	conn    jsonrpc2.Conn
	baseCtx context.Context // parent of every request and background task; cancelled by teardown
	cancel  context.CancelFunc
	gone    chan struct{} // closed when the editor is gone (or we are exiting)
	exited  chan struct{} // closed by the exit notification
	exitOnce,
	teardownOnce,
	backendsOnce,
	startOnce sync.Once

	events    *eventsFile
	allow     *permissions.Allowlist
	trust     *permissions.TrustStore
	audit     *permissions.AuditLog
	gate      *permissions.Gate
	registry  *mcpbridge.Registry
	sessions  *session.Manager
	approvals *approvals
	docs      *documents
	cmds      map[string]commandFunc

	stateMu     sync.Mutex // guards state, cfg, folders, caps
	state       int
	cfg         InitOptions
	mode        permissions.Mode
	folders     []string
	progressCap bool        // client supports window.workDoneProgress
	progress    progressSet // tool calls showing progress in the editor
	elicitCap   bool        // client shows elicitation forms (capabilities.experimental.switchboard.elicitation)

	elicitations *elicitations
	sampling     *sampling
	provider     session.ProviderConfig // last applied
	initOptions  json.RawMessage        // initializationOptions until start applies them

	cfgMu       sync.Mutex // guards cfgs, lastCfgErrs
	cfgs        []mcpbridge.ServerConfig
	lastCfgErrs string
	applyMu     sync.Mutex // serialises load+Apply, so the last settings win
	loaded      bool       // guarded by applyMu: the first load+Apply happened
	dirty       bool       // guarded by dirtyMu: settings changed before the first load finished
	dirtyMu     sync.Mutex

	statusMu   sync.Mutex // guards states, trustAsked; serialises serversChanged
	states     map[string]string
	trustAsked map[string]bool
	progressCh chan struct{} // poked on every server change (buffered 1)

	earlyMu sync.Mutex  // guards early
	early   []earlyNote // notifications from before the connection existed (newServer's warnings)
}

type earlyNote struct {
	method string
	params any
}

func newServer(opts Options) (*server, error) {
	base := opts.Logger
	if base == nil {
		base = slog.New(slog.DiscardHandler)
	}
	s := &server{
		opts:       opts,
		gone:       make(chan struct{}),
		exited:     make(chan struct{}),
		states:     map[string]string{},
		trustAsked: map[string]bool{},
		progressCh: make(chan struct{}, 1),
		now:        opts.Now,
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.getenv, s.lookupEnv = wrapEnv(opts)
	s.log = slog.New(&logHandler{next: base.Handler(), s: s})
	s.baseCtx, s.cancel = context.WithCancel(context.Background())

	var err error
	if s.events, err = openEvents(s.getenv(EventsEnv)); err != nil {
		s.log.Warn(fmt.Sprintf("host: events file: %v", err))
	}
	path := opts.AllowlistPath
	if path == "" {
		path = permissions.DefaultAllowlistPath()
	}
	if s.allow, err = permissions.OpenAllowlist(path); err != nil {
		return nil, fmt.Errorf("host: allowlist: %w", err)
	}
	if path = opts.TrustPath; path == "" {
		path = permissions.DefaultTrustPath()
	}
	if s.trust, err = permissions.OpenTrustStore(path); err != nil {
		return nil, fmt.Errorf("host: trust store: %w", err)
	}
	if !opts.NoAudit {
		if path = opts.AuditPath; path == "" {
			path = permissions.DefaultAuditPath()
		}
		if s.audit, err = permissions.OpenAuditLog(path, 0); err != nil {
			s.log.Warn(fmt.Sprintf("host: audit log %s: %v (continuing without)", path, err))
			s.audit = nil
		}
	}
	s.approvals = newApprovals(s)
	s.elicitations = newElicitations(s)
	s.sampling = newSampling(s)
	s.cmds = s.commands()
	s.docs = newDocuments()
	s.gate = permissions.NewGate(permissions.GateOptions{
		Allowlist: s.allow,
		Trust:     s.trust, // grants for workspace-defined servers are bound to their definition
		Prompter:  s.approvals,
		Audit:     s.audit,
		Logger:    s.log,
	})
	s.registry = mcpbridge.NewRegistry(mcpbridge.Options{
		Logger:   s.log,
		OnChange: s.serversChanged,
		Trusted:  s.trusted,
		Load: func() ([]mcpbridge.ServerConfig, []error) {
			cfgs, _ := s.loadConfig() // loadConfig reports the errors itself
			return cfgs, nil
		},
		BaseEnv: opts.BaseEnv,
		Getenv:  s.lookupEnv,
		Roots:   s.folderList, // MCP roots are the workspace folders
		Elicit: func(ctx context.Context, e mcpbridge.Elicitation) mcpbridge.ElicitResult {
			return s.elicitations.elicit(ctx, e)
		},
		Sample: func(ctx context.Context, r mcpbridge.SampleRequest) (mcpbridge.SampleResult, error) {
			return s.sampling.sample(ctx, r)
		},
	})
	s.provider = s.providerConfig(InitOptions{})
	s.sessions = session.NewManager(session.Options{
		Tools:     progressTools{s.registry, s},
		Gate:      s.gate,
		Workspace: &workspace{s: s},
		Provider:  s.provider,
		Logger:    s.log,
		Warn:      func(msg string) { s.showMessage(protocol.MessageTypeWarning, msg) },
		Getenv:    s.getenv,
	})
	return s, nil
}

func (s *server) wasShutdown() bool {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.state == stateShutdown
}

// shutdownBackends ends turns, pending approvals and MCP servers; once.
func (s *server) shutdownBackends(by string) {
	s.backendsOnce.Do(func() {
		s.approvals.denyAll(by)
		s.elicitations.cancelAll(by)
		s.sessions.Close()
		if err := s.registry.Close(); err != nil {
			s.log.Debug("host: closing MCP servers", "error", err)
		}
		if s.audit != nil {
			s.audit.Close() // ignore error
		}
	})
}

// sendJSON sends a notification whose params are marshalled with encoding/json (our own types).
func (s *server) sendJSON(method string, params any) {
	b, err := json.Marshal(params)
	if err != nil {
		s.log.Error(fmt.Sprintf("host: marshal %s: %v", method, err))
		return
	}
	s.send(method, json.RawMessage(b))
}

// send sends a notification; protocol types go through the protocol codec.
func (s *server) send(method string, params any) {
	if s.conn == nil {
		// Only newServer runs before the connection exists: keep its warnings for the editor
		// (flushEarly sends them once initialize has been answered).
		s.earlyMu.Lock()
		s.early = append(s.early, earlyNote{method, params})
		s.earlyMu.Unlock()
		return
	}
	if s.isGone() {
		return
	}
	if err := s.conn.Notify(s.baseCtx, method, params); err != nil {
		s.opts.loggerOrDiscard().Debug("host: notify failed", "method", method, "error", err)
	}
}

// call makes a request to the editor; never call it from a handler that has not released the read
// loop (jsonrpc2.Async) or from a notification handler.
func (s *server) call(ctx context.Context, method string, params, result any) (jsonrpc2.ID, error) {
	if s.conn == nil || s.isGone() {
		return jsonrpc2.ID{}, errEditorGone
	}
	return s.conn.Call(ctx, method, params, result)
}

// flushEarly sends the notifications kept from before the connection existed.
func (s *server) flushEarly() {
	s.earlyMu.Lock()
	early := s.early
	s.early = nil
	s.earlyMu.Unlock()
	for _, n := range early {
		s.send(n.method, n.params)
	}
}

func (s *server) isGone() bool {
	select {
	case <-s.gone:
		return true
	default:
		return false
	}
}

func (o Options) loggerOrDiscard() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// showMessage sends window/showMessage and records it. The text is escaped (safetext.Block): it
// often quotes a server's or a config file's words.
func (s *server) showMessage(typ protocol.MessageType, msg string) {
	msg = safetext.Block(msg)
	s.events.record("showMessage", map[string]any{"type": int(typ), "message": msg})
	s.send(MethodShowMessage, &protocol.ShowMessageParams{Type: typ, Message: msg})
}

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
		h.s.events.record("log", map[string]any{"level": level, "message": msg})
		h.s.send(MethodLogMessage, &protocol.LogMessageParams{Type: typ, Message: msg})
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

// folderList returns the workspace folders.
func (s *server) folderList() []string {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return append([]string(nil), s.folders...)
}

func cleanPath(p string) string { return filepath.Clean(p) }

// questionTimeout is how long any question to the user waits (an elicitation, a sampling prompt):
// the approval timeout.
func (s *server) questionTimeout() time.Duration { return s.gate.Timeout() }

// askButtons puts a question with buttons to the user (window/showMessageRequest) and returns the
// title clicked. ok is false when the prompt was dismissed (null), failed, answered with a title
// not offered, or ctx ended: every caller treats that as "no answer".
func (s *server) askButtons(ctx context.Context, typ protocol.MessageType, msg string, titles ...string) (string, bool) {
	actions := make([]protocol.MessageActionItem, len(titles))
	for i, t := range titles {
		actions[i] = protocol.MessageActionItem{Title: t}
	}
	var reply json.RawMessage
	msg = safetext.Block(msg) // callers bound and escape what they quote; this is the last line of defence
	params := &protocol.ShowMessageRequestParams{Type: typ, Message: msg, Actions: actions}
	if _, err := s.call(ctx, MethodShowMessageRequest, params, &reply); err != nil {
		if ctx.Err() == nil {
			s.log.Debug("host: prompt failed", "message", msg, "error", err)
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
