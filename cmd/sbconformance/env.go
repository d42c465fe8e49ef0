package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/oauth"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
	"github.com/switchboard-dev/switchboard/permissions"
)

// server is the name the scenario's server gets in the written mcp.json.
const server = "conformance"

// maxSignIns bounds the sign-ins of one scenario: a person asked again and again would stop
// too (auth/scope-retry-limit checks that a client does).
const maxSignIns = 3

// env is one scenario's Switchboard: its private config and state directories, the registry
// and the gate.
type env struct {
	log      *slog.Logger
	dir      string
	scenario string
	url      string
	context  map[string]json.RawMessage // MCP_CONFORMANCE_CONTEXT, nil when unset

	reg   *mcpbridge.Registry
	gate  *permissions.Gate
	cfgs  []config.ServerConfig
	store tokenstore.Store

	signIns int
	changed chan struct{} // Options.OnChange: something changed (capacity 1: coalesces)
}

// newEnv writes the scenario's mcp.json, loads it the way the editor does and opens the
// registry on it (nothing connects before connect).
func newEnv(ctx context.Context, log *slog.Logger, scenario, serverURL string) (*env, error) {
	dir, err := os.MkdirTemp("", "sbconformance-")
	if err != nil {
		return nil, err
	}
	e := &env{log: log, dir: dir, scenario: scenario, url: serverURL, changed: make(chan struct{}, 1)}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &e.context); err != nil {
			e.close()
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT is not a JSON object: %w", err)
		}
	}
	// Nothing of the person running the suite is read or written: config, state (tokens,
	// pins) and the keychain-less token file all live in dir.
	for k, sub := range map[string]string{"XDG_CONFIG_HOME": "config", "XDG_STATE_HOME": "state", "XDG_CACHE_HOME": "cache"} {
		if err := os.Setenv(k, filepath.Join(dir, sub)); err != nil {
			e.close()
			return nil, err
		}
	}
	entry, err := e.serverEntry()
	if err != nil {
		e.close()
		return nil, err
	}
	user := config.DefaultUserFile(nil)
	if err := writeConfig(user, map[string]any{"servers": map[string]any{server: entry}}); err != nil {
		e.close()
		return nil, err
	}
	cfgs, errs := config.LoadConfig(config.ConfigSources{})
	if len(errs) > 0 {
		e.close()
		return nil, fmt.Errorf("config %s: %w", user, errors.Join(errs...))
	}
	e.cfgs = cfgs
	e.store = tokenstore.NewFile(tokenstore.DefaultPath(nil))
	e.reg = mcpbridge.NewRegistry(mcpbridge.Options{
		Logger: log,
		Tokens: e.store,
		Roots:  func() []string { return []string{dir} },
		Elicit: answerWithDefaults(log),
		Sample: sampleFixed,
		OnChange: func([]mcpbridge.ServerStatus) {
			select {
			case e.changed <- struct{}{}:
			default:
			}
		},
	})
	e.gate = permissions.NewGate(permissions.GateOptions{Logger: log})
	return e, nil
}

// serverEntry is the scenario's server as a user writes it: its URL, and the oauth object a
// scenario that hands out a pre-registered client needs. SBCONFORMANCE_PROTOCOL, when set, is
// written as the entry's "protocol" (default: none, the era is Switchboard's own choice).
func (e *env) serverEntry() (map[string]any, error) {
	entry := map[string]any{"type": "http", "url": e.url}
	if p := os.Getenv("SBCONFORMANCE_PROTOCOL"); p != "" {
		if p == "era" {
			p = os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
		}
		entry["protocol"] = p
	}
	oauth, err := e.oauthEntry()
	if err != nil {
		return nil, err
	}
	if oauth != nil {
		entry["oauth"] = oauth
	}
	return entry, nil
}

func writeConfig(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

func (e *env) close() {
	if e.reg != nil {
		e.reg.Close() // ignore error: the scenario's outcome is already decided
	}
	os.RemoveAll(e.dir) // ignore error: a temporary directory
}

// connect starts the server and waits until it is ready, signing in when it needs it.
func (e *env) connect(ctx context.Context) error {
	e.reg.Apply(ctx, e.cfgs)
	if err := e.reg.WaitStarted(ctx, server); err != nil {
		return err
	}
	return e.ready(ctx)
}

// ready signs in while the server needs it (at most maxSignIns times in all) and fails with
// the server's own error otherwise.
func (e *env) ready(ctx context.Context) error {
	for {
		st := e.status()
		switch st.State {
		case mcpbridge.StateReady:
			return nil
		case mcpbridge.StateNeedsAuth:
			if e.signIns >= maxSignIns {
				return fmt.Errorf("still needs a sign-in after %d (%s): giving up", e.signIns, st.Error)
			}
			e.signIns++
			e.log.Info("signing in", "attempt", e.signIns, "why", st.Error)
			if _, err := e.reg.SignIn(ctx, server, oauth.SignInOptions{Open: followRedirect(e.log)}); err != nil {
				return err
			}
		default:
			return fmt.Errorf("server is %s: %s", st.State, st.Error)
		}
	}
}

func (e *env) status() mcpbridge.ServerStatus {
	for _, st := range e.reg.Servers() {
		if st.Name == server {
			return st
		}
	}
	return mcpbridge.ServerStatus{Name: server, State: "absent"}
}

// tools are the server's registered tools, by the server's own names.
func (e *env) tools() map[string]mcpbridge.Tool {
	out := map[string]mcpbridge.Tool{}
	for _, t := range e.reg.Tools() {
		if t.Server == server {
			out[t.Tool] = t
		}
	}
	return out
}

// call runs one of the server's tools through the gate (always-allow), as the agent's calls
// run. When the call leaves the server needing a sign-in (a 403 insufficient_scope, an expired
// sign-in), it signs in and calls once more, as the person answering "Sign in" would.
func (e *env) call(ctx context.Context, tool string, args any) (mcpbridge.Result, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return mcpbridge.Result{}, err
	}
	for attempt := 0; ; attempt++ {
		t, ok := e.tools()[tool]
		if !ok {
			return mcpbridge.Result{}, fmt.Errorf("the server has no tool %q", tool)
		}
		d, err := e.gate.Check(ctx, permissions.Request{Tool: t.Name, Server: server, Arguments: raw, Mode: permissions.AlwaysAllow})
		if err != nil || !d.Allowed {
			return mcpbridge.Result{}, fmt.Errorf("the gate said no to %s: %s", t.Name, d.Reason)
		}
		res, err := e.reg.Call(ctx, t.Name, raw)
		if err != nil {
			return res, err
		}
		e.log.Info("tool called", "tool", t.Name, "isError", res.IsError, "text", res.Text)
		if !res.IsError || attempt > 0 {
			return res, nil
		}
		if !strings.Contains(res.Text, "needs you to sign in") {
			return res, nil // the tool's own error
		}
		// The registry marks the server needs-auth on its watcher goroutine: wait for it.
		for e.status().State == mcpbridge.StateReady {
			select {
			case <-e.changed:
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		if err := e.reg.WaitStarted(ctx, server); err != nil {
			return res, err
		}
		if err := e.ready(ctx); err != nil {
			return res, err
		}
	}
}
