package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/permissions/policy"
	"github.com/switchboard-dev/switchboard/session"
)

// Options configures an App. The zero value uses the XDG default paths and the process
// environment.
type Options struct {
	// Logger receives the application's log (nil = discard).
	Logger *slog.Logger
	// Env reads the environment (SWITCHBOARD_EVENTS, provider API keys); nil = os.Getenv.
	Env func(string) string
	// LookupEnv expands ${VAR} in MCP configuration; nil = derived from Env, or os.LookupEnv.
	LookupEnv func(string) (string, bool)

	// Paths; "" = the defaults of PROTOCOL.md (permissions.Default*Path, the user mcp.json, the
	// user config.json with the provider).
	UserConfigFile     string
	ProviderConfigFile string
	AllowlistPath      string
	TrustPath          string
	AuditPath          string
	PinsPath           string // the pin file ("" = permissions.DefaultPinsPath)
	// NoAudit turns the audit log off.
	NoAudit bool
	// BaseEnv is the environment base for stdio MCP servers (nil = mcpbridge's minimal default).
	BaseEnv []string
	// Servers, when set, picks which configured servers run (`switchboard call` starts only the
	// tool's own server); nil = all.
	Servers func([]config.ServerConfig) []config.ServerConfig
	// Roots are the MCP roots while there is no workspace folder (`switchboard call` gives the
	// directory it runs in); nil = none.
	Roots []string
	// Now is the clock of Question.Requested (nil = time.Now).
	Now func() time.Time
	// Settled, when set, is called once the first servers' start has settled and the start-up
	// memory was returned (see releaseStartMemory): the moment a front end may retune the process
	// for a long idle life as a relay (cmd/switchboard serve drops to one P). It runs on a
	// background goroutine, at a moment without a tool call in flight.
	Settled func()
	// Tokens keeps OAuth sign-ins of MCP servers (nil = the OS keychain, else a 0600 file under
	// $XDG_STATE_HOME/switchboard: mcpbridge/tokenstore).
	Tokens tokenstore.Store
	// SignInTimeout bounds the wait for the browser during a sign-in (0 = 5 minutes).
	SignInTimeout time.Duration
	// Policy is where the organisation's policy files are (the zero value: none; cmd/switchboard
	// gives policy.DefaultPaths()).
	Policy policy.Paths
	// Broker reaches the shared-server daemon (issue 32): a stdio server marked "shared" attaches
	// to its copy there, and runs here when that fails. nil = every server runs in this process.
	Broker *broker.Config
	// DaemonCommand, when set with Broker, is how this window starts the daemon when none runs:
	// the command for the socket path and the idle time of the settings (daemonIdleSeconds).
	DaemonCommand func(sock string, idle time.Duration) *exec.Cmd
}

// DefaultDaemonIdle is how long a shared-server daemon stays after its last window left when the
// settings do not say (a window reload keeps its servers).
const DefaultDaemonIdle = 60 * time.Second

// Settings are the person's settings (initializationOptions, settings.switchboard, CLI flags).
type Settings struct {
	ConfigFiles     []string
	Servers         map[string]json.RawMessage // editor-given servers (mcp.json entries)
	Mode            permissions.Mode
	ApprovalTimeout time.Duration // 0 = permissions.DefaultTimeout
	// DaemonIdle is how long a shared-server daemon this window starts stays after its last
	// window left (when DaemonIdleSet; else DefaultDaemonIdle).
	DaemonIdle    time.Duration
	DaemonIdleSet bool
	Provider      *session.ProviderConfig
	// ToolSearch is tool search for large tool sets (zero: on above 40 tools, nothing pinned).
	ToolSearch session.ToolSearchOptions
	Pinning    string // enforce ("" too), warn or off (pins.go)
}

// App is the application: it owns the allowlist, trust store, audit log, gate, MCP registry,
// agent sessions, settings, configuration and trust policy, and the pending questions. Front ends
// (the language server, `switchboard call`) call its operations and implement [UI]. Safe for
// concurrent use.
type App struct {
	opts      Options
	log       *slog.Logger
	getenv    func(string) string
	lookupEnv func(string) (string, bool)
	ui        UI

	baseCtx   context.Context // parent of background work; cancelled by Close
	cancel    context.CancelFunc
	gone      chan struct{} // closed by Close: nobody can answer any more
	closeOnce sync.Once
	startOnce sync.Once
	// started is set by Start (or StartAndWait) before the first configuration is loaded;
	// firstApplied is closed once that load is applied to the registry (connectServers), so a call
	// that comes earlier can wait for its server to exist.
	started      atomic.Bool
	firstApplied chan struct{}
	appliedOnce  sync.Once
	// bg counts the application's own goroutines (watchers, the first connect, trust and sign-in
	// questions; started with goBg): Close waits for them, so nothing writes a file after Close
	// returns. bgMu orders a start against Close's wait.
	bgMu     sync.Mutex
	bgClosed bool
	bg       sync.WaitGroup
	shutdown atomic.Bool // Close came from a shutdown, not a lost front end
	quiet    atomic.Bool // the session's log is dropped (while New builds it)

	events    *eventsFile
	allow     *permissions.Allowlist
	trust     *permissions.TrustStore
	audit     *permissions.AuditLog
	gate      *permissions.Gate
	registry  *mcpbridge.Registry
	sessions  *session.Manager
	questions *Questions
	pinStore  *permissions.PinStore
	pins      pinState
	policyW   *policy.Watcher
	// policyWarned: the configured mode's fallback from a mode the policy disables was told once.
	policyWarned atomic.Bool
	// blockedMu guards blockedAudit: the block last written to the audit log per server (policy.go).
	blockedMu    sync.Mutex
	blockedAudit map[string]mcpbridge.Blocked

	stateMu     sync.Mutex // guards settings, folders, provider, providerSet, sampleOK
	settings    Settings
	folders     []string
	provider    session.ProviderConfig
	providerSet bool            // ApplySettings gave the session its provider once
	sampleOK    map[string]bool // definitions (fingerprints) the person allowed to use the model for this session

	cfgs    configState
	servers serverStates
	signIns signIns      // signin.go
	inputs  inputs       // inputs.go
	tasks   taskBook     // tasks.go
	views   views        // views.go
	browser browserViews // viewbrowser.go
}

var _ permissions.Prompter = (*App)(nil)

// New builds the application. It opens the allowlist and trust store (errors are fatal) and the
// audit log (a failure is a warning). Nothing starts until Start.
func New(opts Options, ui UI) (*App, error) {
	a := &App{
		opts: opts,
		ui:   ui,
		log:  opts.Logger,
		gone: make(chan struct{}),

		firstApplied: make(chan struct{}),
		sampleOK:     map[string]bool{},
		servers:      serverStates{states: map[string]string{}, trustAsked: map[string]bool{}},
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	a.questions = newQuestions(now, ui.Resolved)
	a.getenv, a.lookupEnv = wrapEnv(opts)
	tokens := a.tokenStore(opts.Tokens)              // signin.go
	a.lookupEnv = a.inputs.wrap(tokens, a.lookupEnv) // inputs.go: ${input:ID} values
	a.baseCtx, a.cancel = context.WithCancel(context.Background())

	var err error
	if a.events, err = openEvents(a.getenv(EventsEnv)); err != nil {
		a.log.Warn(fmt.Sprintf("host: events file: %v", err))
	}
	path := opts.AllowlistPath
	if path == "" {
		path = permissions.DefaultAllowlistPath()
	}
	if a.allow, err = permissions.OpenAllowlist(path); err != nil {
		return nil, fmt.Errorf("host: allowlist: %w", err)
	}
	if path = opts.TrustPath; path == "" {
		path = permissions.DefaultTrustPath()
	}
	if a.trust, err = permissions.OpenTrustStore(path); err != nil {
		return nil, fmt.Errorf("host: trust store: %w", err)
	}
	if path = opts.PinsPath; path == "" {
		path = permissions.DefaultPinsPath()
	}
	eras := mcpbridge.OpenEraStore(filepath.Join(filepath.Dir(path), mcpbridge.DefaultErasFile))                      // beside the pins
	a.tasks = taskBook{path: filepath.Join(filepath.Dir(path), TasksFile), log: func(msg string) { a.log.Warn(msg) }} // tasks.go
	if a.pinStore, err = permissions.OpenPinStore(path); err != nil {
		return nil, fmt.Errorf("host: pin file: %w", err)
	}
	if err := a.pinStore.Err(); err != nil {
		a.log.Warn(fmt.Sprintf("host: pin file: %v (no MCP tool counts as approved until it is fixed)", err))
	}
	if !opts.NoAudit {
		if path = opts.AuditPath; path == "" {
			path = permissions.DefaultAuditPath()
		}
		if a.audit, err = permissions.OpenAuditLog(path, 0); err != nil {
			a.log.Warn(fmt.Sprintf("host: audit log %s: %v (continuing without)", path, err))
			a.audit = nil
		}
	}
	a.policyW = policy.NewWatcher(policy.Options{Paths: opts.Policy})
	if err := a.policyW.Policy().Broken(); err != nil {
		a.log.Error(fmt.Sprintf("host: the organisation's policy is broken, every MCP server is blocked: %v", err))
	}
	a.gate = permissions.NewGate(permissions.GateOptions{
		Allowlist: a.allow,
		Trust:     a.trust, // grants for workspace-defined servers are bound to their definition
		Prompter:  a,
		Audit:     a.audit,
		Logger:    a.log,
		Pins:      a.pinVerdict,
		Policy:    a.policyVerdict,
	})
	a.registry = mcpbridge.NewRegistry(mcpbridge.Options{
		Logger:   a.log,
		OnChange: func(s []mcpbridge.ServerStatus) { a.serversChanged(s); a.pinsChanged() },
		Trusted:  a.trusted,
		Admit:    a.admit,
		Load: func() ([]config.ServerConfig, []error) {
			cfgs, _ := a.loadConfig() // loadConfig reports the errors itself
			return cfgs, nil
		},
		BaseEnv: opts.BaseEnv,
		Getenv:  a.lookupEnv,
		Roots:   a.roots, // MCP roots are the workspace folders
		Elicit:  a.elicit,
		Sample:  a.sample,
		Tokens:  tokens,
		Eras:    eras,
		Broker:  a.brokerConfig(opts),

		OnResource: a.resourceEvent, // resources.go
	})
	a.provider = a.providerConfig(nil)
	// The provider is not final until Start applies the settings (which may name another): the
	// session's judgement of this one is not told to the person; Start's is.
	a.quiet.Store(true)
	a.sessions = session.NewManager(session.Options{
		Tools:     progressTools{a.registry, a},
		Gate:      a.gate,
		Workspace: workspace{a},
		Provider:  a.provider,
		Logger:    slog.New(quietHandler{a.log.Handler(), &a.quiet}),
		Warn:      func(msg string) { a.ui.Notify(LevelWarning, msg) },
		Getenv:    a.getenv,
		Forgotten: a.conversationEnded, // viewmessage.go
	})
	a.quiet.Store(false)
	return a, nil
}

// quietHandler drops records while quiet is set (the session's start-up, before the settings).
type quietHandler struct {
	slog.Handler
	quiet *atomic.Bool
}

func (h quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return !h.quiet.Load() && h.Handler.Enabled(ctx, l)
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(as), h.quiet}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name), h.quiet}
}

// Start applies the settings for the workspace folders and connects the MCP servers in the
// background; once. warns are the settings' problems, logged as warnings.
func (a *App) Start(folders []string, s Settings, warns []string) {
	a.startOnce.Do(func() {
		a.started.Store(true)
		a.stateMu.Lock()
		a.folders = folders
		a.stateMu.Unlock()
		a.ApplySettings(s, warns)
		a.policyNotice(a.Policy()) // a broken policy: the person hears it once, at the start
		// The servers' start is the one thing on the first call's path, so it goes first and the
		// watchers' set-up (inotify, the policy's sources) comes once the first servers' start is
		// under way instead of beside it: on two cores the watchers ran ahead of it and held the
		// first server's spawn back about 2 ms (cmd/sbbench first call, uprobes on the host).
		// connectServers(true) starts them (see there).
		a.goBg(func() { a.connectServers(true) })
		a.goBg(a.releaseStartMemory)
		a.goBg(a.resumeTasks) // tasks.go: tasks a host that stopped left running
	})
}

// releaseStartMemory returns to the system, once the first servers have settled, what starting
// them took and no longer holds (configs, handshakes, tool lists): the host then idles for hours
// with its smallest footprint instead of waiting for the runtime's scavenger (30 servers: 0.2–0.5
// MB less RSS in alternating runs). One forced collection, never in a call's path: it stops the
// world for 0.5–1 ms (more with a large result being decoded), so it waits for the servers' start
// to end and then for the first moment, releaseStartDelay or more later, when no tool call is in
// flight. (It used to run at once, before the servers had even been applied.) Then it tells the
// front end the start is over (Options.Settled).
func (a *App) releaseStartMemory() {
	select { // the servers are in the registry (else it is idle at once, before they start)
	case <-a.firstApplied:
	case <-a.baseCtx.Done():
		return
	}
	t := time.NewTimer(releaseStartDelay)
	defer t.Stop()
	for {
		if a.registry.WaitIdle(a.baseCtx) != nil {
			return // closing
		}
		t.Reset(releaseStartDelay)
		select {
		case <-t.C:
		case <-a.baseCtx.Done():
			return
		}
		if a.registry.Calls() == 0 {
			debug.FreeOSMemory()
			if a.opts.Settled != nil {
				a.opts.Settled()
			}
			return
		}
	}
}

// releaseStartDelay is how long after the first servers' start (and then between checks for a
// moment without a tool call in flight) the host waits to return its start-up memory
// (releaseStartMemory).
const releaseStartDelay = time.Second

// StartAndWait is Start for a one-shot front end: it returns once every server's start has ended
// (or ctx ended) and the UI has been told about it.
func (a *App) StartAndWait(ctx context.Context, folders []string, s Settings) {
	a.startOnce.Do(func() {
		a.started.Store(true)
		a.stateMu.Lock()
		a.folders = folders
		a.stateMu.Unlock()
		a.ApplySettings(s, nil)
		a.connectServers(false)
	})
	a.registry.WaitIdle(ctx) // ignore error: a cancelled wait leaves servers starting; calls report it
	a.serversChanged(nil)    // the notices about the settled servers, now (the registry's may lag)
}

// Shutdown ends turns, pending questions (as by disconnect; the gate records "shutdown") and MCP
// servers; the front end's shutdown request.
func (a *App) Shutdown() {
	a.shutdown.Store(true)
	a.Close()
}

// Close ends everything the application started: pending questions, turns, MCP servers (process
// groups killed), the audit log. Safe to call more than once.
func (a *App) Close() {
	a.closeOnce.Do(func() {
		close(a.gone)
		a.questions.CancelAll(ByDisconnect)
		a.closeBrowserViews() // viewbrowser.go: views in the browser stop with the host
		a.sessions.Close()
		if err := a.registry.Close(); err != nil {
			a.log.Debug("host: closing MCP servers", "error", err)
		}
		a.cancel()
		a.bgMu.Lock()
		a.bgClosed = true
		a.bgMu.Unlock()
		// Bounded: a goroutine stuck on the front end (a prompt the editor never answers while it
		// goes away) must not keep the host from exiting.
		waited := make(chan struct{})
		go func() { a.bg.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(closeWait):
			a.log.Debug("host: background work still running at close")
		}
		if a.audit != nil {
			a.audit.Close() // ignore error
		}
	})
}

// closeWait bounds how long Close waits for the application's own goroutines.
const closeWait = 2 * time.Second

// goBg runs f on a goroutine that Close waits for; after Close it does nothing and reports false.
func (a *App) goBg(f func()) bool {
	a.bgMu.Lock()
	defer a.bgMu.Unlock()
	if !a.bgClosed {
		a.bg.Go(f)
	}
	return !a.bgClosed
}

// CloseEvents closes the events file (after the front end recorded its last event).
func (a *App) CloseEvents() { a.events.close() }

// Record writes one line to the events file (EventsEnv), when there is one.
func (a *App) Record(kind string, fields map[string]any) { a.events.record(kind, fields) }

// Recording reports whether Record keeps anything.
func (a *App) Recording() bool { return a.events != nil }

// Folders returns the workspace folders.
func (a *App) Folders() []string {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	return append([]string(nil), a.folders...)
}

func (a *App) roots() []string {
	if f := a.Folders(); len(f) > 0 {
		return f
	}
	return a.opts.Roots
}

// SetFolders replaces the workspace folders and reapplies the configuration.
func (a *App) SetFolders(folders []string) {
	a.stateMu.Lock()
	a.folders = folders
	a.stateMu.Unlock()
	a.registry.RootsChanged()
	a.reapply()
}

// Mode is the configured permission mode.
func (a *App) Mode() permissions.Mode {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	return a.settings.Mode
}

// ApplySettings makes s current (mode, approval timeout, provider, tool search) and logs warns. Servers are
// applied by the next configuration load (Reapply).
func (a *App) ApplySettings(s Settings, warns []string) {
	a.stateMu.Lock()
	a.settings = s
	a.stateMu.Unlock()
	timeout := s.ApprovalTimeout
	if timeout <= 0 {
		timeout = permissions.DefaultTimeout
	}
	a.gate.SetTimeout(timeout)
	a.sessions.SetToolSearch(s.ToolSearch)
	a.stateMu.Lock()
	first := !a.providerSet
	a.providerSet = true
	a.stateMu.Unlock()
	if p := a.providerConfig(s.Provider); first || p != a.currentProvider() {
		a.stateMu.Lock()
		a.provider = p
		a.stateMu.Unlock()
		a.sessions.SetProvider(p) // the first time with the settings: its warning is a true one
	}
	for _, w := range warns {
		a.log.Warn("host: " + w)
	}
}

func (a *App) currentProvider() session.ProviderConfig {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	return a.provider
}

func (a *App) currentSettings() Settings {
	a.stateMu.Lock()
	defer a.stateMu.Unlock()
	return a.settings
}

// providerConfig is the provider of config.json with the settings' provider on top (editor
// settings win field by field).
func (a *App) providerConfig(over *session.ProviderConfig) session.ProviderConfig {
	path := a.opts.ProviderConfigFile
	if path == "" {
		path = session.DefaultConfigPath()
	}
	cfg, err := session.LoadConfigFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		a.log.Warn(fmt.Sprintf("host: provider config: %v", err))
	}
	if over != nil {
		cfg = cfg.Merge(*over)
	}
	return cfg
}

func (a *App) allowlistWatch() {
	if err := a.allow.Watch(a.baseCtx, func() {
		if err := a.allow.Err(); err != nil {
			a.log.Warn(fmt.Sprintf("host: allowlist %s: %v (it grants nothing until fixed)", a.allow.Path(), err))
		}
	}); err != nil && a.baseCtx.Err() == nil {
		a.log.Warn(fmt.Sprintf("host: watching the allowlist: %v", err))
	}
}

// trustWatch follows the trust file: a decision another window (or a command) made about a
// workspace server's definition holds here at once. The registry asks the trust anew, so a server
// no longer trusted stops (its calls and tasks end with it, its grants count for nothing while it
// is not running) and one trusted elsewhere starts.
func (a *App) trustWatch(since string) {
	if err := a.trust.Watch(a.baseCtx, since, func() {
		a.log.Info("host: workspace trust changed", "file", a.trust.Path())
		a.reapply()
	}, nil); err != nil && a.baseCtx.Err() == nil {
		a.log.Warn(fmt.Sprintf("host: watching the trust file: %v (a decision made in another window is seen here after a restart)", err))
	}
}

// connectServers loads the configuration and applies it, then reapplies if the settings changed
// meanwhile.
//
// With watch it also starts the host's watchers: the configuration files' (armConfigWatch) is
// armed before they are read and followed once they are applied; the allowlist's, the policy's
// and the trust file's start once they are applied, before the UI hears the servers are starting (the LSP
// front end's ServersStarting waits for them, up to their startup timeout), and each reloads
// once armed, so an edit made meanwhile is seen then.
func (a *App) connectServers(watch bool) {
	var follow, stop func()
	var trustSeen string
	if watch {
		follow, stop = a.armConfigWatch()
		trustSeen = a.trust.Snapshot() // before the registry first asks it (trustWatch)
	}
	a.cfgs.applyMu.Lock()
	cfgs, _ := a.loadConfig()
	if a.baseCtx.Err() == nil {
		a.registry.Apply(a.baseCtx, cfgs)
	}
	a.cfgs.loaded = true
	a.cfgs.applyMu.Unlock()
	if follow != nil && !a.goBg(follow) {
		stop() // the host closed meanwhile
	}
	if watch {
		a.goBg(a.allowlistWatch)
		a.goBg(a.policyWatch)
		a.goBg(func() { a.trustWatch(trustSeen) })
	}
	a.appliedOnce.Do(func() { close(a.firstApplied) })
	if a.cfgs.takeDirty() {
		a.Reapply() // settings changed while the first load ran
		return
	}
	a.ui.ServersStarting()
}

// Reapply re-reads the configuration and applies it (servers added, removed, restarted). While
// the first load is still running it only marks the settings dirty: connectServers then reapplies.
func (a *App) Reapply() { a.reapply() }

func (a *App) reapply() {
	a.cfgs.setDirty()
	a.cfgs.applyMu.Lock()
	if !a.cfgs.loaded {
		a.cfgs.applyMu.Unlock()
		return // connectServers sees dirty and calls us again
	}
	a.cfgs.takeDirty()
	old := map[string]config.ServerConfig{}
	for _, c := range a.cfgs.all() {
		old[c.Name] = c
	}
	cfgs, _ := a.loadConfig()
	var changed []string
	for _, c := range cfgs {
		if prev, ok := old[c.Name]; ok && !reflect.DeepEqual(prev, c) {
			changed = append(changed, c.Name) // Apply restarts it: a failure again is a new failure
		}
	}
	if len(changed) > 0 {
		a.expectRestart(changed...)
	}
	a.registry.Apply(a.baseCtx, cfgs)
	a.cfgs.applyMu.Unlock()
	go a.ui.ServersStarting()
}

// workspace is session.Workspace: the folders are the application's, buffers and edits the UI's.
type workspace struct{ a *App }

func (w workspace) Folders() []string                 { return w.a.Folders() }
func (w workspace) Buffer(path string) (string, bool) { return w.a.ui.Buffer(filepath.Clean(path)) }
func (w workspace) ApplyEdit(ctx context.Context, path, newText string) (bool, error) {
	return w.a.ui.ApplyEdit(ctx, filepath.Clean(path), newText)
}

func wrapEnv(opts Options) (func(string) string, func(string) (string, bool)) {
	env, lookup := opts.Env, opts.LookupEnv
	switch {
	case env == nil && lookup == nil:
		return os.Getenv, os.LookupEnv
	case lookup == nil:
		lookup = func(k string) (string, bool) {
			v := env(k)
			return v, v != ""
		}
	case env == nil:
		env = func(k string) string {
			v, _ := lookup(k)
			return v
		}
	}
	return env, lookup
}

// brokerConfig is opts.Broker with a Start that starts the daemon with this window's idle setting
// at the moment it is needed (settings arrive after New).
func (a *App) brokerConfig(opts Options) *broker.Config {
	if opts.Broker == nil || opts.DaemonCommand == nil {
		return opts.Broker
	}
	bc := *opts.Broker
	bc.Start = func(sock string) *exec.Cmd {
		idle := DefaultDaemonIdle
		if s := a.currentSettings(); s.DaemonIdleSet {
			idle = s.DaemonIdle
		}
		return opts.DaemonCommand(sock, idle)
	}
	return &bc
}
