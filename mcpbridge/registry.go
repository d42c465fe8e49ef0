package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/oauth"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

// Options configure a Registry. The zero value works.
type Options struct {
	Logger   *slog.Logger
	OnChange func(servers []ServerStatus)       // any state or tool-list change; called off internal locks, never concurrently
	Trusted  func(cfg config.ServerConfig) bool // consulted for cfg.WorkspaceOnly servers; nil = untrusted
	// Admit is the organisation's policy: it is asked about every server with what it would run
	// (variables resolved; as written when they cannot be) when the servers are applied, and
	// again just before the server starts. A non-nil answer blocks it (StateBlocked): it never
	// starts, whatever file defined it. Apply again after the policy changed. nil = admit all.
	Admit   func(resolved config.ServerConfig) *Blocked
	Load    func() ([]config.ServerConfig, []error) // used by Reconnect to re-read config; nil = keep current
	BaseEnv []string                                // explicit child env base; nil = stdio.DefaultBaseEnv(os.Environ())
	// Getenv resolves a config's ${env:X} references when its server starts (nil = os.LookupEnv);
	// what it returns is also hidden from statuses and logs (config.ServerConfig.Redact).
	Getenv func(string) (string, bool)
	// Roots returns the folders servers may work in (MCP roots: the editor's workspace folders),
	// as absolute paths; nil = no roots capability. Call RootsChanged when they change.
	Roots func() []string
	// SandboxProtected are folders a sandboxed server never opens beyond Switchboard's own
	// configuration and state (which are always protected): the host adds what it keeps elsewhere.
	SandboxProtected []string
	// Elicit asks the user for what a server requests (MCP elicitation, form and url modes); nil =
	// no elicitation capability. It runs on its own goroutine; ctx ends with the server's request.
	Elicit func(ctx context.Context, e Elicitation) ElicitResult
	// Sample runs a server's sampling/createMessage on the user's model (asking the user first is
	// its business); nil = no sampling capability. Return ErrSampleRejected when the user said no.
	Sample func(ctx context.Context, req SampleRequest) (SampleResult, error)
	// OnResource receives a server's news about its resources and prompts (list changed, a
	// subscribed resource updated), each on a goroutine of its own; nil = none.
	OnResource func(ResourceEvent)
	// PingInterval is how often HTTP and SSE servers are pinged to notice one that went away
	// (0 = DefaultPingInterval, < 0 = never). A stdio server's death is seen at once without it.
	PingInterval time.Duration
	// PingTimeout bounds each ping (0 = DefaultPingTimeout).
	PingTimeout time.Duration
	// Eras remembers the protocol era each server definition answered in, so that the next start
	// goes straight to it (era.go); nil = found again at every start.
	Eras *EraStore
	// Tokens keeps the OAuth sign-ins (SignIn). With it, an http or sse server without an
	// Authorization header in its config sends its signed-in token, and one that answers 401
	// is StateNeedsAuth instead of failed. nil = no sign-in: a 401 fails the server.
	Tokens tokenstore.Store
	// Broker, when set, reaches the shared-server daemon: a stdio server whose entry says
	// "shared" attaches to the daemon's copy (starting the daemon if Broker.Start is set), and
	// runs in the window when that fails. nil = every server runs in the window.
	Broker *broker.Config
}

// Defaults of Options.PingInterval and PingTimeout.
const (
	DefaultPingInterval = 30 * time.Second
	DefaultPingTimeout  = 10 * time.Second
)

// Registry connects to every configured server and turns their tools into one name space.
// It is safe for concurrent use.
type Registry struct {
	log      *slog.Logger
	opts     Options
	baseEnv  []string
	dial     dialFunc      // seam: tests dial in-process servers
	debounce time.Duration // list_changed quiet period before a re-list

	life   context.Context // children and HTTP listeners live on it until Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // attempts, watchers and background closes

	calls atomic.Int64 // tool calls in flight (Calls)

	notify       chan struct{} // OnChange wanted (capacity 1: coalesces)
	notifierDone chan struct{}

	// snap is the current tool snapshot, replaced (never modified) by rebuildLocked: calls and
	// tool lists read it without mu.
	snap atomic.Pointer[ToolSet]

	// mu guards everything below.
	mu      sync.Mutex
	closed  bool
	servers map[string]*entry
}

// entry is one configured server and its current connection attempt.
type entry struct {
	cfg      config.ServerConfig
	identity string

	gen        uint64 // bumped by every stop/start; stale goroutines compare it
	state      string
	err        string
	stderrTail string
	conn       *conn
	tools      []wireTool // after enabledTools/disabledTools
	registered int        // how many of tools are registered (rebuildLocked)
	collision  string     // tool-name collision report, shown as the status error
	cancel     context.CancelFunc
	done       chan struct{} // closed when the current attempt has ended
	doneClosed bool
	relists    int      // tools/list re-runs after list_changed (tests)
	wantScope  string   // scopes the server's last 403 insufficient_scope named; the next sign-in asks for them too
	blocked    *Blocked // the policy's answer at the last apply
	reattach   int      // automatic attaches after a shared server's daemon went away (shared.go)
}

// NewRegistry returns an empty registry; Apply gives it servers.
func NewRegistry(opts Options) *Registry {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	base := opts.BaseEnv
	if base == nil {
		base = stdio.DefaultBaseEnv(os.Environ())
	}
	life, cancel := context.WithCancel(context.Background())
	r := &Registry{
		log: log, opts: opts, baseEnv: base, dial: dialer(stdio.DefaultMaxFrame), debounce: 100 * time.Millisecond,
		life: life, cancel: cancel,
		notify: make(chan struct{}, 1), notifierDone: make(chan struct{}),
		servers: map[string]*entry{},
	}
	r.snap.Store(emptyToolSet)
	go r.notifier()
	return r
}

func (r *Registry) notifier() {
	defer close(r.notifierDone)
	for {
		select {
		case <-r.notify:
			if r.opts.OnChange != nil {
				r.opts.OnChange(r.Servers())
			}
		case <-r.life.Done():
			return
		}
	}
}

func (r *Registry) changed() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// admit asks Options.Admit about cfg, resolved if it can be (a template cannot dodge a rule).
func (r *Registry) admit(cfg config.ServerConfig) *Blocked {
	if r.opts.Admit == nil {
		return nil
	}
	if resolved, err := cfg.Resolve(r.opts.Getenv); err == nil {
		cfg = resolved
	}
	return r.opts.Admit(cfg)
}

func sameBlock(a, b *Blocked) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func (r *Registry) trusted(cfg config.ServerConfig) bool {
	return !cfg.WorkspaceOnly || (r.opts.Trusted != nil && r.opts.Trusted(cfg))
}

// Apply makes cfgs the configured servers without waiting for any of them: new servers start,
// removed ones stop, changed ones restart, and a workspace server whose trust changed starts or
// stops. ctx only bounds the call itself; children live until Close.
func (r *Registry) Apply(ctx context.Context, cfgs []config.ServerConfig) {
	r.apply(cfgs, false)
}

func (r *Registry) apply(cfgs []config.ServerConfig, restartAll bool) {
	trust := make(map[string]bool, len(cfgs))
	blocked := make(map[string]*Blocked, len(cfgs))
	for _, c := range cfgs {
		trust[c.Name] = r.trusted(c) // off the lock: the callback may do I/O
		blocked[c.Name] = r.admit(c)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	want := make(map[string]bool, len(cfgs))
	for _, c := range cfgs {
		want[c.Name] = true
	}
	for name, e := range r.servers {
		if !want[name] {
			r.stopLocked(e)
			delete(r.servers, name)
		}
	}
	starting := false
	for _, c := range cfgs {
		e := r.servers[c.Name]
		id := c.Identity()
		switch {
		case e == nil:
			e = &entry{cfg: c, identity: id, blocked: blocked[c.Name]}
			r.servers[c.Name] = e
			r.restartLocked(e, trust[c.Name])
		case e.identity != id || restartAll:
			e.cfg, e.identity, e.blocked = c, id, blocked[c.Name]
			r.restartLocked(e, trust[c.Name])
		case !sameBlock(e.blocked, blocked[c.Name]):
			e.blocked = blocked[c.Name]
			r.restartLocked(e, trust[c.Name])
		case e.state == StateUntrusted && trust[c.Name],
			e.state != StateUntrusted && e.state != StateDisabled && !trust[c.Name]:
			r.restartLocked(e, trust[c.Name])
		}
		starting = starting || e.state == StateStarting
	}
	r.rebuildLocked()
	r.mu.Unlock()
	if starting {
		// The connections restartLocked started are goroutines queued behind this one: offer
		// them the thread now (a yield: no promise they reach their spawn first) before the
		// listeners hear of the change and the caller goes on (a host's first start: the
		// watchers' set-up). The first server's spawn came about 0.7 ms sooner (uprobes on the
		// host, cmd/sbbench first call).
		runtime.Gosched()
	}
	r.changed()
}

// stopLocked ends e's attempt or connection (closing it in the background).
func (r *Registry) stopLocked(e *entry) {
	e.gen++
	if e.cancel != nil {
		e.cancel()
		e.cancel = nil
	}
	if c := e.conn; c != nil {
		e.conn = nil
		r.wg.Go(c.close)
	}
	e.tools, e.collision = nil, ""
	e.state = StateStopped
	r.finishLocked(e)
}

// finishLocked closes the done channel of e's current attempt.
func (r *Registry) finishLocked(e *entry) {
	if e.done != nil && !e.doneClosed {
		close(e.done)
		e.doneClosed = true
	}
}

// restartLocked stops e and starts it again unless it is disabled or untrusted.
func (r *Registry) restartLocked(e *entry, trusted bool) {
	r.stopLocked(e)
	e.err, e.stderrTail = "", ""
	e.done, e.doneClosed = make(chan struct{}), false
	switch {
	case e.cfg.Disabled:
		e.state = StateDisabled
		r.finishLocked(e)
		return
	case e.blocked != nil:
		e.state, e.err = StateBlocked, e.blocked.Message
		r.finishLocked(e)
		return
	case !trusted:
		e.state = StateUntrusted
		r.finishLocked(e)
		return
	}
	if err := config.ValidServerName(e.cfg.Name); err != nil { // configs not from config.LoadConfig: names must still decode to one server
		e.state, e.err = StateFailed, err.Error()
		r.finishLocked(e)
		return
	}
	e.state = StateStarting
	gen, cfg := e.gen, e.cfg
	run, cancel := context.WithCancel(r.life)
	e.cancel = cancel
	r.wg.Go(func() { r.connect(run, e, gen, cfg) })
}

// connect runs one startup attempt, bounded by the server's startup timeout.
func (r *Registry) connect(run context.Context, e *entry, gen uint64, cfg config.ServerConfig) {
	// Every line about this server, mcp-go's own included, is redacted with its values.
	log := slog.New(newRedactHandler(r.log.Handler(), func(s string) string { return cfg.Redact(s, r.opts.Getenv) })).With("server", cfg.Name)
	ctx, cancel := context.WithTimeout(run, cfg.StartupTimeout)
	defer cancel()
	var c *conn
	var tools []wireTool
	var auth *oauth.Bearer
	plan, meta := r.planFor(cfg), r.clientMeta() // era.go
	resolved, err := cfg.Resolve(r.opts.Getenv)
	if err == nil && r.opts.Admit != nil {
		// Asked again on what runs now: the environment may have changed since the apply.
		if b := r.opts.Admit(resolved); b != nil {
			r.mu.Lock()
			if e.gen == gen {
				e.blocked = b
				e.state, e.err = StateBlocked, b.Message
				r.finishLocked(e)
			}
			r.mu.Unlock()
			log.Warn("mcp server blocked by the organisation's policy", "rule", b.Rule)
			r.changed()
			return
		}
	}
	ranFromRoot := false // a user's package runner moved out of the open folder (RunDir)
	rootWhy := ""        // why it runs from / (set with its Cwd below)
	if err == nil && resolved.Cwd == "" && resolved.Folder != "" && RunDir(resolved) == resolved.Folder {
		resolved.Cwd = resolved.Folder // a workspace file's entry runs in the folder it was trusted in
	}
	if err == nil && resolved.Cwd == "" {
		resolved.Cwd = RunDir(resolved)
		sharedRoot := resolved.Cwd == "" && sharedEntry(resolved)
		switch {
		case sharedRoot:
			resolved.Cwd = string(filepath.Separator) // where the daemon runs it (sharedRequest)
			rootWhy = "as a shared server does in Switchboard's daemon, for all your windows"
		case resolved.Registry != nil:
			rootWhy = "as a registry's package does (so that a repository cannot choose its package)"
		default:
			rootWhy = "as your own package-runner servers do (so that a repository cannot choose their package)"
		}
		ranFromRoot = resolved.Registry == nil && resolved.Cwd != ""
		// Run from /, `npx -y @modelcontextprotocol/server-filesystem .` would be given the whole
		// disk where the person meant the open folder: refused before it runs. A registry's launch
		// too: an entry's "registry" is only a claim, which a workspace's entry can make, and the
		// person who trusted its "." saw nothing that said it would not run in the folder.
		what, rel := "", ""
		if cmd := resolved.Command; sharedRoot && !filepath.IsAbs(cmd) && strings.ContainsAny(cmd, `/\`) {
			// A shared server's ./bin/server: from /, another program than the one in the
			// folder the person was in.
			what, rel = fmt.Sprintf("command %q", cmd), cmd
		} else if arg, ok := relativeArg(resolved.Args); ok {
			what, rel = fmt.Sprintf("argument %q", arg), relativeValue(arg)
		} else if key, val, ok := relativeEnv(resolved.Env); ok {
			// The same path in the environment (ALLOWED_DIR=., for servers that read their folder
			// from a variable).
			what, rel = fmt.Sprintf("%s=%q", key, val), val
		}
		if what != "" && resolved.Cwd != "" {
			named := filepath.Join(resolved.Cwd, rel)
			if driveRelative(rel) {
				named = "a folder from the root of drive " + strings.ToUpper(rel[:2])
			}
			err = fmt.Errorf(`%s is a relative path, and this server runs from %s, not the open folder, %s, where it would name %s: write the folder's absolute path or ${workspaceFolder}, or give the entry a "cwd"`,
				what, resolved.Cwd, rootWhy, named)
			ranFromRoot = false // the error says it already
		}
	}
	if err == nil {
		env := stdio.ChildEnv(r.baseEnv, resolved.Env)
		auth = r.bearerFor(resolved)
		d := r.sharedDial(r.dial, resolved, env) // shared.go
		if auth != nil {
			d = func(cfg config.ServerConfig, env []string, log *slog.Logger) (transport.Interface, error) {
				return dial(cfg, env, stdio.DefaultMaxFrame, auth, log)
			}
		}
		if resolved.Sandbox != nil && resolved.Transport == config.TransportStdio {
			d = r.sandboxed(d, resolved) // sandbox.go
		}
		c, tools, err = dialConn(ctx, run, d, resolved, env, r.clientOptions(cfg), plan, func(c *conn) {
			c.meta, c.input = meta, r.inputHandlers(cfg.Name) // era.go, mrtr.go
		}, r.opts.OnResource, log)
		if err == nil {
			r.learnt(cfg, plan, c.era)
		}
		if c != nil {
			c.written, c.auth = cfg, auth
		}
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && run.Err() == nil {
			err = fmt.Errorf("startup timed out after %s", cfg.StartupTimeout)
		}
		var tail string
		if c != nil {
			err = c.deathReason(err)
			tail = c.stderrTail()
			r.wg.Go(func() {
				c.close()
				// The tail may grow while the child dies; keep the fuller one.
				if t := c.stderrTail(); len(t) > len(tail) {
					r.mu.Lock()
					if e.gen == gen {
						e.stderrTail = t
					}
					r.mu.Unlock()
					r.changed()
				}
			})
		}
		r.mu.Lock()
		if e.gen != gen {
			r.mu.Unlock()
			return
		}
		e.state, e.err, e.stderrTail = StateFailed, err.Error(), tail
		if ranFromRoot {
			// The person may have relied on the open folder (python -m of a module there, a
			// relative argument): say why it was not its folder.
			e.err += fmt.Sprintf(`; it ran from %s, not the open folder, %s: give its entry a "cwd" to run it in a folder`, resolved.Cwd, rootWhy)
		}
		why := auth.NeedsAuth()
		if why != "" {
			e.state, e.err = StateNeedsAuth, why
		}
		r.finishLocked(e)
		r.mu.Unlock()
		if why != "" {
			log.Info("mcp server needs sign-in", "reason", why)
			r.changed()
			return
		}
		log.Warn("mcp server failed to start", "err", cfg.Redact(err.Error(), r.opts.Getenv), "stderr", cfg.Redact(tail, r.opts.Getenv))
		r.changed()
		return
	}
	r.mu.Lock()
	if e.gen != gen {
		r.mu.Unlock()
		c.close()
		return
	}
	e.conn, e.state = c, StateReady
	e.tools = pinTools(cfg, filterTools(cfg, tools))
	r.finishLocked(e)
	r.rebuildLocked()
	r.mu.Unlock()
	log.Info("mcp server ready", "tools", len(tools), "protocol", c.era, "relearnt", c.relearnt)
	r.changed()
	r.wg.Go(func() { r.watch(run, e, gen, c) }) // its death and its tool-list changes (watch.go)
	if c.isModern() {
		r.wg.Go(func() { c.listen(run) }) // listen.go: its list changes
	}
	// A stdio server's death is its process's (watch); an HTTP one's is seen by the pings.
	if c.stdio() == nil {
		r.wg.Go(func() { r.watchHealth(run, c) })
	}
}

// bearerFor is the token source of an http or sse server, unless sign-in is off or the config
// sets its own Authorization header.
func (r *Registry) bearerFor(resolved config.ServerConfig) *oauth.Bearer {
	if r.opts.Tokens == nil || resolved.Transport == config.TransportStdio {
		return nil
	}
	for k := range resolved.Headers {
		if strings.EqualFold(k, "Authorization") {
			return nil
		}
	}
	b := oauth.NewBearer(r.opts.Tokens, resolved.StateKey(), resolved.URL)
	b.Wider = func(scope string) {
		r.mu.Lock()
		if e := r.servers[resolved.Name]; e != nil {
			e.wantScope = scope
		}
		r.mu.Unlock()
	}
	return b
}

// clientOptions are the MCP client's capabilities: roots and elicitation when asked for.
func (r *Registry) clientOptions(cfg config.ServerConfig) []client.ClientOption {
	opts := []client.ClientOption{client.WithProtocolVersion(protocolVersion)}
	if r.opts.Roots != nil {
		opts = append(opts, client.WithRootsHandler(rootsHandler(r.opts.Roots)))
	}
	if r.opts.Sample != nil {
		opts = append(opts, client.WithSamplingHandler(sampleHandler{server: cfg.Name, fn: r.opts.Sample}))
	}
	// MCP Apps (apps.go): the host shows views; servers may offer their UI tools only then.
	caps := mcp.ClientCapabilities{Extensions: map[string]any{AppsExtension: map[string]any{"mimeTypes": []string{AppMIMEType}}}}
	if r.opts.Elicit != nil {
		opts = append(opts, client.WithElicitationHandler(elicitHandler{server: cfg.Name, fn: r.opts.Elicit, tasks: &taskAsks{log: r.log}}))
		caps.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}
	}
	return append(opts, client.WithClientCapabilities(caps))
}

// watchHealth pings an HTTP or SSE server every PingInterval, and at once after a call failed at
// the transport; a ping the transport cannot deliver, or that times out, loses the connection
// (watch marks the server failed with the reason). Calls are still never retried.
func (r *Registry) watchHealth(run context.Context, c *conn) {
	every, timeout := r.opts.PingInterval, r.opts.PingTimeout
	if every == 0 {
		every = DefaultPingInterval
	}
	if timeout <= 0 {
		timeout = DefaultPingTimeout
	}
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-tick:
		case <-c.check:
		case <-c.lost:
			return
		case <-c.closed:
			return
		case <-run.Done():
			return
		}
		ctx, cancel := context.WithTimeout(run, timeout)
		err := c.ping(ctx)
		timedOut := ctx.Err() != nil
		cancel()
		switch {
		case err == nil || run.Err() != nil:
		case timedOut:
			c.lose(fmt.Errorf("server stopped answering: no answer to %s within %s", c.pingMethod(), timeout))
		default:
			c.lose(fmt.Errorf("server unreachable: %w", oauth.PlainHTTPError(err)))
		}
	}
}

// died marks the server failed: its connection c ended on its own (watch saw it).
func (r *Registry) died(e *entry, gen uint64, c *conn) {
	reason := c.deathReason(errors.New("connection lost"))
	tail := c.stderrTail() // waits briefly for the last lines
	r.mu.Lock()
	if e.gen != gen {
		r.mu.Unlock()
		return
	}
	e.gen++ // stale watchers and results stop here
	gen = e.gen
	e.state, e.err, e.conn, e.tools, e.collision = StateFailed, reason.Error(), nil, nil, ""
	if why := c.auth.NeedsAuth(); why != "" {
		e.state, e.err = StateNeedsAuth, why
	}
	// shared.go: a person stopped the shared-server daemon (`switchboard daemon stop`): nothing
	// failed, and the status says so in the daemon's sentence.
	stopped := ""
	if why, ok := stoppedOnPurpose(c); ok {
		e.state, e.err, stopped = StateStopped, why, why
	}
	// shared.go: the daemon ended in good order and said to attach again: the server is starting
	// again, in a new daemon (reattachLater), not failed; if that fails, it fails then.
	moved := daemonMoved(c)
	if moved {
		e.state, e.err = StateStarting, ""
		// Waiters for the start (WaitIdle, WaitStarted) wait for the attach again: the attempt
		// that replaces this one, or whatever ends it (stopLocked), closes this.
		e.done, e.doneClosed = make(chan struct{}), false
	}
	e.stderrTail = tail
	r.rebuildLocked()
	ecfg := e.cfg // e's fields change under mu once it is released (a reconnect)
	// shared.go: the daemon went away, not the server: attach again.
	if daemonGone(c) {
		if moved {
			// An orderly end is no failed attempt: the waits grow for a daemon that goes away
			// without a word, and every daemon restart or logout would otherwise have added one
			// until each move showed the server starting for half a minute
			// (TestSharedDaemonMovesOnEachTime).
			e.reattach = 0
		}
		attempt := e.reattach
		e.reattach++
		r.wg.Go(func() { r.reattachLater(e, gen, attempt) })
	} else if instanceEnded(c) {
		r.wg.Go(func() { r.watchRestart(e, gen, ecfg) })
	}
	r.mu.Unlock()
	switch {
	case stopped != "":
		r.log.Info("shared server stopped with its daemon", "server", ecfg.Name, "why", ecfg.Redact(stopped, r.opts.Getenv))
	case moved:
		r.log.Info("shared server's daemon ended; attaching again", "server", ecfg.Name, "why", ecfg.Redact(reason.Error(), r.opts.Getenv))
	default:
		r.log.Warn("mcp server died", "server", ecfg.Name, "err", ecfg.Redact(reason.Error(), r.opts.Getenv), "stderr", ecfg.Redact(tail, r.opts.Getenv))
	}
	r.changed()
	c.close() // reap the child, end its group
	// The last stderr lines may arrive while the group dies.
	if t := c.stderrTail(); len(t) > len(tail) {
		r.mu.Lock()
		if e.gen == gen {
			e.stderrTail = t
		}
		r.mu.Unlock()
		r.changed()
	}
}

// filterTools applies enabledTools/disabledTools.
func filterTools(cfg config.ServerConfig, tools []wireTool) []wireTool {
	if len(cfg.EnabledTools) == 0 && len(cfg.DisabledTools) == 0 {
		return tools
	}
	out := tools[:0:0]
	for _, t := range tools {
		if len(cfg.EnabledTools) > 0 && !slices.Contains(cfg.EnabledTools, t.Name) {
			continue
		}
		if slices.Contains(cfg.DisabledTools, t.Name) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// rebuildLocked recomputes the registered names from every ready server's tools. Names that
// would be shared by two tools are all replaced by their hashed form (see doc.go), and each
// server involved gets the collision in its status error.
func (r *Registry) rebuildLocked() {
	type claim struct {
		e    *entry
		tool wireTool
	}
	names := make([]string, 0, len(r.servers))
	for n := range r.servers {
		names = append(names, n)
	}
	sort.Strings(names)
	var claims []claim
	reports := map[*entry][]string{}
	for _, n := range names {
		e := r.servers[n]
		if e.state != StateReady {
			continue
		}
		seen := map[string]bool{}
		for _, t := range e.tools {
			if seen[t.Name] {
				reports[e] = append(reports[e], fmt.Sprintf("tool %q is listed twice; the second is ignored", t.Name))
				continue
			}
			seen[t.Name] = true
			claims = append(claims, claim{e, t})
		}
	}
	assigned := make([]string, len(claims))
	hashed := make([]bool, len(claims))
	for i, c := range claims {
		assigned[i] = registeredName(c.e.cfg.Name, c.tool.Name)
	}
	for range 3 { // hashed names can (in theory) collide with plain ones again
		byName := map[string][]int{}
		for i, n := range assigned {
			byName[n] = append(byName[n], i)
		}
		again := false
		for n, idx := range byName {
			if len(idx) < 2 {
				continue
			}
			var who []string
			for _, i := range idx {
				who = append(who, fmt.Sprintf("%q of server %q", claims[i].tool.Name, claims[i].e.cfg.Name))
			}
			for _, i := range idx {
				if hashed[i] {
					continue
				}
				hashed[i], again = true, true
				assigned[i] = hashedName(claims[i].e.cfg.Name, claims[i].tool.Name)
				reports[claims[i].e] = append(reports[claims[i].e], fmt.Sprintf(
					"tool name collision: %s would be shared by tools %s; registered as %s", n, strings.Join(who, " and "), assigned[i]))
			}
		}
		if !again {
			break
		}
	}
	type ref struct {
		tool Tool
		c    *conn
	}
	refs := make([]ref, 0, len(claims))
	taken := make(map[string]bool, len(claims))
	for _, n := range names {
		r.servers[n].registered = 0
	}
	for i, c := range claims {
		if taken[assigned[i]] { // a 32-bit hash collision: drop, reported
			reports[c.e] = append(reports[c.e], fmt.Sprintf("tool %q dropped: name %s is taken", c.tool.Name, assigned[i]))
			continue
		}
		schema := c.tool.InputSchema
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		t := Tool{Name: assigned[i], Server: c.e.cfg.Name, Tool: c.tool.Name, Description: c.tool.Description, InputSchema: schema,
			Canonical: c.tool.canonical, Hash: c.tool.hash, TaskSupport: taskSupportOf(c.tool.Execution), UI: c.tool.ui}
		if len(c.tool.OutputSchema) > 0 && string(c.tool.OutputSchema) != "null" {
			t.OutputSchema = c.tool.OutputSchema
		}
		if c.e.cfg.WorkspaceOnly {
			t.Definition = c.e.cfg.Fingerprint() // grants are bound to this definition (permissions.Request.Definition)
		}
		taken[t.Name] = true
		c.e.registered++
		refs = append(refs, ref{t, c.e.conn})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].tool.Name < refs[j].tool.Name })
	snap := &ToolSet{tools: make([]Tool, len(refs)), conns: make([]*conn, len(refs)), index: make(map[string]int, len(refs))}
	for i, rf := range refs {
		snap.tools[i], snap.conns[i], snap.index[rf.tool.Name] = rf.tool, rf.c, i
	}
	r.snap.Store(snap)
	for _, n := range names {
		e := r.servers[n]
		msg := strings.Join(reports[e], "; ")
		if msg != e.collision && msg != "" {
			r.log.Error("mcp tool names collide", "server", n, "err", msg)
		}
		e.collision = msg
	}
}

// Servers returns every configured server's status, sorted by name.
func (r *Registry) Servers() []ServerStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ServerStatus, 0, len(r.servers))
	for _, e := range r.servers {
		out = append(out, r.statusLocked(e))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (r *Registry) statusLocked(e *entry) ServerStatus {
	s := ServerStatus{
		Name: e.cfg.Name, State: e.state, Transport: e.cfg.Transport, Source: e.cfg.Source,
		Error: e.cfg.Redact(e.err, r.opts.Getenv), StderrTail: e.cfg.Redact(e.stderrTail, r.opts.Getenv), Command: e.cfg.Summary(),
	}
	if e.cfg.Sandbox != nil && e.cfg.Transport == config.TransportStdio {
		s.Sandbox = e.cfg.Sandbox.Describe()
		if e.conn != nil {
			if st := e.conn.stdio(); st != nil {
				for _, b := range st.Blocked() {
					s.Blocked = append(s.Blocked, e.cfg.Redact(b, r.opts.Getenv))
				}
			}
		}
	}
	if e.state == StateBlocked && e.blocked != nil {
		s.Policy = &PolicyRef{Rule: e.blocked.Rule, Source: e.blocked.Source}
	}
	if e.state == StateReady {
		if e.conn != nil {
			s.ProtocolVersion = e.conn.era
			s.Shared = sharedStatus(e.conn) // shared.go
		}
		s.Tools = e.registered
		s.Instructions = e.conn != nil && e.conn.instructions != ""
		s.Error = e.cfg.Redact(e.collision, r.opts.Getenv)
	}
	return s
}

// Tools returns a copy of every registered tool, sorted by Name. Snapshot gives the same
// without copying.
func (r *Registry) Tools() []Tool {
	return slices.Clone(r.snap.Load().All())
}

// Snapshot returns the current tool snapshot in O(1). It does not change: a later change of
// the tools publishes a new one.
func (r *Registry) Snapshot() *ToolSet { return r.snap.Load() }

// Lookup finds a registered tool by its registered name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	return r.snap.Load().Lookup(name)
}

// Instructions returns the instructions of every ready server that sent some, by server name.
func (r *Registry) Instructions() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for n, e := range r.servers {
		if e.state == StateReady && e.conn != nil && e.conn.instructions != "" {
			out[n] = e.conn.instructions
		}
	}
	return out
}

// Call calls a registered tool with the server's call timeout. Every failure (unknown tool, dead
// server, timeout, JSON-RPC error) is a Result with IsError; err is non-nil only when ctx ended,
// and the Result is filled then too. Calls are never retried.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	r.calls.Add(1)
	defer r.calls.Add(-1)
	tool, c, ok := r.snap.Load().lookupConn(name)
	if !ok || c == nil {
		return unknownToolResult(name), ctx.Err()
	}
	timeout := c.cfg.CallTimeout
	if timeout <= 0 {
		timeout = config.DefaultCallTimeout
	}
	res, err := c.call(ctx, name, tool.Tool, tool.OutputSchema, args, timeout, c.taskAugment(tool.TaskSupport))
	return r.callOutcome(ctx, c, name, res, err, timeout)
}

// callOutcome turns a call's error into its Result (see Call).
func (r *Registry) callOutcome(ctx context.Context, c *conn, name string, res Result, err error, timeout time.Duration) (Result, error) {
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return errorResult(name, "call cancelled: "+ctx.Err().Error()), ctx.Err()
	case errors.Is(err, stdio.ErrCallTimeout):
		return errorResult(name, fmt.Sprintf("tool call timed out after %s", timeout)), nil
	case errors.Is(err, transport.ErrTransportClosed):
		return errorResult(name, c.written.Redact(fmt.Sprintf("server %q failed during the call: %v", c.cfg.Name, c.deathReason(err)), r.opts.Getenv)), nil
	default:
		if why := c.auth.NeedsAuth(); why != "" {
			c.lose(errors.New(why)) // watch marks it: needs-auth
			return errorResult(name, fmt.Sprintf("server %q needs you to sign in again (%s)", c.cfg.Name, why)), nil
		}
		if c.stdio() == nil {
			select { // is the server still there? (watchHealth)
			case c.check <- struct{}{}:
			default:
			}
		}
		// The error may quote the resolved URL (a key in its path or query): redacted.
		return errorResult(name, c.written.Redact(fmt.Sprintf("server %q: %v", c.cfg.Name, oauth.PlainHTTPError(err)), r.opts.Getenv)), nil
	}
}

// ReconnectServer restarts one server (re-evaluating its trust) and waits until the attempt
// ends or ctx does. An unknown server is an error.
func (r *Registry) ReconnectServer(ctx context.Context, name string) (ServerStatus, error) {
	r.mu.Lock()
	e := r.servers[name]
	if e == nil || r.closed {
		r.mu.Unlock()
		return ServerStatus{}, fmt.Errorf("mcpbridge: unknown server %q", name)
	}
	cfg := e.cfg
	r.mu.Unlock()
	trusted := r.trusted(cfg)
	r.mu.Lock()
	if r.servers[name] != e || r.closed {
		r.mu.Unlock()
		return ServerStatus{}, fmt.Errorf("mcpbridge: server %q was removed", name)
	}
	e.reattach = 0
	r.restartLocked(e, trusted)
	r.rebuildLocked()
	done := e.done
	r.mu.Unlock()
	r.changed()
	select {
	case <-done:
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusLocked(e), ctx.Err()
}

// Reconnect re-reads the configuration (Options.Load), applies it restarting every server, and
// waits until every attempt has ended or ctx does.
func (r *Registry) Reconnect(ctx context.Context) []ServerStatus {
	var cfgs []config.ServerConfig
	if r.opts.Load != nil {
		var errs []error
		cfgs, errs = r.opts.Load()
		for _, err := range errs {
			r.log.Warn("mcp config", "err", err)
		}
	} else {
		r.mu.Lock()
		for _, e := range r.servers {
			cfgs = append(cfgs, e.cfg)
		}
		r.mu.Unlock()
	}
	r.apply(cfgs, true)
	_ = r.WaitIdle(ctx) // ignore error: the statuses say what is still starting
	return r.Servers()
}

// WaitIdle waits until no server is starting, or ctx ends.
func (r *Registry) WaitIdle(ctx context.Context) error {
	for {
		r.mu.Lock()
		var waits []chan struct{}
		for _, e := range r.servers {
			if e.state == StateStarting {
				waits = append(waits, e.done)
			}
		}
		r.mu.Unlock()
		if len(waits) == 0 {
			return nil
		}
		for _, w := range waits {
			select {
			case <-w:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// Calls is the number of tool calls in flight (Call has not returned).
func (r *Registry) Calls() int64 { return r.calls.Load() }

// WaitStarted waits while the server named server is starting (connecting, handshake, listing its
// tools), and returns at once when it is not (ready, failed, unknown ...). Its error is ctx's.
func (r *Registry) WaitStarted(ctx context.Context, server string) error {
	for {
		r.mu.Lock()
		e := r.servers[server]
		var wait chan struct{}
		if e != nil && e.state == StateStarting {
			wait = e.done
		}
		r.mu.Unlock()
		if wait == nil {
			return nil
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops every server, ends every stdio child's process group and waits for all of it.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	for _, e := range r.servers {
		r.stopLocked(e)
	}
	r.rebuildLocked()
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	<-r.notifierDone
	return nil
}

// RunDir is the folder a resolved stdio server runs in: its cwd, else the workspace folder of a
// workspace file's entry (config.ServerConfig.Folder, which its trust is bound to), else "" (the
// host's working folder), except that a registry's launch (npx -y pkg@1.0.0, uvx, docker) and a
// user-level package-runner server (userPackageRunner) without a cwd run from /. A registry's
// launch is exact only outside any project: run from the workspace, npx would run the package
// from a node_modules the repository ships, or fetch it through the repository's .npmrc. The same
// holds for the user's own package-runner servers: the user's file vouches for what they run in
// every folder, so the folder must not choose the package. The policy's admission asks it too
// (an allowlisted runner that runs in a folder is not the command the admin allowed).
func RunDir(c config.ServerConfig) string {
	if c.Cwd != "" {
		return c.Cwd
	}
	if c.Registry != nil || userPackageRunner(c) {
		return string(filepath.Separator)
	}
	return c.Folder
}

// relativeArg returns the first argument that is a relative path by its look: ".", "..", one
// starting "./" or "../" (".\\" and "..\\" too), one that climbs back out of where it starts
// ("src/.."), one relative to a drive ("C:", driveRelative), alone or as a flag's value after
// "="; and an empty argument, which a server that
// takes a path resolves to its working folder (an ${input:...} left empty, an empty ${env:...}).
// A flag's empty value ("--exclude=") is not a path.
func relativeArg(args []string) (string, bool) {
	for _, a := range args {
		if a == "" {
			return a, true
		}
		v := a
		if strings.HasPrefix(v, "-") {
			_, after, ok := strings.Cut(v, "=")
			if !ok || after == "" {
				continue
			}
			v = after
		}
		for _, p := range []string{"./", "../", ".\\", "..\\"} {
			if strings.HasPrefix(v, p) {
				return a, true
			}
		}
		if driveRelative(v) {
			return a, true
		}
		// Either separator, whatever the system: a Windows form is as relative elsewhere. Not a
		// URL's or a drive's (a ':'): "https://x/../.." is no folder here.
		if c := path.Clean(strings.ReplaceAll(v, `\`, "/")); !strings.Contains(v, ":") && (c == "." || c == ".." || strings.HasPrefix(c, "../")) {
			return a, true
		}
	}
	return "", false
}

// driveRelative reports whether v is a Windows path relative to a drive's working folder: a
// drive letter and a colon without a separator after them ("C:", "C:.", "D:src"). Run from the
// drive's root, as RunDir runs a user's package runner, "C:" is the whole drive. Read so on every
// system, as relativeArg reads both separators.
func driveRelative(v string) bool {
	if len(v) < 2 || v[1] != ':' || !('a' <= v[0] && v[0] <= 'z' || 'A' <= v[0] && v[0] <= 'Z') {
		return false
	}
	return len(v) == 2 || v[2] != '/' && v[2] != '\\'
}

// relativeEnv returns the first variable of env, in name order, whose value is a relative path
// as relativeArg reads one, except empty (an empty variable is no path: many are set empty).
func relativeEnv(env map[string]string) (key, val string, ok bool) {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if v := env[k]; v != "" && !strings.HasPrefix(v, "-") {
			if _, rel := relativeArg([]string{v}); rel {
				return k, v, true
			}
		}
	}
	return "", "", false
}

// relativeValue is the path in an argument relativeArg returned: a flag's value after "=".
func relativeValue(arg string) string {
	if strings.HasPrefix(arg, "-") {
		_, after, _ := strings.Cut(arg, "=")
		return after
	}
	return arg
}

// userPackageRunner reports whether a user-level stdio server (not one the workspace defines,
// which the person trusted in that folder) is started by a package runner (PackageRunner). Such
// a server without a cwd runs from / (RunDir); one that needs the folder names it
// (${workspaceFolder}, which asks for the person's trust).
func userPackageRunner(c config.ServerConfig) bool {
	return !c.WorkspaceOnly && c.Transport == config.TransportStdio && PackageRunner(c)
}

// PackageRunner reports whether a stdio server is started by a package runner: npx, pnpx, bunx,
// uvx, pipx, deno, dx, or npm exec, pnpm/yarn dlx, bun x, uv run/tool, or python -m. Run in a
// folder, such a runner takes the package, or the index it is fetched from, from that folder and
// those above it (node_modules, .npmrc, deno.json, uv.toml, pyproject.toml; python -m and -c
// import from the working folder before what is installed, unless -I or -P says not to).
func PackageRunner(c config.ServerConfig) bool {
	if c.Transport != config.TransportStdio && c.Transport != "" {
		return false
	}
	return packageRunner(c.Command, c.Args, 0)
}

// launchWrappers start the command after their options (env also after NAME=VALUE words), and
// shells run a script (-c): a runner they start runs in the same folder. Which of their words is
// the command is not worked out (the policy does that, permissions/policy: unwrapped): any word
// that starts a runner with the words after it counts, which at worst runs from / a server that
// did not need it (and says so if an argument is then a relative path).
var launchWrappers = map[string]bool{"env": true, "nohup": true, "nice": true, "setsid": true, "stdbuf": true,
	"timeout": true, "ionice": true, "taskset": true, "chrt": true, "exec": true, "command": true}

var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "ash": true}

// scriptSeparators end a command in a shell's script: each starts a word of its own.
var scriptSeparators = strings.NewReplacer(";", " ", "&", " ", "|", " ", "(", " ", ")", " ")

// maxWrapped bounds how many wrappers deep packageRunner looks; a longer chain counts as a runner.
const maxWrapped = 8

func packageRunner(command string, args []string, depth int) bool {
	name := strings.ToLower(filepath.Base(command))
	for _, ext := range []string{".cmd", ".exe", ".ps1"} {
		name = strings.TrimSuffix(name, ext)
	}
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	switch name {
	case "npx", "pnpx", "bunx", "uvx", "pipx":
		return true
	case "pnpm", "yarn":
		return sub == "dlx" || sub == "exec"
	case "npm":
		return npmExec(args)
	case "deno", "dx": // dx: deno x
		// deno finds its config (deno.json: an import map, npm packages, node_modules, tasks)
		// from the working folder up, whatever the command (deno 2 runs `deno -A npm:pkg` and
		// `deno main.ts` without "run").
		return true
	case "bun":
		return sub == "x"
	case "uv":
		return sub == "run" || sub == "tool"
	}
	if py := strings.TrimPrefix(name, "python"); py != name && strings.Trim(py, "0123456789.") == "" {
		return pythonImportsFromCwd(args)
	}
	if !launchWrappers[name] && !shells[name] {
		return false
	}
	if depth >= maxWrapped {
		return true
	}
	words := args
	if shells[name] {
		words = nil
		for _, a := range args {
			words = append(words, strings.Fields(scriptSeparators.Replace(a))...)
		}
	}
	for i, w := range words {
		if packageRunner(w, words[i+1:], depth+1) {
			return true
		}
	}
	return false
}

// npmExec reports whether npm's command is exec, which is npx (npm x, and the prefix npm exe).
// npm reads its options anywhere, so some may come before the command (npm -y exec, npm
// --loglevel silent exec); which options take a value is npm's long list, so a word after an
// option may be its value or the command. The policy reads npm the same way
// (permissions/policy: npmExec).
func npmExec(args []string) bool {
	valueNext := false
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == "exec" || a == "exe" || a == "x":
			return true
		case strings.HasPrefix(a, "-") && a != "-":
			valueNext = !strings.Contains(a, "=")
		case valueNext:
			valueNext = false // the option's value, or npm's other command (which is not exec)
		default:
			return false // another command
		}
	}
	return false
}

// pythonImportsFromCwd reports whether python run with args imports from the working folder
// first: -m's module and -c's imports do, unless -I or -P comes before them. Short options may be
// written together (-um pkg, -Bc ...); -W and -X take a value, the rest of the word or the next.
func pythonImportsFromCwd(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-" || !strings.HasPrefix(a, "-") || a == "--" {
			return false // a script or stdin: python puts its folder first, not the working one
		}
		if strings.HasPrefix(a, "--") {
			continue // --version, --help, ...
		}
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'I', 'P':
				return false
			case 'm', 'c':
				return true // the module, or -c's imports, come from the working folder first
			case 'W', 'X':
				if j == len(a)-1 {
					i++ // the option's value is the next word
				}
				j = len(a) // or the rest of this one
			}
		}
	}
	return false
}
