package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

// errInsufficientScope ends a request the server refused with 403 insufficient_scope.
var errInsufficientScope = errors.New("the server needs a wider permission: sign in again")

// RefreshMargin: an access token this close to its expiry is refreshed before it is sent.
const RefreshMargin = 60 * time.Second

// Bearer puts a signed-in server's access token on the requests to that server's origin,
// refreshes it shortly before it expires and once after a 401, and remembers why the server needs
// the person to sign in (again) when neither helps. One per connection attempt; safe for
// concurrent use.
type Bearer struct {
	store  tokenstore.Store
	server string
	url    string // the resolved server URL the credential must have been issued for
	origin string
	hc     *http.Client // for the token endpoint
	now    func() time.Time

	// Wider, when set, hears the scopes a 403 insufficient_scope named, for the next sign-in.
	Wider func(scope string)

	// mu serialises refreshes (a refresh token may be good for one use) and guards need.
	mu   sync.Mutex
	need string // why the server needs a sign-in; "" = it does not (yet)
}

func NewBearer(store tokenstore.Store, server, serverURL string) *Bearer {
	u, _ := url.Parse(serverURL) // ignore error: validated by config
	return &Bearer{store: store, server: server, url: serverURL, origin: OriginOf(u),
		hc: &http.Client{Timeout: 30 * time.Second}, now: time.Now}
}

// NeedsAuth says why the server needs a sign-in, or "".
func (b *Bearer) NeedsAuth() string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.need
}

func (b *Bearer) setNeed(why string) {
	b.mu.Lock()
	if b.need == "" {
		b.need = why
	}
	b.mu.Unlock()
}

// current returns the credential to send, refreshed first when it is about to expire (or when
// force is set and the token is still the one that was refused).
func (b *Bearer) current(ctx context.Context, refused string) (tokenstore.Credential, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, err := b.store.Load(ctx, b.server)
	if err != nil || c.URL != b.url || c.AccessToken == "" {
		return tokenstore.Credential{}, false
	}
	stale := !c.ExpiresAt.IsZero() && b.now().Add(RefreshMargin).After(c.ExpiresAt)
	if !stale && (refused == "" || refused != c.AccessToken) {
		return c, true
	}
	if c.RefreshToken == "" {
		return c, !stale || refused == ""
	}
	nc, err := refreshCredential(ctx, b.hc, c)
	if err != nil {
		// The refresh token is spent or revoked: only a new sign-in helps.
		b.need = "sign-in expired: " + plainOAuthError(err)
		return tokenstore.Credential{}, false
	}
	if err := b.store.Save(ctx, b.server, nc); err != nil {
		b.need = "could not keep the refreshed sign-in: " + err.Error()
		return tokenstore.Credential{}, false
	}
	return nc, true
}

// Wrap returns a RoundTripper that authorizes next's requests to the server's origin.
func (b *Bearer) Wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if OriginOf(req.URL) != b.origin {
			return next.RoundTrip(req)
		}
		c, ok := b.current(req.Context(), "")
		send := func(c tokenstore.Credential, ok bool) (*http.Response, error) {
			r := req.Clone(req.Context())
			if ok {
				r.Header.Set("Authorization", "Bearer "+c.AccessToken)
			}
			return next.RoundTrip(r)
		}
		resp, err := send(c, ok)
		if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
			return resp, err
		}
		challenge := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode == http.StatusForbidden {
			if strings.Contains(challenge, "insufficient_scope") {
				if sc := challengeParam(challenge, "scope"); sc != "" && b.Wider != nil {
					b.Wider(sc)
				}
				b.setNeed("the server needs a wider permission (scope " + challengeParam(challenge, "scope") + "): sign in again")
				// The request cannot succeed before a new sign-in: it fails at the transport, so
				// the call ends as "needs sign-in" instead of as the server's error body.
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // ignore error: replaced
				resp.Body.Close()
				return nil, errInsufficientScope
			}
			return resp, nil
		}
		if !ok {
			b.setNeed("sign-in required")
			return resp, nil
		}
		// A credential belongs to its issuer: when the server now names other authorization
		// servers, neither the token nor the refresh token (nor the client) is used again.
		if moved := b.issuerMoved(req.Context(), challenge, c); moved != "" {
			b.setNeed(moved)
			return resp, nil
		}
		// One refresh after a 401, then the request once more if its body can be replayed.
		nc, ok2 := b.current(req.Context(), c.AccessToken)
		if !ok2 || nc.AccessToken == c.AccessToken || (req.Body != nil && req.GetBody == nil) {
			b.setNeed("sign-in expired or revoked")
			return resp, nil
		}
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return resp, nil
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // ignore error: replaced
		resp.Body.Close()
		resp, err = send(nc, true)
		if err == nil && resp.StatusCode == http.StatusUnauthorized {
			b.setNeed("sign-in expired or revoked")
		}
		return resp, err
	})
}

// issuerMoved says why the credential's issuer is no longer the server's authorization server
// (its protected resource metadata names others: SEP-2352 migration), or "". A server whose
// metadata cannot be read keeps its credential: the refresh decides then.
func (b *Bearer) issuerMoved(ctx context.Context, challenge string, c tokenstore.Credential) string {
	_, _, prm, err := findResourceMetadata(ctx, b.hc, b.url, challenge)
	if err != nil || len(prm.AuthorizationServers) == 0 {
		return ""
	}
	for _, as := range prm.AuthorizationServers {
		if strings.TrimSuffix(as, "/") == strings.TrimSuffix(c.Issuer, "/") {
			return ""
		}
	}
	return "the server moved to another authorization server (" + prm.AuthorizationServers[0] + "): sign in again"
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// challengeParam is one auth-param of a WWW-Authenticate header (quoted or token).
func challengeParam(h, name string) string {
	for _, part := range splitChallenge(h) {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if i := strings.LastIndexByte(k, ' '); i >= 0 { // "Bearer realm" -> "realm"
			k = k[i+1:]
		}
		if strings.EqualFold(k, name) {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// splitChallenge splits on commas outside quotes.
func splitChallenge(h string) []string {
	var parts []string
	var b strings.Builder
	quoted := false
	for _, r := range h {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ',' && !quoted:
			parts = append(parts, b.String())
			b.Reset()
			continue
		}
		b.WriteRune(r)
	}
	return append(parts, b.String())
}

// refreshCredential runs the refresh_token grant (with the RFC 8707 resource) at the endpoint
// the sign-in found, and returns the credential with the new tokens.
func refreshCredential(ctx context.Context, hc *http.Client, c tokenstore.Credential) (tokenstore.Credential, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {c.RefreshToken}}
	if c.Resource != "" {
		form.Set("resource", c.Resource)
	}
	tok, err := tokenRequest(ctx, hc, c, form)
	if err != nil {
		return tokenstore.Credential{}, err
	}
	nc := c
	nc.AccessToken, nc.TokenType, nc.ExpiresAt = tok.AccessToken, tok.TokenType, tok.expiresAt(time.Now())
	if tok.RefreshToken != "" {
		nc.RefreshToken = tok.RefreshToken
	}
	if tok.Scope != "" {
		nc.Scope = tok.Scope
	}
	return nc, nil
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
	ErrorDesc    string `json:"error_description"`
}

func (t tokenResponse) expiresAt(now time.Time) time.Time {
	if t.ExpiresIn <= 0 {
		return time.Time{}
	}
	return now.Add(time.Duration(t.ExpiresIn) * time.Second)
}

// oauthError is an error answer of the authorization server.
type oauthError struct{ Code, Description string }

func (e *oauthError) Error() string {
	if e.Description == "" {
		return e.Code
	}
	return e.Code + ": " + e.Description
}

func tokenRequest(ctx context.Context, hc *http.Client, c tokenstore.Credential, form url.Values) (tokenResponse, error) {
	basic := c.AuthMethod == "client_secret_basic" && c.ClientSecret != ""
	if !basic {
		form.Set("client_id", c.ClientID)
		if c.ClientSecret != "" && c.AuthMethod != "none" {
			form.Set("client_secret", c.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return tokenResponse{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		req.SetBasicAuth(url.QueryEscape(c.ClientID), url.QueryEscape(c.ClientSecret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return tokenResponse{}, err
	}
	defer resp.Body.Close()
	var tok tokenResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&tok); err != nil {
		return tokenResponse{}, fmt.Errorf("token endpoint answered %d with no JSON", resp.StatusCode)
	}
	if tok.Error != "" || resp.StatusCode/100 != 2 {
		return tokenResponse{}, &oauthError{tok.Error, tok.ErrorDesc}
	}
	if tok.AccessToken == "" {
		return tokenResponse{}, errors.New("token endpoint answered without an access token")
	}
	return tok, nil
}

// plainOAuthError is an error for a status line: never a token (the errors built here hold none).
func plainOAuthError(err error) string {
	var oe *oauthError
	if errors.As(err, &oe) {
		return oe.Error()
	}
	return err.Error()
}
