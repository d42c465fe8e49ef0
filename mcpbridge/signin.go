package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/oauth"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

// SignIn runs the MCP authorization flow (revision 2025-11-25) for one HTTP or SSE server: the
// 401's WWW-Authenticate -> protected resource metadata (RFC 9728) -> authorization server
// metadata (RFC 8414 or OpenID discovery, issuer checked), the client (the configured oauth.clientId,
// else dynamic registration, RFC 7591), authorization code with PKCE S256, state and the RFC 9207
// iss checked, the resource (RFC 8707) on every request, a loopback listener on 127.0.0.1 that
// takes one callback. The tokens go to the registry's tokenstore.Store, and the server reconnects.
// The flow itself is package oauth's (oauth.SignIn).
func (r *Registry) SignIn(ctx context.Context, name string, o oauth.SignInOptions) (ServerStatus, error) {
	if r.opts.Tokens == nil {
		return ServerStatus{}, errors.New("mcpbridge: sign-in is not available here (no token store)")
	}
	r.mu.Lock()
	e := r.servers[name]
	var cfg config.ServerConfig
	var wider []string
	var blocked *Blocked
	if e != nil {
		cfg, wider, blocked = e.cfg, strings.Fields(e.wantScope), e.blocked
	}
	r.mu.Unlock()
	if e == nil {
		return ServerStatus{}, fmt.Errorf("mcpbridge: unknown server %q", name)
	}
	if blocked != nil { // the organisation's policy: not even its sign-in page is fetched
		return ServerStatus{}, errors.New(blocked.Message)
	}
	if cfg.Transport == config.TransportStdio {
		return ServerStatus{}, fmt.Errorf("mcpbridge: server %q runs as a program; only http and sse servers sign in", name)
	}
	resolved, err := cfg.Resolve(r.opts.Getenv)
	if err != nil {
		return ServerStatus{}, err
	}
	var settings config.OAuthSettings
	if resolved.OAuth != nil {
		settings = *resolved.OAuth
	}
	if o.Timeout <= 0 {
		o.Timeout = oauth.DefaultSignInTimeout
	}
	// A sign-in is kept under the server's StateKey: a server from a repository keeps its own,
	// under its name and folder, so that another repository's server of the same name never
	// reads, replaces or revokes it. One kept under the bare name (an older Switchboard's, or the
	// user's server of that name) is never taken over by a repository's server: its URL is only
	// words in the repository's file, and a copy would share a live refresh token with whoever
	// else holds it. Such a server asks for its own sign-in once.
	key := resolved.StateKey()
	var prev *tokenstore.Credential
	if c, err := r.opts.Tokens.Load(ctx, key); err == nil {
		prev = &c
	}
	if o.ClientVersion == "" {
		o.ClientVersion = clientVersion
	}
	cred, err := oauth.SignIn(ctx, resolved.URL, settings, wider, prev, o, r.log)
	if err != nil {
		return ServerStatus{}, fmt.Errorf("mcpbridge: sign in to %s: %w", name, err)
	}
	if err := r.opts.Tokens.Save(ctx, key, cred); err != nil {
		return ServerStatus{}, fmt.Errorf("mcpbridge: sign in to %s: keeping the tokens: %w", name, err)
	}
	r.log.Info("mcp server signed in", "server", name, "issuer", cred.Issuer)
	return r.ReconnectServer(ctx, name)
}

// SignOut forgets a server's tokens (revoking them at the authorization server when it says how)
// and restarts the server, which then needs a sign-in again.
func (r *Registry) SignOut(ctx context.Context, name string) (ServerStatus, error) {
	if r.opts.Tokens == nil {
		return ServerStatus{}, errors.New("mcpbridge: sign-in is not available here (no token store)")
	}
	r.mu.Lock()
	e := r.servers[name]
	cfg := config.ServerConfig{Name: name}
	if e != nil {
		cfg = e.cfg
	}
	r.mu.Unlock()
	if err := ForgetSignIn(ctx, r.opts.Tokens, cfg); err != nil {
		return ServerStatus{}, err
	}
	return r.ReconnectServer(ctx, name)
}

// ForgetSignIn signs out of cfg's server: its own credential (under cfg.StateKey) is revoked
// where the authorization server says how, and deleted.
func ForgetSignIn(ctx context.Context, store tokenstore.Store, cfg config.ServerConfig) error {
	return oauth.Forget(ctx, store, cfg.StateKey())
}
