package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
)

// loadConfig reads every configuration source (PROTOCOL.md section 2) with the current settings and
// workspace folders. It is also the registry's Load (switchboard.reconnect re-reads the files).
// Problems are logged (window/logMessage) and shown once per distinct set.
func (a *App) loadConfig() ([]config.ServerConfig, []error) {
	o := a.currentSettings()
	a.inputs.forgetMissing() // inputs.go: a value set meanwhile (switchboard mcp input set) is found
	// Files the user named must exist; the default locations need not.
	named := config.CheckNamedConfigFiles(o.ConfigFiles)
	for _, err := range named {
		a.log.Error("MCP configuration: " + err.Error())
	}
	cfgs, errs := config.LoadConfig(config.ConfigSources{
		UserFile:         a.opts.UserConfigFile,
		WorkspaceFolders: a.Folders(),
		ExtraFiles:       o.ConfigFiles,
		EditorServers:    o.Servers,
		Getenv:           a.lookupEnv,
	})
	errs = append(named, errs...)
	cfgs, merrs := WithManaged(a.Policy(), cfgs, a.lookupEnv) // policy.go: managed-mcp.json
	errs = append(errs, merrs...)
	if a.opts.Servers != nil {
		cfgs = a.opts.Servers(cfgs)
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = safetext.Line(err.Error()) // it quotes key names and file names
	}
	sig := strings.Join(msgs, "\n")
	show := a.cfgs.set(cfgs, sig, errs)
	for _, m := range msgs[len(named):] {
		a.log.Warn("MCP configuration: " + m)
	}
	if show && len(msgs) > 0 {
		more := ""
		if len(msgs) > 1 {
			more = fmt.Sprintf(" (and %d more; see the Switchboard output)", len(msgs)-1)
		}
		a.ui.Notify(LevelWarning, "Switchboard: MCP configuration problem: "+msgs[0]+more)
	}
	return cfgs, errs
}

func (a *App) configFor(name string) (config.ServerConfig, bool) {
	for _, c := range a.cfgs.all() {
		if c.Name == name {
			return c, true
		}
	}
	return config.ServerConfig{}, false
}

// trusted is the registry's Trusted: a workspace-only server runs once the user trusted exactly
// this configuration (by fingerprint).
func (a *App) trusted(cfg config.ServerConfig) bool {
	return a.trust.Get(cfg.Name, cfg.Fingerprint()) == permissions.Trusted
}

// serversChanged is the registry's OnChange. It is serialised so the editor always sees the
// latest list last.
func (a *App) serversChanged([]mcpbridge.ServerStatus) {
	a.servers.mu.Lock()
	defer a.servers.mu.Unlock()
	servers := a.statuses(a.registry.Servers())
	seen := make(map[string]bool, len(servers))
	for _, st := range servers {
		seen[st.Name] = true
		// A failed server that fails again with another reason is a new failure even when no other
		// state was seen in between (the registry coalesces its OnChange calls).
		key := st.State
		if st.State == mcpbridge.StateFailed || st.State == mcpbridge.StateStopped {
			key += "\x00" + st.Error
		}
		prev, had := a.servers.states[st.Name]
		if had && prev == key {
			continue
		}
		a.servers.states[st.Name] = key
		fields := map[string]any{"server": st.Name, "state": st.State}
		if st.Error != "" {
			fields["error"] = st.Error
		}
		a.events.record("serverState", fields)
		switch st.State {
		case mcpbridge.StateFailed:
			if a.maybeAskInputs(st.Name) { // inputs.go: it failed for want of an input, now asked
				break
			}
			reason := safetext.Block(st.Error)
			if reason == "" {
				reason = "unknown error"
			}
			a.log.Warn(fmt.Sprintf("MCP server %q failed: %s", st.Name, reason))
			a.ui.Notify(LevelError, fmt.Sprintf("Switchboard: MCP server '%s' failed: %s", st.Name, reason))
		case mcpbridge.StateStopped:
			// A shared server whose daemon a person stopped (`switchboard daemon stop`) says why;
			// nothing failed, so it is news, not an error. A server stopped by this window says
			// nothing.
			if st.Error != "" {
				a.ui.Notify(LevelInfo, fmt.Sprintf("Switchboard: MCP server '%s' stopped: %s.", st.Name, strings.TrimSuffix(safetext.Line(st.Error), ".")))
			}
		case mcpbridge.StateUntrusted:
			a.maybeAskTrust(st.Name)
		case mcpbridge.StateNeedsAuth:
			a.maybeAskSignIn(st) // signin.go
		}
	}
	for name := range a.servers.states {
		if !seen[name] {
			delete(a.servers.states, name)
			a.events.record("serverState", map[string]any{"server": name, "state": "removed"})
		}
	}
	a.ui.ServersChanged(a.withConfigProblems(servers))
}

// withConfigProblems adds each server entry the configuration rejected to a list of statuses, as
// a failed server named after its entry, with its file as source and the key and problem as its
// error (escaped): the person finds it where the servers are, not only in a notice.
func (a *App) withConfigProblems(servers []mcpbridge.ServerStatus) []mcpbridge.ServerStatus {
	have := map[string]bool{}
	for _, st := range servers {
		have[st.Name] = true
	}
	for _, err := range a.cfgs.problems() {
		var ce *config.ConfigError
		if !errors.As(err, &ce) || ce.Server == "" || have[safetext.Line(ce.Server)] {
			continue
		}
		msg := ce.Msg
		if ce.Key != "" {
			msg = ce.Key + ": " + msg
		}
		servers = append(servers, shownStatuses([]mcpbridge.ServerStatus{{
			Name: ce.Server, State: mcpbridge.StateFailed, Source: ce.File, Error: "configuration: " + msg,
		}})...)
		have[safetext.Line(ce.Server)] = true
	}
	return servers
}

// expectRestart forgets the last seen state of the named servers (none = every server) before the
// host restarts them. The registry coalesces OnChange, so a failed server that fails again may never
// be seen "starting" in between; its new failure must still be shown, once (PROTOCOL.md section 6).
func (a *App) expectRestart(names ...string) {
	a.servers.mu.Lock()
	defer a.servers.mu.Unlock()
	if len(names) == 0 {
		for name := range a.servers.states {
			a.servers.states[name] = mcpbridge.StateStarting
		}
		return
	}
	for _, name := range names {
		if _, ok := a.servers.states[name]; ok {
			a.servers.states[name] = mcpbridge.StateStarting
		}
	}
}

// maybeAskTrust asks once per configuration about a workspace-only server nobody decided on yet.
// Called with statusMu held.
func (a *App) maybeAskTrust(name string) {
	cfg, ok := a.configFor(name)
	if !ok || !cfg.WorkspaceOnly {
		return
	}
	fp := cfg.Fingerprint()
	if a.trust.Get(name, fp) != permissions.TrustUnknown {
		return
	}
	key := name + "\x00" + fp
	if a.servers.trustAsked[key] {
		return
	}
	a.servers.trustAsked[key] = true
	a.goBg(func() { a.askTrust(cfg, fp) })
}

// askTrust puts the trust question to the person. A dismissed question decides nothing: the
// server stays untrusted and Trust (switchboard.trust) can still decide.
func (a *App) askTrust(cfg config.ServerConfig, fp string) {
	q := a.questions.open(KindTrust, 0, func(q *Question) {
		q.Server = cfg
		q.Text = a.trustText(cfg) + " Start it?"
	})
	a.ui.Ask(q)
	o := q.wait(a.baseCtx, a.gone)
	if o.By != ByUser {
		return
	}
	// The configuration may have changed while the question was open: decide only for what was shown.
	if cur, ok := a.configFor(cfg.Name); !ok || cur.Fingerprint() != fp {
		return
	}
	if _, err := a.setTrust(a.baseCtx, cfg.Name, o.Reply.Allow, "prompt"); err != nil {
		a.log.Warn(fmt.Sprintf("host: trust %s: %v", cfg.Name, err))
	}
}

// Trust records the person's decision about a workspace-only server's current configuration and
// restarts or stops it (switchboard.trust). fp, when set, is the definition the person saw (a
// trust prompt's): a definition changed since is refused, never trusted unseen.
func (a *App) Trust(ctx context.Context, name string, trusted bool, fp string) ([]mcpbridge.ServerStatus, error) {
	if cfg, ok := a.configFor(name); ok && fp != "" && cfg.Fingerprint() != fp {
		return nil, badRequest("server %q changed since that question was asked (%s): nothing was decided; answer the new question", name, cfg.Source)
	}
	return a.setTrust(ctx, name, trusted, "command")
}

// setTrust records the decision for the server's current configuration and restarts or stops it.
func (a *App) setTrust(ctx context.Context, name string, trusted bool, by string) ([]mcpbridge.ServerStatus, error) {
	cfg, ok := a.configFor(name)
	if !ok {
		return nil, badRequest("unknown server %q (known: %s)", name, strings.Join(a.serverNames(), ", "))
	}
	if !cfg.WorkspaceOnly {
		// Only a server that comes only from a workspace file waits for trust; a decision about
		// another one would be stored and change nothing, which the caller could not tell.
		return nil, badRequest("server %q comes from %s, not only from a workspace file: it needs no trust", name, cfg.Source)
	}
	if err := a.trust.SetDefinition(name, cfg.Fingerprint(), trusted, cfg.Definition()); err != nil {
		return nil, fmt.Errorf("host: saving trust for %s: %w", name, err)
	}
	if trusted {
		a.forgetPinsOnTrust(cfg) // its tools are pinned when it first connects now
	}
	decision := "deny"
	if trusted {
		decision = "trust"
	}
	a.events.record("trust", map[string]any{"server": name, "decision": decision, "by": by})
	a.expectRestart(name)
	if _, err := a.registry.ReconnectServer(ctx, name); err != nil {
		a.log.Debug("host: reconnect after trust", "server", name, "error", err)
	}
	return a.statuses(a.registry.Servers()), nil
}

func (a *App) serverNames() []string {
	cfgs := a.cfgs.all()
	names := make([]string, 0, len(cfgs))
	for _, c := range cfgs {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	return names
}

// maxTrustText bounds the trust question (a definition with very many arguments is cut).
const maxTrustText = 4000

// trustText is the trust question about a workspace server without its final "Start it?": one
// paragraph, essentials first (config.TrustSentences), naming what changed since the user last
// trusted a definition of that name. Values a file controls are escaped; values from the user's
// environment are never in it.
func (a *App) trustText(cfg config.ServerConfig) string {
	var prev *config.ServerConfig
	if raw := a.trust.LastTrusted(cfg.Name); raw != nil {
		if p, err := config.ParseDefinition(raw); err == nil && p.Fingerprint() != cfg.Fingerprint() {
			prev = &p
		}
	}
	return config.TrustQuestion(cfg, prev, maxTrustText)
}

// statuses is what the editor gets for servers (never nil): an untrusted workspace server carries
// the trust question's text (ServerStatua.trustPrompt) for switchboard.trust users, and what a server or a config file controls is escaped.
func (a *App) statuses(servers []mcpbridge.ServerStatus) []mcpbridge.ServerStatus {
	if servers == nil {
		return []mcpbridge.ServerStatus{}
	}
	for i, st := range servers {
		if st.State != mcpbridge.StateUntrusted {
			continue
		}
		if cfg, ok := a.configFor(st.Name); ok && cfg.WorkspaceOnly {
			servers[i].TrustPrompt = a.trustText(cfg)
		}
	}
	return shownStatuses(servers)
}

// shownStatuses escapes what a server or a config file controls in server statuses bound for the
// person, who sees them as they come: the error and the stderr tail (block form: their lines
// kept), the command line and the source file.
func shownStatuses(in []mcpbridge.ServerStatus) []mcpbridge.ServerStatus {
	if in == nil {
		return nil
	}
	out := make([]mcpbridge.ServerStatus, len(in))
	for i, st := range in {
		st.Name = safetext.Line(st.Name)
		st.Source = safetext.Line(st.Source)
		st.Command = safetext.Line(st.Command)
		st.Error = safetext.Block(st.Error)
		st.StderrTail = safetext.Block(st.StderrTail)
		out[i] = st
	}
	return out
}

// Servers returns every server's status, escaped (switchboard.servers).
// Entries the configuration rejected are listed as failed (withConfigProblems).
func (a *App) Servers() []mcpbridge.ServerStatus {
	return a.withConfigProblems(a.statuses(a.registry.Servers()))
}

// configState is the last loaded configuration and the bookkeeping of its loads.
type configState struct {
	mu      sync.Mutex // guards cfgs, errs, lastErrs, dirty
	cfgs    []config.ServerConfig
	errs    []error // the last load's problems
	lastErr string
	dirty   bool // settings changed before the first load finished

	applyMu sync.Mutex // serialises load+Apply, so the last settings win
	loaded  bool       // guarded by applyMu: the first load+Apply happened
}

// set stores cfgs and reports whether the set of problems (sig) differs from the last one.
func (c *configState) set(cfgs []config.ServerConfig, sig string, errs []error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfgs = cfgs
	c.errs = errs
	show := sig != c.lastErr
	c.lastErr = sig
	return show
}

func (c *configState) problems() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errs
}

func (c *configState) all() []config.ServerConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfgs
}

func (c *configState) setDirty() {
	c.mu.Lock()
	c.dirty = true
	c.mu.Unlock()
}

// takeDirty reports and clears dirty.
func (c *configState) takeDirty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.dirty
	c.dirty = false
	return d
}

// serverStates is the last state shown for each server, and the trust questions already asked.
type serverStates struct {
	mu         sync.Mutex // guards states, trustAsked; serialises serversChanged
	states     map[string]string
	trustAsked map[string]bool
}
