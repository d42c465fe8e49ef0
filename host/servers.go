package host

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"

	"go.lsp.dev/protocol"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
)

// loadConfig reads every configuration source (PROTOCOL.md section 2) with the current settings and
// workspace folders. It is also the registry's Load (switchboard.reconnect re-reads the files).
// Problems are logged (window/logMessage) and shown once per distinct set.
func (s *server) loadConfig() ([]mcpbridge.ServerConfig, []error) {
	o := s.currentSettings()
	// Files the user named must exist; the default locations need not.
	named := mcpbridge.CheckNamedConfigFiles(o.ConfigFiles)
	for _, err := range named {
		s.log.Error("MCP configuration: " + err.Error())
	}
	cfgs, errs := mcpbridge.LoadConfig(mcpbridge.ConfigSources{
		UserFile:         s.opts.UserConfigFile,
		WorkspaceFolders: s.folderList(),
		ExtraFiles:       o.ConfigFiles,
		EditorServers:    o.Servers,
		Getenv:           s.lookupEnv,
	})
	errs = append(named, errs...)
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = safetext.Line(err.Error()) // it quotes key names and file names
	}
	sig := strings.Join(msgs, "\n")
	s.cfgMu.Lock()
	s.cfgs = cfgs
	show := sig != s.lastCfgErrs
	s.lastCfgErrs = sig
	s.cfgMu.Unlock()
	for _, m := range msgs[len(named):] {
		s.log.Warn("MCP configuration: " + m)
	}
	if show && len(msgs) > 0 {
		more := ""
		if len(msgs) > 1 {
			more = fmt.Sprintf(" (and %d more; see the Switchboard output)", len(msgs)-1)
		}
		s.showMessage(protocol.MessageTypeWarning, "Switchboard: MCP configuration problem: "+msgs[0]+more)
	}
	return cfgs, errs
}

func (s *server) configFor(name string) (mcpbridge.ServerConfig, bool) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	for _, c := range s.cfgs {
		if c.Name == name {
			return c, true
		}
	}
	return mcpbridge.ServerConfig{}, false
}

// trusted is the registry's Trusted: a workspace-only server runs once the user trusted exactly
// this configuration (by fingerprint).
func (s *server) trusted(cfg mcpbridge.ServerConfig) bool {
	return s.trust.Get(cfg.Name, cfg.Fingerprint()) == permissions.Trusted
}

// serversChanged is the registry's OnChange. It is serialised so the editor always sees the
// latest list last.
func (s *server) serversChanged([]mcpbridge.ServerStatus) {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	servers := s.statuses(s.registry.Servers())
	seen := make(map[string]bool, len(servers))
	for _, st := range servers {
		seen[st.Name] = true
		// A failed server that fails again with another reason is a new failure even when no other
		// state was seen in between (the registry coalesces its OnChange calls).
		key := st.State
		if st.State == mcpbridge.StateFailed {
			key += "\x00" + st.Error
		}
		prev, had := s.states[st.Name]
		if had && prev == key {
			continue
		}
		s.states[st.Name] = key
		fields := map[string]any{"server": st.Name, "state": st.State}
		if st.Error != "" {
			fields["error"] = st.Error
		}
		s.events.record("serverState", fields)
		switch st.State {
		case mcpbridge.StateFailed:
			reason := safetext.Block(st.Error)
			if reason == "" {
				reason = "unknown error"
			}
			s.log.Warn(fmt.Sprintf("MCP server %q failed: %s", st.Name, reason))
			s.showMessage(protocol.MessageTypeError, fmt.Sprintf("Switchboard: MCP server '%s' failed: %s", st.Name, reason))
		case mcpbridge.StateUntrusted:
			s.maybeAskTrust(st.Name)
		}
	}
	for name := range s.states {
		if !seen[name] {
			delete(s.states, name)
			s.events.record("serverState", map[string]any{"server": name, "state": "removed"})
		}
	}
	s.sendJSON(NotifyServersChanged, ServersChangedParams{Servers: servers})
	select {
	case s.progressCh <- struct{}{}:
	default:
	}
}

// expectRestart forgets the last seen state of the named servers (none = every server) before the
// host restarts them. The registry coalesces OnChange, so a failed server that fails again may never
// be seen "starting" in between; its new failure must still be shown, once (PROTOCOL.md section 6).
func (s *server) expectRestart(names ...string) {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	if len(names) == 0 {
		for name := range s.states {
			s.states[name] = mcpbridge.StateStarting
		}
		return
	}
	for _, name := range names {
		if _, ok := s.states[name]; ok {
			s.states[name] = mcpbridge.StateStarting
		}
	}
}

// maybeAskTrust asks once per configuration about a workspace-only server nobody decided on yet.
// Called with statusMu held.
func (s *server) maybeAskTrust(name string) {
	cfg, ok := s.configFor(name)
	if !ok || !cfg.WorkspaceOnly {
		return
	}
	fp := cfg.Fingerprint()
	if s.trust.Get(name, fp) != permissions.TrustUnknown {
		return
	}
	key := name + "\x00" + fp
	if s.trustAsked[key] {
		return
	}
	s.trustAsked[key] = true
	go s.askTrust(cfg, fp)
}

func (s *server) askTrust(cfg mcpbridge.ServerConfig, fp string) {
	msg := s.trustText(cfg) + " Start it?"
	title, ok := s.askButtons(s.baseCtx, protocol.MessageTypeWarning, msg, TitleTrust, TitleDontTrust)
	if !ok {
		return // dismissed: the server stays untrusted; switchboard.trust can still decide
	}
	trusted := title == TitleTrust
	// The configuration may have changed while the question was open: decide only for what was shown.
	if cur, ok := s.configFor(cfg.Name); !ok || cur.Fingerprint() != fp {
		return
	}
	if _, err := s.setTrust(s.baseCtx, cfg.Name, trusted, "prompt"); err != nil {
		s.log.Warn(fmt.Sprintf("host: trust %s: %v", cfg.Name, err))
	}
}

// setTrust records the decision for the server's current configuration and restarts or stops it.
func (s *server) setTrust(ctx context.Context, name string, trusted bool, by string) ([]ServerStatus, error) {
	cfg, ok := s.configFor(name)
	if !ok {
		return nil, lspconn.InvalidParams("%s: unknown server %q (known: %s)", CmdTrust, name, strings.Join(s.serverNames(), ", "))
	}
	if !cfg.WorkspaceOnly {
		// Only a server that comes only from a workspace file waits for trust; a decision about
		// another one would be stored and change nothing, which the caller could not tell.
		return nil, lspconn.InvalidParams("%s: server %q comes from %s, not only from a workspace file: it needs no trust", CmdTrust, name, cfg.Source)
	}
	if err := s.trust.SetDefinition(name, cfg.Fingerprint(), trusted, cfg.Definition()); err != nil {
		return nil, fmt.Errorf("host: saving trust for %s: %w", name, err)
	}
	decision := "deny"
	if trusted {
		decision = "trust"
	}
	s.events.record("trust", map[string]any{"server": name, "decision": decision, "by": by})
	s.expectRestart(name)
	if _, err := s.registry.ReconnectServer(ctx, name); err != nil {
		s.log.Debug("host: reconnect after trust", "server", name, "error", err)
	}
	return s.statuses(s.registry.Servers()), nil
}

func (s *server) serverNames() []string {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	names := make([]string, 0, len(s.cfgs))
	for _, c := range s.cfgs {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	return names
}

// maxTrustText bounds the trust question (a definition with very many arguments is cut).
const maxTrustText = 4000

// trustText is the trust question about a workspace server without its final "Start it?": one
// paragraph, essentials first (mcpbridge.TrustSentences), naming what changed since the user last
// trusted a definition of that name. Values a file controls are escaped; values from the user's
// environment are never in it.
func (s *server) trustText(cfg mcpbridge.ServerConfig) string {
	var prev *mcpbridge.ServerConfig
	if raw := s.trust.LastTrusted(cfg.Name); raw != nil {
		if p, err := mcpbridge.ParseDefinition(raw); err == nil && p.Fingerprint() != cfg.Fingerprint() {
			prev = &p
		}
	}
	return safetext.Bounded(strings.Join(mcpbridge.TrustSentences(cfg, prev), " "), maxTrustText)
}

// statuses is what the editor gets for servers (never nil): an untrusted workspace server carries
// the trust question's text (ServerStatus.trustPrompt) for switchboard.trust users, and what a server or a config file controls is escaped.
func (s *server) statuses(servers []mcpbridge.ServerStatus) []mcpbridge.ServerStatus {
	if servers == nil {
		return []mcpbridge.ServerStatus{}
	}
	for i, st := range servers {
		if st.State != mcpbridge.StateUntrusted {
			continue
		}
		if cfg, ok := s.configFor(st.Name); ok && cfg.WorkspaceOnly {
			servers[i].TrustPrompt = s.trustText(cfg)
		}
	}
	return shownStatuses(servers)
}
