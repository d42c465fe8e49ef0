package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// Shared servers (issue 32). A stdio server whose entry says "shared" is reached through the
// broker daemon (mcpbridge/broker) when Options.Broker is set: the "attach" dial kind. It is
// the same stdio transport reading and writing a socket instead of a child's pipes; everything
// above it (the era, the calls, pins, the gate before them) is as for any server. When the
// daemon cannot be reached or started, the server runs in the window, with one warning.

// openShared returns how to attach to the shared copy of cfg (resolved), whose child environment
// would be env: the launch is exactly what this window would start, so two windows share a
// process only if they would have started the same one.
func (r *Registry) openShared(cfg config.ServerConfig, env []string) stdio.OpenStream {
	return func(ctx context.Context) (stdio.Stream, error) {
		req, err := r.sharedRequest(cfg, env)
		if err != nil {
			return nil, err
		}
		c, err := broker.Attach(ctx, *r.opts.Broker, req)
		if err != nil {
			return nil, err
		}
		if w := c.Skew(); w != "" {
			r.log.Warn(w, "server", cfg.Name)
		}
		c.OnNotice(func() {
			r.log.Warn(c.Notice(), "server", cfg.Name)
			r.changed() // the status's warning says it
		})
		c.OnWindows(r.changed) // "shared (3 windows)" as it is now

		return c, nil
	}
}

// sharedRequest is the broker's attach request for cfg.
func (r *Registry) sharedRequest(cfg config.ServerConfig, env []string) (broker.Request, error) {
	// The command as exec would find it (this process's PATH, as for a child of this window); a
	// relative path is under the server's cwd, as exec runs it from Dir and as the policy matched
	// it, never under this process's working folder.
	name := cfg.Command
	if !filepath.IsAbs(name) && cfg.Cwd != "" && strings.ContainsRune(name, filepath.Separator) {
		name = filepath.Join(cfg.Cwd, name)
	}
	// Found only through a PATH entry naming the current folder (exec.ErrDot): refused, as exec
	// refuses it for the window's own child, or the daemon would run the repository's executable.
	cmd, err := exec.LookPath(name)
	if err != nil {
		return broker.Request{}, fmt.Errorf("shared: %w", err)
	}
	if cmd, err = filepath.Abs(cmd); err != nil {
		return broker.Request{}, fmt.Errorf("shared: %w", err)
	}
	dir := cfg.Cwd
	if dir == "" {
		dir = "/" // what the daemon would use: never its own cwd, which is the first starter's
	}
	l := broker.Launch{Command: cmd, Args: cfg.Args, Env: env, Dir: dir, Scope: broker.ScopeUser, Source: broker.SourceUser}
	if cfg.Shared == config.SharedWorkspace {
		l.Scope = broker.ScopeWorkspace
		l.Folders = []broker.Folder{}
		if r.opts.Roots != nil {
			for _, root := range Roots(r.opts.Roots()) {
				l.Folders = append(l.Folders, broker.Folder{URI: root.URI, Name: root.Name})
			}
		}
	}
	if cfg.WorkspaceOnly {
		// What runs comes from a repository: shared only with windows of this folder set, and
		// only with windows that trusted this very definition from this very place.
		l.Source = broker.SourceWorkspace
		l.Scope = broker.ScopeWorkspace
		l.Fingerprint = cfg.Fingerprint()
		l.DefiningFolder = cfg.FromFolder
		if l.DefiningFolder == "" {
			l.DefiningFolder = filepath.Dir(cfg.Source)
		}
		if p, err := filepath.EvalSymlinks(l.DefiningFolder); err == nil {
			l.DefiningFolder = p
		}
		if l.DefiningFolder, err = filepath.Abs(l.DefiningFolder); err != nil {
			return broker.Request{}, fmt.Errorf("shared: %w", err)
		}
	}
	info, _ := json.Marshal(map[string]string{"name": "switchboard", "version": clientVersion}) // ignore error: strings
	return broker.Request{Launch: l, Name: cfg.Name, Display: cfg.Summary(), ProtocolVersion: protocolVersion,
		ClientInfo: info, Capabilities: r.clientCapabilities()}, nil
}

// clientCapabilities are the capabilities this window's client declares (clientOptions), for the
// daemon to declare upstream; it replaces roots by the instance's scope.
func (r *Registry) clientCapabilities() json.RawMessage {
	caps := map[string]any{}
	if r.opts.Roots != nil {
		caps["roots"] = map[string]bool{"listChanged": true}
	}
	if r.opts.Sample != nil {
		caps["sampling"] = struct{}{}
	}
	if r.opts.Elicit != nil {
		caps["elicitation"] = map[string]struct{}{"form": {}, "url": {}}
	}
	b, _ := json.Marshal(caps) // ignore error: plain values
	return b
}

// sharedDial wraps d: a stdio transport for a shared entry tries the daemon first.
func (r *Registry) sharedDial(d dialFunc, cfg config.ServerConfig, env []string) dialFunc {
	if !r.sharedHere(cfg) {
		return d
	}
	return func(c config.ServerConfig, e []string, log *slog.Logger) (transport.Interface, error) {
		tr, err := d(c, e, log)
		if st, ok := tr.(*stdio.Transport); ok && err == nil {
			st.Shared(r.openShared(cfg, env))
		}
		return tr, err
	}
}

// sharedHere reports whether cfg would run in the broker daemon rather than in this window (as
// sharedDial decides).
func (r *Registry) sharedHere(cfg config.ServerConfig) bool {
	return r.opts.Broker != nil && sharedEntry(cfg)
}

// sharedEntry: cfg is meant to run in the broker daemon, which runs it from / when it has no
// cwd. It runs from / wherever it runs (this window when no daemon answers, `switchboard check`),
// so that what its arguments name does not depend on where it happened to start.
func sharedEntry(cfg config.ServerConfig) bool {
	return cfg.Shared != "" && cfg.Transport == config.TransportStdio && cfg.Sandbox == nil
}

// sharedStatus is c's sharing, nil when c runs in this window.
func sharedStatus(c *conn) *SharedStatus {
	s := c.stdio()
	if s == nil {
		return nil
	}
	bc, ok := s.SharedStream().(*broker.Conn)
	if !ok {
		return nil
	}
	scope := bc.Scope()
	warning := bc.Notice() // the daemon is being replaced: more pressing than a build skew
	if warning == "" {
		warning = bc.Skew()
	}
	return &SharedStatus{Scope: scope, Windows: bc.Windows(), DaemonPid: bc.DaemonPid(), DaemonBuild: bc.DaemonBuild(), Warning: warning}
}

// reattachDelays are the waits before a window attaches again to a shared server whose daemon
// went away (design §5): 0.2 s, 1 s, 5 s, then every 30 s for a daemon that keeps dying.
var reattachDelays = []time.Duration{200 * time.Millisecond, time.Second, 5 * time.Second, 30 * time.Second}

// daemonGone reports whether c was attached to a shared server and the daemon, not the server,
// went away (killed, stopped answering). A server that exited is failed until a Reconnect, as any
// server; a lost daemon is replaced by attaching again, which starts a new one.
func daemonGone(c *conn) bool {
	s := c.stdio()
	if s == nil {
		return false
	}
	bc, ok := s.SharedStream().(*broker.Conn)
	return ok && !bc.InstanceExited()
}

// daemonMoved reports whether c was attached to a shared server whose daemon ended in good order
// and told its windows to attach again (a signal from outside, `daemon restart`'s hand-over): the
// window moves to a new daemon by itself, and nothing failed that the person must act on.
func daemonMoved(c *conn) bool {
	s := c.stdio()
	if s == nil {
		return false
	}
	bc, ok := s.SharedStream().(*broker.Conn)
	if !ok {
		return false
	}
	e := bc.Exited()
	return e != nil && e.Reattach
}

// reattachLater restarts e after the delay of attempt, unless it was restarted, removed or the
// registry closed meanwhile (gen is the generation its death left). The calls that were in
// flight have ended with an error; none is sent again.
func (r *Registry) reattachLater(e *entry, gen uint64, attempt int) {
	t := time.NewTimer(reattachDelays[min(attempt, len(reattachDelays)-1)])
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.life.Done():
		return
	}
	r.mu.Lock()
	if r.closed || e.gen != gen || r.servers[e.cfg.Name] != e {
		r.mu.Unlock()
		return
	}
	cfg := e.cfg
	r.mu.Unlock()
	trusted := r.trusted(cfg)
	r.mu.Lock()
	if r.closed || e.gen != gen || r.servers[cfg.Name] != e {
		r.mu.Unlock()
		return
	}
	r.log.Info("shared server's daemon went away; attaching again", "server", cfg.Name)
	r.restartLocked(e, trusted)
	r.rebuildLocked()
	r.mu.Unlock()
	r.changed()
}

// stoppedOnPurpose reports whether c was attached to a shared server that a person stopped with
// its daemon (`switchboard daemon stop`), and the daemon's sentence saying so.
func stoppedOnPurpose(c *conn) (string, bool) {
	s := c.stdio()
	if s == nil {
		return "", false
	}
	bc, ok := s.SharedStream().(*broker.Conn)
	if !ok || !bc.StoppedOnPurpose() {
		return "", false
	}
	why, _ := bc.ExitInfo()
	return why, why != ""
}

// instanceEnded reports whether c was attached to a shared server whose instance ended (the
// daemon said so): failed here until a Reconnect, in this window or another (watchRestart).
func instanceEnded(c *conn) bool {
	s := c.stdio()
	if s == nil {
		return false
	}
	bc, ok := s.SharedStream().(*broker.Conn)
	return ok && bc.InstanceExited()
}

// watchRestart waits, after e's shared instance ended, until another window starts it again
// (its Reconnect), and then restarts e here as any restart: starting, attached, tools listed
// again and pins checked. A restart in one window is thus one in every window, as the
// instance is one. It ends without effect when e was restarted or removed meanwhile; while the
// daemon cannot watch (gone, exiting, or an older build) it tries again, as a lost attachment
// does, until a daemon says the instance runs again or a Reconnect here restarts e.
func (r *Registry) watchRestart(e *entry, gen uint64, cfg config.ServerConfig) {
	resolved, err := cfg.Resolve(r.opts.Getenv)
	if err != nil {
		return
	}
	req, err := r.sharedRequest(resolved, stdio.ChildEnv(r.baseEnv, resolved.Env))
	if err != nil {
		return
	}
	// A Reconnect here or the entry's removal (stopLocked) cancels the watch: it has no purpose
	// once e runs another attempt.
	ctx, cancel := context.WithCancel(r.life)
	defer cancel()
	r.mu.Lock()
	if r.closed || e.gen != gen || r.servers[cfg.Name] != e {
		r.mu.Unlock()
		return
	}
	if e.cancel != nil {
		e.cancel() // the ended attempt's
	}
	e.cancel = cancel
	r.mu.Unlock()
	// A daemon that goes away meanwhile (killed, crashed, replaced) ends the watch with an error;
	// another window's Reconnect then starts a new daemon and the instance in it, so watch that
	// one, waiting as a lost attachment does (reattachDelays) while there is none: otherwise this
	// window alone would stay failed until its own Reconnect.
	for attempt := 0; ; attempt++ {
		err := broker.Watch(ctx, *r.opts.Broker, req)
		if err == nil {
			break
		}
		t := time.NewTimer(reattachDelays[min(attempt, len(reattachDelays)-1)])
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
	trusted := r.trusted(cfg)
	r.mu.Lock()
	if r.closed || e.gen != gen || r.servers[cfg.Name] != e {
		r.mu.Unlock()
		return
	}
	e.cancel = nil
	r.log.Info("shared server restarted by another window; attaching again", "server", cfg.Name)
	r.restartLocked(e, trusted)
	r.rebuildLocked()
	r.mu.Unlock()
	r.changed()
}

// sharedRootsChanged moves each server shared at workspace scope to the instance of the window's
// new folder set (design §3.1). An instance's roots are its folder set and never change (the
// daemon drops a window's roots/list_changed), so on the old one the server would keep a folder
// the person removed from the window, and never see one added. The calls in flight on the old
// attachment end with it, as at a Reconnect. A server running in this window (the daemon out of
// reach) hears roots/list_changed as any other.
func (r *Registry) sharedRootsChanged() {
	if r.opts.Broker == nil {
		return
	}
	type move struct {
		e   *entry
		gen uint64
		cfg config.ServerConfig
	}
	var moves []move
	r.mu.Lock()
	for _, e := range r.servers {
		if e.cfg.Shared != config.SharedWorkspace {
			continue
		}
		// One still starting may have read the old folders for its attach.
		if e.state == StateStarting || (e.state == StateReady && e.conn != nil && sharedStatus(e.conn) != nil) {
			moves = append(moves, move{e, e.gen, e.cfg})
		}
	}
	r.mu.Unlock()
	moved := false
	for _, m := range moves {
		trusted := r.trusted(m.cfg)
		r.mu.Lock()
		if !r.closed && m.e.gen == m.gen && r.servers[m.cfg.Name] == m.e {
			r.log.Info("the window's folders changed; moving the shared server to the instance of its new folders", "server", m.cfg.Name)
			r.restartLocked(m.e, trusted)
			r.rebuildLocked()
			moved = true
		}
		r.mu.Unlock()
	}
	if moved {
		r.changed()
	}
}
