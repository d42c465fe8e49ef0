package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/oauth"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

// browser plays the person's browser: it opens the authorization URL, and the test authorization
// server approves at once and redirects to the loopback listener.
func browser(ctx context.Context, authURL string) error {
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	return nil
}

// oauthServer starts mcptest --oauth and returns a registry with an in-memory token store, the
// server's config and a log buffer.
type oauthEnv struct {
	url    string
	r      *Registry
	tokens *tokenstore.Memory
	cfg    config.ServerConfig
	logMu  sync.Mutex
	logBuf bytes.Buffer
}

func (e *oauthEnv) Write(p []byte) (int, error) {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	return e.logBuf.Write(p)
}

func (e *oauthEnv) logs() string {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	return e.logBuf.String()
}

func newOAuthEnv(t *testing.T, flag string, args ...string) *oauthEnv {
	t.Helper()
	e := &oauthEnv{tokens: tokenstore.NewMemory()}
	e.url = startMCPTestHTTP(t, flag, append([]string{"--oauth"}, args...)...)
	e.r = newTestRegistry(t, Options{Tokens: e.tokens, PingInterval: -1,
		Logger: slog.New(slog.NewTextHandler(e, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Getenv: func(k string) (string, bool) {
			if k == "PRE_SECRET" {
				return "s3cret", true
			}
			return "", false
		}})
	tr := config.TransportHTTP
	if flag == "--sse" {
		tr = config.TransportSSE
	}
	e.cfg = config.ServerConfig{Name: "remote", Transport: tr, URL: e.url, StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second, Source: "test"}
	return e
}

func (e *oauthEnv) stats(t *testing.T) (map[string]int, map[string]string) {
	t.Helper()
	u, _ := url.Parse(e.url)
	resp, err := http.Get(u.Scheme + "://" + u.Host + "/control/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Stats     map[string]int    `json:"stats"`
		Authorize map[string]string `json:"authorize"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Stats, out.Authorize
}

func (e *oauthEnv) control(t *testing.T, what string) {
	t.Helper()
	u, _ := url.Parse(e.url)
	resp, err := http.Post(u.Scheme+"://"+u.Host+"/control/"+what, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func (e *oauthEnv) signIn(t *testing.T, open func(context.Context, string) error, timeout time.Duration) (ServerStatus, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return e.r.SignIn(ctx, "remote", oauth.SignInOptions{Open: open, Timeout: timeout})
}

func (e *oauthEnv) echo(t *testing.T) Result {
	t.Helper()
	res, err := e.r.Call(context.Background(), "mcp__remote__echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// assertNeedsAuth: the server waits for a sign-in and nothing is stored.
func (e *oauthEnv) assertNeedsAuth(t *testing.T, stored bool) {
	t.Helper()
	if s := statusMap(e.r)["remote"]; s.State != StateNeedsAuth || s.Error == "" {
		t.Errorf("status = %+v, want needs-auth with a reason", s)
	}
	if _, err := e.tokens.Load(context.Background(), "remote"); (err == nil) != stored {
		t.Errorf("credential stored = %v, want %v", err == nil, stored)
	}
}

func TestOAuthSignInDCR(t *testing.T) {
	for _, flag := range []string{"--http", "--sse"} {
		t.Run(flag, func(t *testing.T) {
			e := newOAuthEnv(t, flag)
			applyAndWait(t, e.r, e.cfg)
			e.assertNeedsAuth(t, false)
			st, err := e.signIn(t, browser, 20*time.Second)
			if err != nil || st.State != StateReady || st.Tools == 0 {
				t.Fatalf("SignIn = %+v, %v; want ready", st, err)
			}
			if res := e.echo(t); res.IsError || !strings.Contains(res.Text, "hi") {
				t.Fatalf("echo after sign-in = %+v", res)
			}
			stats, authz := e.stats(t)
			if stats["register"] != 1 || stats["code"] != 1 {
				t.Errorf("stats = %v, want one registration and one code exchange", stats)
			}
			if authz["resource"] != e.url || authz["code_challenge_method"] != "S256" || authz["scope"] != "mcp" ||
				!strings.HasPrefix(authz["redirect_uri"], "http://127.0.0.1:") {
				t.Errorf("authorize request = %v: want resource %s, PKCE S256, the challenge's scope, a loopback redirect", authz, e.url)
			}
			c, err := e.tokens.Load(context.Background(), "remote")
			if err != nil || c.AccessToken == "" || c.RefreshToken == "" || c.Resource != e.url {
				t.Fatalf("stored credential = %+v, %v", c, err)
			}
			// Tokens never reach a log line or a status.
			statuses, _ := json.Marshal(e.r.Servers())
			for _, secret := range []string{c.AccessToken, c.RefreshToken} {
				if strings.Contains(e.logs(), secret) || strings.Contains(string(statuses), secret) {
					t.Errorf("a token leaked into the logs or statuses")
				}
			}
		})
	}
}

func TestOAuthPreRegisteredClient(t *testing.T) {
	e := newOAuthEnv(t, "--http", "--oauth-no-dcr", "--oauth-client-id", "pre-1", "--oauth-client-secret", "s3cret")
	applyAndWait(t, e.r, e.cfg)
	// Without a clientId the person is told what to configure.
	if _, err := e.signIn(t, browser, 5*time.Second); err == nil || !strings.Contains(err.Error(), "clientId") {
		t.Fatalf("SignIn without DCR or clientId = %v, want an error naming clientId", err)
	}
	e.cfg.OAuth = &config.OAuthSettings{ClientID: "pre-1", ClientSecret: "${env:PRE_SECRET}"}
	applyAndWait(t, e.r, e.cfg)
	st, err := e.signIn(t, browser, 20*time.Second)
	if err != nil || st.State != StateReady {
		t.Fatalf("SignIn = %+v, %v", st, err)
	}
	if stats, authz := e.stats(t); stats["register"] != 0 || authz["client_id"] != "pre-1" {
		t.Errorf("stats %v, authorize %v: want the pre-registered client, no registration", stats, authz)
	}
	if strings.Contains(e.logs(), "s3cret") {
		t.Errorf("client secret in the logs")
	}
}

func TestOAuthRefreshBeforeExpiry(t *testing.T) {
	e := newOAuthEnv(t, "--http")
	applyAndWait(t, e.r, e.cfg)
	if _, err := e.signIn(t, browser, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	before, _ := e.stats(t)
	// The token is now about to expire (within oauth.RefreshMargin): it is refreshed before it is sent.
	c, _ := e.tokens.Load(context.Background(), "remote")
	old := c.AccessToken
	c.ExpiresAt = time.Now().Add(oauth.RefreshMargin / 2)
	e.tokens.Save(context.Background(), "remote", c)
	if res := e.echo(t); res.IsError {
		t.Fatalf("echo = %+v", res)
	}
	after, _ := e.stats(t)
	if after["refresh"] != 1 || after["401"] != before["401"] {
		t.Errorf("refreshes %d, 401s %d -> %d: want one refresh and no 401", after["refresh"], before["401"], after["401"])
	}
	if c, _ := e.tokens.Load(context.Background(), "remote"); c.AccessToken == old {
		t.Errorf("stored token was not replaced")
	}
}

func TestOAuthExpiredTokenRefreshesOnce(t *testing.T) {
	e := newOAuthEnv(t, "--http")
	applyAndWait(t, e.r, e.cfg)
	if _, err := e.signIn(t, browser, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	e.control(t, "expire") // the server expired it early: the client learns it from a 401
	if res := e.echo(t); res.IsError {
		t.Fatalf("echo after server-side expiry = %+v, want the refreshed token to work", res)
	}
	if stats, _ := e.stats(t); stats["refresh"] != 1 {
		t.Errorf("stats = %v, want one refresh", stats)
	}
	if s := statusMap(e.r)["remote"]; s.State != StateReady {
		t.Errorf("status = %+v, want ready", s)
	}
}

func TestOAuthRevokedTokenNeedsAuth(t *testing.T) {
	e := newOAuthEnv(t, "--http")
	applyAndWait(t, e.r, e.cfg)
	if _, err := e.signIn(t, browser, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	e.control(t, "revoke")
	if res := e.echo(t); !res.IsError || !strings.Contains(res.Text, "sign in") {
		t.Fatalf("echo after revocation = %+v, want an error that says to sign in", res)
	}
	waitState(t, e.r, "remote", StateNeedsAuth)
	// A restart keeps it at needs-auth, not failed.
	if st, _ := e.r.ReconnectServer(context.Background(), "remote"); st.State != StateNeedsAuth {
		t.Errorf("after reconnect: %+v, want needs-auth", st)
	}
}

func waitState(t *testing.T, r *Registry, name, state string) {
	t.Helper()
	ch := make(chan struct{}, 1)
	deadline := time.After(10 * time.Second)
	for statusMap(r)[name].State != state {
		r.mu.Lock()
		done := r.servers[name].done
		r.mu.Unlock()
		select {
		case <-done:
		case <-ch:
		case <-deadline:
			t.Fatalf("server %s: %+v, want %s", name, statusMap(r)[name], state)
		case <-time.After(20 * time.Millisecond): // poll: watch (registry) runs on its own goroutine
		}
	}
}

func TestOAuthWrongState(t *testing.T) {
	e := newOAuthEnv(t, "--http")
	applyAndWait(t, e.r, e.cfg)
	// An attacker's page reaches the loopback listener first with its own state and code.
	forge := func(ctx context.Context, authURL string) error {
		u, _ := url.Parse(authURL)
		cb := u.Query().Get("redirect_uri") + "?code=attacker-code&state=attacker-state"
		resp, err := http.Get(cb)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return browser(ctx, authURL) // the real answer arrives too late
	}
	_, err := e.signIn(t, forge, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "state") {
		t.Fatalf("SignIn with a forged callback = %v, want a state error", err)
	}
	e.assertNeedsAuth(t, false)
	if stats, _ := e.stats(t); stats["code"] != 0 {
		t.Errorf("a code was exchanged: %v", stats)
	}
}

func TestOAuthWrongIssuer(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"--oauth-wrong-issuer", "issuer"}, // metadata declares another issuer (RFC 8414 3.3)
		{"--oauth-wrong-iss", "mix-up"},    // the authorization response names another one (RFC 9207)
	} {
		t.Run(tc.flag, func(t *testing.T) {
			e := newOAuthEnv(t, "--http", tc.flag)
			applyAndWait(t, e.r, e.cfg)
			_, err := e.signIn(t, browser, 10*time.Second)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("SignIn = %v, want an error about %s", err, tc.want)
			}
			e.assertNeedsAuth(t, false)
		})
	}
}

func TestOAuthResourceMismatch(t *testing.T) {
	e := newOAuthEnv(t, "--http", "--oauth-wrong-resource")
	applyAndWait(t, e.r, e.cfg)
	opened := false
	_, err := e.signIn(t, func(ctx context.Context, u string) error { opened = true; return browser(ctx, u) }, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "resource") || opened {
		t.Fatalf("SignIn = %v (browser opened %v), want a resource error before any page opens", err, opened)
	}
	e.assertNeedsAuth(t, false)
}

func TestOAuthNoCallback(t *testing.T) {
	e := newOAuthEnv(t, "--http")
	applyAndWait(t, e.r, e.cfg)
	ignore := func(context.Context, string) error { return nil } // the person never finishes
	_, err := e.signIn(t, ignore, 300*time.Millisecond)
	if !errors.Is(err, oauth.ErrSignInTimeout) {
		t.Fatalf("SignIn = %v, want oauth.ErrSignInTimeout", err)
	}
	e.assertNeedsAuth(t, false)
}

// insufficient_scope (step-up): a signed-in server starts demanding a wider scope; its 403 puts the
// server back to needs-auth, and the next sign-in asks for the wider scope (with the old one), even
// though the unauthenticated 401 still names only the base scope, and even with configured scopes.
func TestOAuthInsufficientScopeAsksWider(t *testing.T) {
	for _, configured := range []bool{false, true} {
		t.Run(map[bool]string{false: "challenge scope", true: "configured scopes"}[configured], func(t *testing.T) {
			e := newOAuthEnv(t, "--http")
			if configured {
				e.cfg.OAuth = &config.OAuthSettings{Scopes: []string{"mcp"}}
			}
			applyAndWait(t, e.r, e.cfg)
			if _, err := e.signIn(t, browser, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			if res := e.echo(t); res.IsError {
				t.Fatalf("echo after the first sign-in = %+v", res)
			}
			u, _ := url.Parse(e.url)
			resp, err := http.PostForm(u.Scheme+"://"+u.Host+"/control/scope", url.Values{"scope": {"write"}})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()

			if res := e.echo(t); !res.IsError || !strings.Contains(res.Text, "sign in") || !strings.Contains(res.Text, "write") {
				t.Fatalf("echo with a too narrow token = %+v, want an error that says to sign in for the scope write", res)
			}
			waitState(t, e.r, "remote", StateNeedsAuth)
			if s := statusMap(e.r)["remote"]; !strings.Contains(s.Error, "write") {
				t.Errorf("needs-auth reason %q does not name the scope", s.Error)
			}

			st, err := e.signIn(t, browser, 20*time.Second)
			if err != nil || st.State != StateReady {
				t.Fatalf("second SignIn = %+v, %v; want ready", st, err)
			}
			_, authz := e.stats(t)
			if got := strings.Fields(authz["scope"]); !slices.Contains(got, "mcp") || !slices.Contains(got, "write") {
				t.Errorf("second authorize asked for scope %q, want mcp and write", authz["scope"])
			}
			if res := e.echo(t); res.IsError {
				t.Fatalf("echo after the wider sign-in = %+v", res)
			}
		})
	}
}
