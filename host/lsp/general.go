package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/wire"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
)

// routes registers every method. Requests that wait (on the gate, the editor or MCP servers) are
// async; the rest run inline, in wire order with the notifications.
func (s *server) routes() *lspconn.Router {
	r := lspconn.NewRouter(s.log)
	r.Before = s.before
	r.Request(wire.MethodInitialize, false, s.initialize)
	r.Request(wire.MethodShutdown, true, s.shutdown)
	r.Request(wire.MethodExecuteCommand, true, s.executeCommand)
	r.Request(wire.MethodCodeAction, false, s.codeAction)
	r.Notification(wire.MethodInitialized, s.initialized)
	r.Notification(wire.MethodExit, s.exit)
	r.Notification(wire.MethodDidChangeConfiguration, s.didChangeConfiguration)
	r.Notification(wire.MethodDidChangeFolders, s.didChangeWorkspaceFolders)
	r.Notification(wire.MethodDidOpen, s.didOpen)
	r.Notification(wire.MethodDidChange, s.didChange)
	r.Notification(wire.MethodDidClose, s.didClose)
	r.Notification(wire.MethodWorkDoneProgressCancel, s.workDoneProgressCancel)
	return r
}

// before enforces the lifecycle: nothing but initialize (and exit) before initialize, nothing but
// exit after shutdown. Any message after initialize (shutdown included) lets through what the host
// held since initialize, for clients that never send initialized.
func (s *server) before(method string, isCall bool) error {
	s.stateMu.Lock()
	st := s.state
	s.stateMu.Unlock()
	switch {
	case method == wire.MethodExit:
		return nil
	case method == wire.MethodInitialize:
		if st != stateCreated {
			return jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was already received")
		}
		return nil
	case st == stateCreated:
		return jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "server not initialized: send initialize first")
	case st == stateShutdown:
		return jsonrpc2.NewError(jsonrpc2.InvalidRequest, "server is shut down: only exit is accepted")
	}
	s.start() // shutdown too: what was held since initialize goes out, and nothing waits for it
	return nil
}

// initializeParams is the part of InitializeParams the host reads. It is decoded leniently with
// encoding/json (not protocol.InitializeParams) so that an unusual field from some editor can never
// make initialize fail.
type initializeParams struct {
	RootURI          *string `json:"rootUri"`
	RootPath         *string `json:"rootPath"`
	WorkspaceFolders []struct {
		URI  string `json:"uri"`
		Name string `json:"name"`
	} `json:"workspaceFolders"`
	Capabilities struct {
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		Experimental struct {
			Switchboard struct {
				Elicitation  bool `json:"elicitation"`
				PinReview    bool `json:"pinReview"`
				Inputs       bool `json:"inputs"`
				TextOnce     bool `json:"textOnce"`
				TaskResults  bool `json:"taskResults"`
				ViewMessages bool `json:"viewMessages"`
			} `json:"switchboard"`
		} `json:"experimental"`
	} `json:"capabilities"`
	InitializationOptions jsontext.Value `json:"initializationOptions"`
}

// lenient are the decode options for editor input: duplicate names (last wins) and invalid UTF-8
// (replaced) are accepted, as protocol's own codec does.
var lenient = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

func (s *server) initialize(ctx context.Context, raw json.RawMessage) (any, error) {
	var p initializeParams
	if len(raw) > 0 {
		// json/v2 (protocol's codec library): one fast pass; initializationOptions stays raw.
		if err := jsonv2.Unmarshal(raw, &p, lenient); err != nil {
			// Some field has an unexpected shape: take each field on its own, so one odd capability
			// costs nothing else (and never fails initialize).
			s.log.Debug("host: initialize params, decoding field by field", "error", err)
			p = looseInitializeParams(raw)
		}
	}
	var folders []string
	for _, f := range p.WorkspaceFolders {
		if path, ok := uriToPath(f.URI); ok {
			folders = append(folders, path)
		}
	}
	if len(folders) == 0 && p.RootURI != nil {
		if path, ok := uriToPath(*p.RootURI); ok {
			folders = append(folders, path)
		}
	}
	if len(folders) == 0 && p.RootPath != nil && *p.RootPath != "" {
		folders = append(folders, cleanPath(*p.RootPath))
	}
	s.stateMu.Lock()
	s.state = stateInitialized
	s.caps = clientCaps{progress: p.Capabilities.Window.WorkDoneProgress, forms: p.Capabilities.Experimental.Switchboard.Elicitation,
		pinReview:    p.Capabilities.Experimental.Switchboard.PinReview,
		inputs:       p.Capabilities.Experimental.Switchboard.Inputs,
		textOnce:     p.Capabilities.Experimental.Switchboard.TextOnce,
		taskResults:  p.Capabilities.Experimental.Switchboard.TaskResults,
		viewMessages: p.Capabilities.Experimental.Switchboard.ViewMessages}
	s.stateMu.Unlock()
	s.record("lifecycle", map[string]any{"event": "initialize"})
	// The application starts now, before this answer, so the MCP servers start while the editor
	// reads it and sends initialized (the first call's wait after a start is mostly theirs). What
	// it tells the editor meanwhile is held until initialize is answered (connection.flushEarly).
	// Starting only parses and applies the settings (30 servers in initializationOptions add about
	// 0.1 ms to this answer); the servers connect in the background.
	o, warns := parseInitOptions(json.RawMessage(p.InitializationOptions))
	s.app.Start(folders, settings(o), warns)
	return initializeResult(s.opts.Version), nil
}

// initializeResult is initialize's answer.
func initializeResult(version string) *protocol.InitializeResult {
	sync := protocol.TextDocumentSyncKindIncremental
	openClose := true
	return &protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync: &protocol.TextDocumentSyncOptions{OpenClose: &openClose, Change: &sync},
			CodeActionProvider: &protocol.CodeActionOptions{
				CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix},
			},
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: wire.Commands},
			Workspace: &protocol.WorkspaceOptions{WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
				Supported: &openClose, ChangeNotifications: protocol.Boolean(true),
			}},
		},
		ServerInfo: protocol.ServerInfo{Name: "switchboard", Version: protocol.NewOptional(version)},
	}
}

func looseInitializeParams(raw json.RawMessage) initializeParams {
	var p initializeParams
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return p
	}
	json.Unmarshal(top["rootUri"], &p.RootURI)                   // ignore error: field is optional
	json.Unmarshal(top["rootPath"], &p.RootPath)                 // ignore error
	json.Unmarshal(top["workspaceFolders"], &p.WorkspaceFolders) // ignore error
	var caps struct {
		Window       map[string]json.RawMessage `json:"window"`
		Experimental map[string]json.RawMessage `json:"experimental"`
	}
	if json.Unmarshal(top["capabilities"], &caps) == nil {
		json.Unmarshal(caps.Window["workDoneProgress"], &p.Capabilities.Window.WorkDoneProgress)   // ignore error
		json.Unmarshal(caps.Experimental["switchboard"], &p.Capabilities.Experimental.Switchboard) // ignore error
	}
	p.InitializationOptions = jsontext.Value(top["initializationOptions"])
	return p
}

// parseInitOptions decodes initializationOptions (or settings.switchboard). A bad field is dropped
// with a warning instead of failing: the rest of the settings still apply.
func parseInitOptions(raw json.RawMessage) (wire.InitOptions, []string) {
	var o wire.InitOptions
	switch strings.TrimSpace(string(raw)) {
	case "", "null", "[]", "{}": // Neovim before 0.10 encodes an empty table as []
		return o, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return o, []string{fmt.Sprintf("initializationOptions must be an object: %v", err)}
	}
	var warns []string
	dec := func(key string, v any) {
		b, ok := fields[key]
		if !ok || string(b) == "null" {
			return
		}
		if err := json.Unmarshal(b, v); err != nil {
			warns = append(warns, fmt.Sprintf("initializationOptions.%s: %v (ignored)", key, err))
		}
	}
	dec("configFiles", &o.ConfigFiles)
	dec("servers", &o.Servers)
	dec("mode", &o.Mode)
	dec("approvalTimeoutSeconds", &o.ApprovalTimeoutSeconds)
	dec("provider", &o.Provider)
	dec("toolSearchThreshold", &o.ToolSearchThreshold)
	dec("alwaysLoadedTools", &o.AlwaysLoadedTools)
	dec("pinning", &o.Pinning)
	dec("daemonIdleSeconds", &o.DaemonIdleSeconds)
	if _, err := host.ParsePinning(o.Pinning); err != nil {
		warns = append(warns, fmt.Sprintf("initializationOptions.pinning: %v (using enforce)", err))
		o.Pinning = ""
	}
	if o.Mode != "" {
		if _, err := permissions.ParseMode(o.Mode); err != nil {
			warns = append(warns, fmt.Sprintf("initializationOptions.mode: %v (using single-confirm)", err))
			o.Mode = ""
		}
	}
	if t := o.DaemonIdleSeconds; t != nil && (*t < 0 || *t > 24*3600) {
		warns = append(warns, "initializationOptions.daemonIdleSeconds must be between 0 and 86400 (using 60)")
		o.DaemonIdleSeconds = nil
	}
	if t := o.ApprovalTimeoutSeconds; t != nil && *t <= 0 {
		warns = append(warns, "initializationOptions.approvalTimeoutSeconds must be positive (using 120)")
		o.ApprovalTimeoutSeconds = nil
	}
	return o, warns
}

// settings converts the wire settings (validated by parseInitOptions) to the application's.
func settings(o wire.InitOptions) host.Settings {
	mode, _ := permissions.ParseMode(o.Mode) // validated by parseInitOptions
	// No approval timeout given: the application's default (permissions.DefaultTimeout).
	st := host.Settings{ConfigFiles: o.ConfigFiles, Servers: o.Servers, Mode: mode, Pinning: o.Pinning}
	if o.ApprovalTimeoutSeconds != nil {
		st.ApprovalTimeout = time.Duration(*o.ApprovalTimeoutSeconds * float64(time.Second))
	}
	if p := o.Provider; p != nil {
		st.Provider = &session.ProviderConfig{Type: p.Type, Model: p.Model, BaseURL: p.BaseURL, APIKeyEnv: p.APIKeyEnv, Script: p.Script, MaxTokens: p.MaxTokens,
			ReasoningEffort: p.ReasoningEffort, Prices: sessionPrices(p.Prices)}
	}
	st.ToolSearch = toolSearch(o)
	if t := o.DaemonIdleSeconds; t != nil {
		st.DaemonIdle = time.Duration(*t * float64(time.Second))
		st.DaemonIdleSet = true
	}
	return st
}

func (s *server) initialized(ctx context.Context, _ json.RawMessage) error {
	s.record("lifecycle", map[string]any{"event": "initialized"})
	s.start()
	return nil
}

// start lets through what the application sent the editor while initialize was being answered
// (the application itself started in initialize). It runs on the read loop for the first message
// after initialize.
func (s *server) start() { s.conn.flushEarly() }

func (s *server) shutdown(ctx context.Context, _ json.RawMessage) (any, error) {
	s.stateMu.Lock()
	s.state = stateShutdown
	s.stateMu.Unlock()
	s.record("lifecycle", map[string]any{"event": "shutdown"})
	s.app.Shutdown()
	return nil, nil
}

func (s *server) exit(ctx context.Context, _ json.RawMessage) error {
	s.record("lifecycle", map[string]any{"event": "exit"})
	s.life.exitOnce.Do(func() { close(s.life.exited) })
	return nil
}

func (s *server) didChangeConfiguration(ctx context.Context, raw json.RawMessage) error {
	var p struct {
		Settings map[string]json.RawMessage `json:"settings"`
	}
	if err := lspconn.Decode(wire.MethodDidChangeConfiguration, raw, &p); err != nil {
		return err
	}
	sb, ok := p.Settings["switchboard"]
	if !ok {
		return nil // not ours (or a pull-model client): nothing to apply
	}
	opts, warns := parseInitOptions(sb)
	s.app.ApplySettings(settings(opts), warns)
	s.app.Reapply()
	return nil
}

func (s *server) didChangeWorkspaceFolders(ctx context.Context, raw json.RawMessage) error {
	type folder struct {
		URI string `json:"uri"`
	}
	var p struct {
		Event struct {
			Added   []folder `json:"added"`
			Removed []folder `json:"removed"`
		} `json:"event"`
	}
	if err := lspconn.Decode(wire.MethodDidChangeFolders, raw, &p); err != nil {
		return err
	}
	paths := func(fs []folder) []string {
		var out []string
		for _, f := range fs {
			if path, ok := uriToPath(f.URI); ok {
				out = append(out, path)
			}
		}
		return out
	}
	s.app.ChangeFolders(paths(p.Event.Added), paths(p.Event.Removed))
	return nil
}

// ServersStarting is host.UI: $/progress begin/report/end while servers are starting, when the
// client supports it. It runs until no server is starting. One sequence runs at a time: a call
// while one runs only pokes it (it counts every server), so every sequence begun also ends (two
// runners on the one poke channel left one waiting forever, showing "0/1").
func (s *server) ServersStarting() {
	if !s.capabilities().progress {
		return
	}
	s.connecting.Lock()
	total, done := s.progressCount()
	if s.connectingRun || total == done {
		s.connecting.Unlock()
		s.pokeProgress()
		return
	}
	s.connectingRun = true
	s.connecting.Unlock()
	ended := false
	defer func() {
		if !ended {
			s.connecting.Lock()
			s.connectingRun = false
			s.connecting.Unlock()
		}
	}()
	token := protocol.String(fmt.Sprintf("switchboard/connect/%d", time.Now().UnixNano()))
	ctx, cancel := context.WithTimeout(s.conn.baseCtx, 10*time.Second)
	err := s.conn.call(ctx, wire.MethodWorkDoneProgressNew, &protocol.WorkDoneProgressCreateParams{Token: token}, nil)
	cancel()
	if err != nil {
		s.log.Debug("host: workDoneProgress/create failed", "error", err)
		return
	}
	msg := func(done, total int) *string {
		m := fmt.Sprintf("Connecting MCP servers %d/%d", done, total)
		return &m
	}
	pct := func(done, total int) *uint32 {
		p := uint32(done * 100 / max(total, 1))
		return &p
	}
	value := func(v any) protocol.LSPAny {
		b, _ := protocol.Marshal(v) // ignore error: plain structs
		return protocol.LSPAny(b)
	}
	total, done = s.progressCount()
	s.conn.send(wire.MethodProgress, &protocol.ProgressParams{Token: token, Value: value(&protocol.WorkDoneProgressBegin{
		Kind: "begin", Title: "Switchboard", Message: msg(done, total), Percentage: pct(done, total),
	})})
	last := done
	for {
		if total == done {
			// End only when, under the lock, nothing is starting: a caller arriving after this
			// starts a sequence of its own.
			s.connecting.Lock()
			total, done = s.progressCount()
			if total == done {
				s.connectingRun = false
				ended = true
				s.connecting.Unlock()
				break
			}
			s.connecting.Unlock()
			continue
		}
		select {
		case <-s.poke:
		case <-s.conn.baseCtx.Done():
			return
		}
		total, done = s.progressCount()
		if done != last && done != total {
			last = done
			s.conn.send(wire.MethodProgress, &protocol.ProgressParams{Token: token, Value: value(&protocol.WorkDoneProgressReport{
				Kind: "report", Message: msg(done, total), Percentage: pct(done, total),
			})})
		}
	}
	_, _, n := s.app.StartupCounts()
	end := fmt.Sprintf("Connected %d MCP %s", n, plural(n, "server", "servers"))
	s.conn.send(wire.MethodProgress, &protocol.ProgressParams{Token: token, Value: value(&protocol.WorkDoneProgressEnd{Kind: "end", Message: &end})})
}

// pokeProgress wakes the running startup progress to count again.
func (s *server) pokeProgress() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// progressCount counts the servers that are meant to run, and those whose attempt has ended.
func (s *server) progressCount() (total, done int) {
	total, done, _ = s.app.StartupCounts()
	return total, done
}

func uriToPath(u string) (string, bool) {
	if !strings.HasPrefix(u, "file:") {
		return "", false
	}
	parsed, err := uri.Parse(u)
	if err != nil {
		return "", false
	}
	p := parsed.FsPath()
	if p == "" {
		return "", false
	}
	return cleanPath(p), true
}
