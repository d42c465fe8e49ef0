package oauth

import (
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
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

// protocolVersion is the revision of the probe's initialize: the one mcp-go's client is pinned to
// in mcpbridge (conn.go).
const protocolVersion = mcp.ProtocolVersion20251125

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
	// ClientVersion is the clientInfo.version of the unauthenticated probe; the registry sets it.
	ClientVersion string
}

// Forget deletes a server's credential from store, revoking its refresh token first at the
// authorization server when the sign-in found a revocation endpoint (best effort).
func Forget(ctx context.Context, store tokenstore.Store, name string) error {
	if c, err := store.Load(ctx, name); err == nil && c.RevocationEndpoint != "" {
		revoke(ctx, c)
	}
	if err := store.Delete(ctx, name); err != nil {
		return fmt.Errorf("mcpbridge: sign out of %s: %w", name, err)
	}
	return nil
}

// revoke asks the authorization server to revoke the refresh token (RFC 7009); best effort.
func revoke(ctx context.Context, c tokenstore.Credential) {
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

// probe asks the server, unauthenticated, for its challenge (the WWW-Authenticate of a 401 or
// 403): an initialize, and when the server lets that through (it guards only some methods), a
// tools/list in the session it opened, or, when it refuses initialize otherwise (a server of
// 2026-07-28 has none), a tools/list of that revision. "" when nothing is refused for want of a
// sign-in.
func probe(ctx context.Context, serverURL, clientVersion string) (string, error) {
	hc, err := HTTPClient(serverURL, nil)
	if err != nil {
		return "", err
	}
	post := func(body, session string, header ...string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", protocolVersion)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // ignore error: only the headers count
		resp.Body.Close()
		return resp, nil
	}
	refused := func(r *http.Response) bool {
		return r.StatusCode == http.StatusUnauthorized || r.StatusCode == http.StatusForbidden
	}
	resp, err := post(`{"jsonrpc":"2.0","id":"sb-probe","method":"initialize","params":{"protocolVersion":"`+protocolVersion+`","capabilities":{},"clientInfo":{"name":"switchboard","version":"`+clientVersion+`"}}}`, "")
	if err != nil {
		return "", err
	}
	if refused(resp) {
		return strings.Join(resp.Header.Values("WWW-Authenticate"), ", "), nil
	}
	if resp.StatusCode/100 != 2 {
		// A server of 2026-07-28 has no initialize: a stateless tools/list of that revision.
		resp, err = post(`{"jsonrpc":"2.0","id":"sb-probe-2","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+mcp.ProtocolVersion20260728+`","io.modelcontextprotocol/clientInfo":{"name":"switchboard","version":"`+clientVersion+`"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, "",
			"Mcp-Protocol-Version", mcp.ProtocolVersion20260728, "Mcp-Method", "tools/list")
		if err != nil {
			return "", err
		}
		if refused(resp) {
			return strings.Join(resp.Header.Values("WWW-Authenticate"), ", "), nil
		}
		return "", nil
	}
	session := resp.Header.Get("Mcp-Session-Id")
	if _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session); err != nil {
		return "", err
	}
	resp, err = post(`{"jsonrpc":"2.0","id":"sb-probe-2","method":"tools/list","params":{}}`, session)
	if err != nil {
		return "", err
	}
	if refused(resp) {
		return strings.Join(resp.Header.Values("WWW-Authenticate"), ", "), nil
	}
	return "", nil
}

// SignIn runs the flow against serverURL and returns the credential.
// wider are the scopes a 403 insufficient_scope asked for: requested on top of the configured or
// challenged ones (step-up authorization). prev is the server's stored credential, if any: its
// scopes are kept when the issuer is the same, and it binds a pre-registered client's secret to
// the issuer it was first used with.
func SignIn(ctx context.Context, serverURL string, s config.OAuthSettings, wider []string, prev *tokenstore.Credential, o SignInOptions, log interface {
	Debug(string, ...any)
}) (tokenstore.Credential, error) {
	// The loopback listener first: its port is part of the redirect URI we register.
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.CallbackPort)))
	if err != nil {
		return tokenstore.Credential{}, fmt.Errorf("loopback listener: %w", err)
	}
	defer l.Close()
	redirect := "http://" + l.Addr().String() + "/callback"

	challenge, err := probe(ctx, serverURL, o.ClientVersion)
	if err != nil {
		return tokenstore.Credential{}, fmt.Errorf("reach the server: %w", PlainHTTPError(err))
	}
	if challenge == "" {
		return tokenstore.Credential{}, errors.New("the server did not ask for a sign-in")
	}
	tap := &metadataTap{next: http.DefaultTransport}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: tap}
	prmURL, prmBody, prm, err := findResourceMetadata(ctx, hc, serverURL, challenge)
	if err != nil {
		return tokenstore.Credential{}, fmt.Errorf("discovery: %w", err)
	}
	tap.prmURL, tap.prmBody = prmURL, prmBody
	// One handler per client choice; each discovers from the same resource metadata.
	handler := func(cfg transport.OAuthConfig) *transport.OAuthHandler {
		cfg.RedirectURI, cfg.PKCEEnabled, cfg.HTTPClient = redirect, true, hc
		if cfg.TokenStore == nil {
			cfg.TokenStore = transport.NewMemoryTokenStore()
		}
		h := transport.NewOAuthHandler(cfg)
		h.SetBaseURL(serverURL)
		return h
	}
	meta, err := handler(transport.OAuthConfig{}).GetServerMetadata(ctx)
	if err != nil {
		return tokenstore.Credential{}, fmt.Errorf("discovery: %w", err)
	}
	// mcp-go falls back to made-up /authorize and /token endpoints when there is no metadata;
	// the 2025-11-25 spec has no such fallback, and PKCE support must be advertised.
	if !slices.Contains(meta.CodeChallengeMethodsSupported, "S256") {
		return tokenstore.Credential{}, fmt.Errorf("the authorization server %s does not advertise PKCE S256; refusing to sign in", meta.Issuer)
	}
	issuer := meta.Issuer
	if s.Issuer != "" && issuer != s.Issuer {
		return tokenstore.Credential{}, fmt.Errorf("the server sends you to authorization server %q, but its oauth.issuer is %q: refusing to sign in", issuer, s.Issuer)
	}
	features, err := tap.features(issuer)
	if err != nil {
		return tokenstore.Credential{}, fmt.Errorf("discovery: %w", err)
	}

	scopes := slices.Clone(s.Scopes)
	if len(scopes) == 0 {
		scopes = strings.Fields(challengeParam(challenge, "scope"))
	}
	if len(scopes) == 0 {
		scopes = slices.Clone(prm.ScopesSupported)
	}
	more := slices.Clone(wider)
	if prev != nil && prev.Issuer == issuer {
		more = append(more, strings.Fields(prev.Scope)...) // a step-up keeps what was granted
	}
	for _, sc := range more {
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}

	cfg := transport.OAuthConfig{Scopes: scopes, TokenStore: transport.NewMemoryTokenStore()}
	switch {
	case s.ClientID != "":
		if err := secretBoundTo(s, prev, issuer); err != nil {
			return tokenstore.Credential{}, err
		}
		cfg.ClientID, cfg.ClientSecret = s.ClientID, s.ClientSecret
	case s.ClientMetadataURL != "" && features.CIMD:
		cfg.ClientID = s.ClientMetadataURL // the document at this URL is the registration
	case meta.RegistrationEndpoint == "":
		return tokenstore.Credential{}, errors.New(`the authorization server offers no dynamic client registration: register a client there and set "oauth": {"clientId": ...} in the server's entry`)
	default:
		// With this issuer, every time: no client of another issuer is reused.
		rc, err := registerClient(ctx, hc, meta.RegistrationEndpoint, redirect, scopes)
		if err != nil {
			return tokenstore.Credential{}, fmt.Errorf("client registration: %w", err)
		}
		cfg.ClientID, cfg.ClientSecret, cfg.TokenEndpointAuthMethod = rc.ID, rc.Secret, rc.AuthMethod
	}
	h := handler(cfg)
	if m, err := h.GetServerMetadata(ctx); err != nil || m.Issuer != issuer {
		return tokenstore.Credential{}, fmt.Errorf("discovery: the authorization server changed during the sign-in (%v)", err)
	}
	verifier, err := transport.GenerateCodeVerifier()
	if err != nil {
		return tokenstore.Credential{}, err
	}
	state, err := transport.GenerateState()
	if err != nil {
		return tokenstore.Credential{}, err
	}
	authURL, err := h.GetAuthorizationURL(ctx, state, transport.GenerateCodeChallenge(verifier))
	if err != nil {
		return tokenstore.Credential{}, err
	}
	au, err := url.Parse(authURL)
	if err != nil || (au.Scheme != "https" && !(au.Scheme == "http" && isLoopbackHost(au.Hostname()))) {
		return tokenstore.Credential{}, fmt.Errorf("the authorization endpoint %q is not an https URL", meta.AuthorizationEndpoint)
	}
	resource := au.Query().Get("resource")

	cb := make(chan callbackResult, 1)
	srv := &http.Server{Handler: callbackHandler(state, issuer, features.IssParameter, cb), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l) // ignore error: ends with Close
	defer srv.Close()

	wait, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if err := o.Open(wait, authURL); err != nil {
		return tokenstore.Credential{}, fmt.Errorf("open the sign-in page: %w", err)
	}
	var res callbackResult
	select {
	case res = <-cb:
	case <-wait.Done():
		if ctx.Err() != nil {
			return tokenstore.Credential{}, ctx.Err()
		}
		return tokenstore.Credential{}, fmt.Errorf("%w within %s: nothing was stored", ErrSignInTimeout, o.Timeout)
	}
	if res.err != nil {
		return tokenstore.Credential{}, res.err
	}
	// The code exchange checks state again and sends the verifier, redirect URI and resource.
	if err := h.ProcessAuthorizationResponse(ctx, res.code, state, verifier); err != nil {
		return tokenstore.Credential{}, fmt.Errorf("token exchange: %w", err)
	}
	tok, err := cfg.TokenStore.GetToken(ctx)
	if err != nil || tok.AccessToken == "" {
		return tokenstore.Credential{}, errors.New("token exchange: no access token")
	}
	method := h.GetTokenEndpointAuthMethod()
	if method == "" {
		method = "client_secret_post"
		if h.GetClientSecret() == "" {
			method = "none"
		}
	}
	return tokenstore.Credential{
		URL: serverURL, Resource: resource, Issuer: issuer,
		TokenEndpoint: meta.TokenEndpoint, RevocationEndpoint: meta.RevocationEndpoint,
		ClientID: h.GetClientID(), ClientSecret: h.GetClientSecret(), AuthMethod: method,
		AccessToken: tok.AccessToken, TokenType: "Bearer", RefreshToken: tok.RefreshToken, Scope: tok.Scope, ExpiresAt: tok.ExpiresAt,
	}, nil
}

// secretBoundTo refuses to hand a pre-registered client's secret to an authorization server
// other than the one it was registered with: oauth.issuer when set, else the issuer of the
// sign-in that first used this client (trust on first use). A server that starts naming another
// authorization server would otherwise collect the secret at that server's token endpoint.
func secretBoundTo(s config.OAuthSettings, prev *tokenstore.Credential, issuer string) error {
	if s.ClientSecret == "" {
		return nil
	}
	bound := s.Issuer
	if bound == "" && prev != nil && prev.ClientID == s.ClientID {
		bound = prev.Issuer
	}
	if bound == "" || bound == issuer {
		return nil
	}
	return fmt.Errorf("the server now sends you to authorization server %q, but oauth.clientId %q was used with %q: its secret is not sent there (if the server really moved, set \"oauth\": {\"issuer\": %q} in its entry, or sign out first)", issuer, s.ClientID, bound, issuer)
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
// is not ours, an iss that is not the issuer (RFC 9207 mix-up defence: compared as a plain
// string, with no URL normalization, whether or not the server advertised iss), a missing iss
// when the server advertised authorization_response_iss_parameter_supported, or an error ends
// the sign-in with nothing stored; later requests get 404.
func callbackHandler(state, issuer string, issRequired bool, out chan<- callbackResult) http.Handler {
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
			case q.Has("iss") && q.Get("iss") != issuer:
				res.err = fmt.Errorf("the answer came from issuer %q, not %q (mix-up): nothing was stored", q.Get("iss"), issuer)
			case !q.Has("iss") && issRequired:
				res.err = fmt.Errorf("the answer names no issuer, though %q says its answers do (mix-up defence, RFC 9207): nothing was stored", issuer)
			case q.Get("error") != "":
				res.err = &oauthError{q.Get("error"), q.Get("error_description")}
			case q.Get("code") == "":
				res.err = errors.New("the browser's answer has no authorization code")
			default:
				res.code = q.Get("code")
			}
			// The whole answer is on the wire before the sign-in goes on: the sign-in closes this
			// listener as soon as it ends, and a response still in the handler's buffer then
			// reaches the browser as a reset connection instead of "signed in".
			body, status := "Switchboard: signed in. You can close this tab.\n", http.StatusOK
			if res.err != nil {
				body, status = "Switchboard: the sign-in did not complete. You can close this tab and try again from your editor.\n", http.StatusBadRequest
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Header().Set("Connection", "close")
			w.WriteHeader(status)
			io.WriteString(w, body)
			http.NewResponseController(w).Flush()
			out <- res
		})
		if !taken {
			http.NotFound(w, r)
		}
	})
}
