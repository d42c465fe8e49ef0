package mcpbridge

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

// sandboxed wraps d so that the stdio transport it makes is confined by cfg's sandbox. A dialer
// that makes anything else for a sandboxed server is refused: the server never runs unconfined.
func (r *Registry) sandboxed(d dialFunc, cfg config.ServerConfig) dialFunc {
	spec := r.sandboxSpec(cfg)
	return func(cfg config.ServerConfig, env []string, log *slog.Logger) (transport.Interface, error) {
		tr, err := d(cfg, env, log)
		if err != nil {
			return nil, err
		}
		st, ok := tr.(*stdio.Transport)
		if !ok {
			tr.Close() // ignore error: never started
			return nil, errors.New("sandbox: this server's transport cannot be confined, so it was not started")
		}
		st.Sandbox = spec
		return st, nil
	}
}

// sandboxSpec is what the sandbox needs to know beyond the entry: the home folder, the workspace
// folders (read-only by default), the server's own folder under Switchboard's state, and what is
// never opened: Switchboard's configuration (the allowlist, mcp.json) and state (tokens, pins,
// audit, every other server's folder).
func (r *Registry) sandboxSpec(cfg config.ServerConfig) *stdio.Sandbox {
	home, _ := os.UserHomeDir() // ignore error: Resolve refuses an unknown home
	state := filepath.Dir(tokenstore.DefaultPath(r.getenv))
	confDir := filepath.Dir(config.DefaultUserFile(r.getenv))
	// One folder per definition's place (a workspace server of the same name in another folder
	// gets another), named so a person can find it.
	sum := sha256.Sum256([]byte(cfg.Source + "\x00" + cfg.Name))
	own := filepath.Join(state, "sandboxes", cfg.Name+"-"+hex.EncodeToString(sum[:4]))
	var roots []string
	if r.opts.Roots != nil {
		roots = r.opts.Roots()
	}
	return &stdio.Sandbox{
		OnBlocked: func(string) { r.changed() },
		Profile:   *cfg.Sandbox,
		Env: sandbox.Env{
			Home: home, Workspace: roots, Base: cfg.SandboxBase, StateDir: own,
			Protected: append([]string{state, confDir}, r.opts.SandboxProtected...),
		},
	}
}

func (r *Registry) getenv(k string) (string, bool) {
	if r.opts.Getenv != nil {
		return r.opts.Getenv(k)
	}
	return os.LookupEnv(k)
}
