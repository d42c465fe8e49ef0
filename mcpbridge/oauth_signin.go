package mcpbridge

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// DefaultSignInTimeout bounds the wait for the browser's answer.
const DefaultSignInTimeout = 5 * time.Minute

// ErrSignInTimeout: the browser never came back to the loopback listener.
var ErrSignInTimeout = errors.New("no answer from the browser")

// SignInOptions say how to run one sign-in.
type SignInOptions struct {
	// Open shows the authorization URL to the person (a browser, the editor's showDocument, or
	// printing it). Its error ends the sign-in.
	Open func(ctx context.Context, authURL string) error
	// Timeout bounds the wait for the callback (0 = DefaultSignInTimeout).
	Timeout time.Duration
}

// SignIn runs the MCP authorization flow (revision 2025-11-25) for one HTTP or SSE server: the
// 401's WWW-Authenticate -> protected resource metadata (RFC 9728) -> authorization server
// metadata (RFC 8414 or OpenID discovery, issuer checked), the client (the configured oauth.clientId,
// else dynamic registration, RFC 7591), authorization code with PKCE S256, state and the RFC 9207
// iss checked, the resource (RFC 8707) on every request, a loopback listener on 127.0.0.1 that
// takes one callback. The tokens go to the registry's TokenStore, and the server reconnects.
// mcp-go's OAuthHandler does the discovery, registration and code exchange (see oauthFlow).
func (r *Registry) SignIn(ctx context.Context, name string, o SignInOptions) (ServerStatus, error) {
	if r.opts.Tokens == nil {
		return ServerStatus{}, errors.New("mcpbridge: sign-in is not available here (no token store)")
	}
	r.mu.Lock()
	e := r.servers[name]
	var cfg ServerConfig
	var wider []string
	if e != nil {
		cfg, wider = e.cfg, strings.Fields(e.wantScope)
	}
	r.mu.Unlock()
	if e == nil {
		return ServerStatus{}, fmt.Errorf("mcpbridge: unknown server %q", name)
	}
	if cfg.Transport == TransportStdio {
		return ServerStatus{}, fmt.Errorf("mcpbridge: server %q runs as a program; only http and sse servers sign in", name)
	}
	resolved, err := cfg.Resolve(r.opts.Getenv)
	if err != nil {
		return ServerStatus{}, err
	}
	var settings OAuthSettings
	if resolved.OAuth != nil {
		settings = *resolved.OAuth
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultSignInTimeout
	}
	cred, err := signIn(ctx, resolved.URL, settings, wider, o, r.log)
	if err != nil {
		return ServerStatus{}, fmt.Errorf("mcpbridge: sign in to %s: %w", name, err)
	}
	if err := r.opts.Tokens.Save(ctx, name, cred); err != nil {
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
	if err := Forget(ctx, r.opts.Tokens, name); err != nil {
		return ServerStatus{}, err
	}
	return r.ReconnectServer(ctx, name)
}

// Forget deletes a server's credential from store, revoking its refresh token first at the
// authorization server when the sign-in found a revocation endpoint (best effort).
func Forget(ctx context.Context, store TokenStore, name string) error {
	if c, err := store.Load(ctx, name); err == nil && c.RevocationEndpoint != "" {
		revoke(ctx, c)
	}
	if err := store.Delete(ctx, name); err != nil {
		return fmt.Errorf("mcpbridge: sign out of %s: %w", name, err)
	}
	return nil
}

// revoke asks the authorization server to revoke the refresh token (RFC 7009); best effort.
func revoke(ctx context.Context, c Credential) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tok := c.RefreshToken
	if tok == "" {
		tok = c.AccessToken
	}
	form := url.Values{"token": {tok}, "client_id": {c.ClientID}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.RevocationEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// probe sends an unauthenticated initialize and returns the server's 401 (or 403).
func probe(ctx context.Context, serverURL string) (*http.Response, error) {
	hc, err := httpClient(serverURL, nil)
	if err != nil {
		return nil, err
	}
	body := `{"jsonrpc":"2.0","id":"sb-probe","method":"initialize","params":{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"switchboard","version":"` + clientVersion + `"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // ignore error: only the headers count
	resp.Body.Close()
	return resp, nil
}

// signIn runs the flow against serverURL and returns the credential.
// wider are the scopes a 403 insufficient_scope asked for: requested on top of the configured or
// challenged ones (step-up authorization).
func signIn(ctx context.Context, serverURL string, s OAuthSettings, wider []string, o SignInOptions, log interface {
	Debug(string, ...any)
}) (Credential, error) {
	// The loopback listener first: its port is part of the redirect URI we register.
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.CallbackPort)))
	if err != nil {
		return Credential{}, fmt.Errorf("loopback listener: %w", err)
	}
	defer l.Close()
	redirect := "http://" + l.Addr().String() + "/callback"

	scopes := slices.Clone(s.Scopes)
	resp, err := probe(ctx, serverURL)
	if err != nil {
		return Credential{}, fmt.Errorf("reach the server: %w", plainHTTPError(err))
	}
	if resp.StatusCode == http.StatusSwitchingProtocols || resp.StatusCode/100 == 2 {
		return Credential{}, errors.New("the server did not ask for a sign-in")
	}
	challenge := strings.Join(resp.Header.Values("WWW-Authenticate"), ", ")
	if len(scopes) == 0 {
		scopes = strings.Fields(challengeParam(challenge, "scope"))
	}
	for _, sc := range wider {
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	tokens := transport.NewMemoryTokenStore()
	h := transport.NewOAuthHandler(transport.OAuthConfig{
		ClientID: s.ClientID, ClientSecret: s.ClientSecret, RedirectURI: redirect, Scopes: scopes,
		PKCEEnabled: true, HTTPClient: &http.Client{Timeout: 30 * time.Second}, TokenStore: tokens,
	})
	h.SetBaseURL(serverURL)
	h.HandleUnauthorizedResponse(resp) // resource_metadata, when on the server's origin
	meta, err := h.GetServerMetadata(ctx)
	if err != nil {
		return Credential{}, fmt.Errorf("discovery: %w", err)
	}
	// mcp-go falls back to made-up /authorize and /token endpoints when there is no metadata;
	// the 2025-11-25 spec has no such fallback, and PKCE support must be advertised.
	if !slices.Contains(meta.CodeChallengeMethodsSupported, "S256") {
		return Credential{}, fmt.Errorf("the authorization server %s does not advertise PKCE S256; refusing to sign in", meta.Issuer)
	}
	if s.ClientID == "" {
		if meta.RegistrationEndpoint == "" {
			return Credential{}, errors.New(`the authorization server offers no dynamic client registration: register a client there and set "oauth": {"clientId": ...} in the server's entry`)
		}
		if err := h.RegisterClient(ctx, "Switchboard"); err != nil {
			return Credential{}, fmt.Errorf("client registration: %w", err)
		}
	}
	verifier, err := transport.GenerateCodeVerifier()
	if err != nil {
		return Credential{}, err
	}
	state, err := transport.GenerateState()
	if err != nil {
		return Credential{}, err
	}
	authURL, err := h.GetAuthorizationURL(ctx, state, transport.GenerateCodeChallenge(verifier))
	if err != nil {
		return Credential{}, err
	}
	au, err := url.Parse(authURL)
	if err != nil || (au.Scheme != "https" && !(au.Scheme == "http" && isLoopbackHost(au.Hostname()))) {
		return Credential{}, fmt.Errorf("the authorization endpoint %q is not an https URL", meta.AuthorizationEndpoint)
	}
	resource := au.Query().Get("resource")

	cb := make(chan callbackResult, 1)
	srv := &http.Server{Handler: callbackHandler(state, meta.Issuer, cb), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l) // ignore error: ends with Close
	defer srv.Close()

	wait, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if err := o.Open(wait, authURL); err != nil {
		return Credential{}, fmt.Errorf("open the sign-in page: %w", err)
	}
	var res callbackResult
	select {
	case res = <-cb:
	case <-wait.Done():
		if ctx.Err() != nil {
			return Credential{}, ctx.Err()
		}
		return Credential{}, fmt.Errorf("%w within %s: nothing was stored", ErrSignInTimeout, o.Timeout)
	}
	if res.err != nil {
		return Credential{}, res.err
	}
	// The code exchange checks state again and sends the verifier, redirect URI and resource.
	if err := h.ProcessAuthorizationResponse(ctx, res.code, state, verifier); err != nil {
		return Credential{}, fmt.Errorf("token exchange: %w", err)
	}
	tok, err := tokens.GetToken(ctx)
	if err != nil || tok.AccessToken == "" {
		return Credential{}, errors.New("token exchange: no access token")
	}
	method := h.GetTokenEndpointAuthMethod()
	if method == "" {
		method = "client_secret_post"
		if h.GetClientSecret() == "" {
			method = "none"
		}
	}
	return Credential{
		URL: serverURL, Resource: resource, Issuer: meta.Issuer,
		TokenEndpoint: meta.TokenEndpoint, RevocationEndpoint: meta.RevocationEndpoint,
		ClientID: h.GetClientID(), ClientSecret: h.GetClientSecret(), AuthMethod: method,
		AccessToken: tok.AccessToken, TokenType: "Bearer", RefreshToken: tok.RefreshToken, Scope: tok.Scope, ExpiresAt: tok.ExpiresAt,
	}, nil
}

func isLoopbackHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "localhost" || (ip != nil && ip.IsLoopback())
}

type callbackResult struct {
	code string
	err  error
}

// callbackHandler takes exactly one request on /callback: the first one decides. A state that
// is not ours, an iss that is not the issuer (RFC 9207 mix-up defence) or an error ends the
// sign-in with nothing stored; later requests get 404.
func callbackHandler(state, issuer string, out chan<- callbackResult) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		taken := false
		once.Do(func() {
			taken = true
			q := r.URL.Query()
			var res callbackResult
			switch {
			case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1:
				res.err = errors.New("the browser's answer does not belong to this sign-in (state differs): nothing was stored")
			case q.Get("iss") != "" && strings.TrimSuffix(q.Get("iss"), "/") != strings.TrimSuffix(issuer, "/"):
				res.err = fmt.Errorf("the answer came from issuer %q, not %q (mix-up): nothing was stored", q.Get("iss"), issuer)
			case q.Get("error") != "":
				res.err = &oauthError{q.Get("error"), q.Get("error_description")}
			case q.Get("code") == "":
				res.err = errors.New("the browser's answer has no authorization code")
			default:
				res.code = q.Get("code")
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			if res.err != nil {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, "Switchboard: the sign-in did not complete. You can close this tab and try again from your editor.\n")
			} else {
				io.WriteString(w, "Switchboard: signed in. You can close this tab.\n")
			}
			out <- res
		})
		if !taken {
			http.NotFound(w, r)
		}
	})
}
