package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

// The attacks of this file run against real HTTP servers on loopback: an authorization server
// and an MCP server's protected resource metadata, each of which can be made hostile. Every
// request they get is kept whole, so a test can say what never reached them.

// wire keeps every request one server received, dumped with headers and body.
type wire struct {
	mu   sync.Mutex
	reqs []string
}

func (w *wire) keep(r *http.Request) {
	b, _ := httputil.DumpRequest(r, true) // ignore error: a test log
	w.mu.Lock()
	w.reqs = append(w.reqs, string(b))
	w.mu.Unlock()
}

func (w *wire) count(substr string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.reqs {
		if strings.Contains(r, substr) {
			n++
		}
	}
	return n
}

// testAS is an authorization server that approves at once.
type testAS struct {
	srv    *httptest.Server
	wire   wire
	issuer string // what its metadata declares (default: its URL)
	// iss is what its authorization responses carry: "correct", "wrong", "slash" (the issuer
	// plus "/", equal only after URL normalization) or "omit".
	iss       string
	advertise bool // authorization_response_iss_parameter_supported
	cimd      bool // client_id_metadata_document_supported
}

func newTestAS(t *testing.T, iss string, advertise bool) *testAS {
	t.Helper()
	a := &testAS{iss: iss, advertise: advertise}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		issuer := a.issuer
		if issuer == "" {
			issuer = a.srv.URL
		}
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": issuer, "authorization_endpoint": a.srv.URL + "/authorize", "token_endpoint": a.srv.URL + "/token",
			"registration_endpoint": a.srv.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
			"response_types_supported": []string{"code"}, "authorization_response_iss_parameter_supported": a.advertise,
			"client_id_metadata_document_supported": a.cimd,
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"client_id": "dcr-client-of-" + a.srv.URL, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		to, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect_uri", http.StatusBadRequest)
			return
		}
		back := url.Values{"code": {"the-code"}, "state": {q.Get("state")}}
		switch a.iss {
		case "correct":
			back.Set("iss", a.srv.URL)
		case "wrong":
			back.Set("iss", "https://evil.example")
		case "slash":
			back.Set("iss", a.srv.URL+"/")
		}
		to.RawQuery = back.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"access_token": "token-of-" + a.srv.URL, "token_type": "Bearer", "refresh_token": "refresh-of-" + a.srv.URL, "expires_in": 3600})
	})
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.wire.keep(r)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *testAS) tokenRequests() int { return a.wire.count("POST /token") }

// testResource is an MCP server's HTTP face as far as sign-in goes: every MCP request gets a 401
// pointing at its protected resource metadata, which names as (changeable) and resource.
type testResource struct {
	srv      *httptest.Server
	wire     wire
	mu       sync.Mutex
	as       string
	resource string // "" = its own /mcp URL
	// noInit: initialize is not guarded but unknown (a server of 2026-07-28): 404 -32601.
	noInit bool
}

func newTestResource(t *testing.T, as string) *testResource {
	t.Helper()
	tr := &testResource{as: as}
	tr.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.wire.keep(r)
		tr.mu.Lock()
		as, res := tr.as, tr.resource
		tr.mu.Unlock()
		if res == "" {
			res = tr.srv.URL + "/mcp"
		}
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			json.NewEncoder(w).Encode(map[string]any{"resource": res, "authorization_servers": []string{as}})
		case "/mcp":
			if body, _ := io.ReadAll(r.Body); tr.noInit && bytes.Contains(body, []byte(`"initialize"`)) {
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"jsonrpc":"2.0","id":"sb-probe","error":{"code":-32601,"message":"Method not found"}}`)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+tr.srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "sign in", http.StatusUnauthorized)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(tr.srv.Close)
	return tr
}

func (tr *testResource) moveTo(as string) {
	tr.mu.Lock()
	tr.as = as
	tr.mu.Unlock()
}

func (tr *testResource) url() string { return tr.srv.URL + "/mcp" }

// follow is the browser: it follows the authorization server's redirect to the callback.
func follow(ctx context.Context, authURL string) error {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	resp, err := get(authURL)
	if err != nil {
		return err
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return fmt.Errorf("no redirect (%d)", resp.StatusCode)
	}
	_, err = get(loc)
	return err
}

type testLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func runSignIn(t *testing.T, serverURL string, s config.OAuthSettings, prev *tokenstore.Credential) (tokenstore.Credential, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	return SignIn(ctx, serverURL, s, nil, prev, SignInOptions{Open: follow, Timeout: 5 * time.Second}, log)
}

// A mix-up attack (RFC 9207): the authorization response claims another issuer, or, from a
// server that said its responses name their issuer, names none. The code is never exchanged.
func TestSignInMixUp(t *testing.T) {
	for _, tc := range []struct {
		iss       string
		advertise bool
		want      string // "" = the sign-in succeeds
	}{
		{"correct", true, ""},
		{"omit", false, ""},
		{"correct", false, ""},
		{"wrong", true, "mix-up"},
		{"wrong", false, "mix-up"},        // compared even when not advertised
		{"omit", true, "names no issuer"}, // advertised, then left out
		{"slash", true, "mix-up"},         // equal only after URL normalization: a different string
	} {
		t.Run(fmt.Sprintf("%s/advertised=%v", tc.iss, tc.advertise), func(t *testing.T) {
			as := newTestAS(t, tc.iss, tc.advertise)
			res := newTestResource(t, as.srv.URL)
			cred, err := runSignIn(t, res.url(), config.OAuthSettings{}, nil)
			if tc.want == "" {
				if err != nil || cred.AccessToken == "" || cred.Issuer != as.srv.URL {
					t.Fatalf("signIn = %+v, %v; want a credential of %s", cred, err, as.srv.URL)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("signIn error = %v, want one about %q", err, tc.want)
			}
			if n := as.tokenRequests(); n != 0 {
				t.Errorf("the code went to the token endpoint %d times", n)
			}
		})
	}
}

// A server whose protected resource metadata names another resource would get a token minted
// for that one: the sign-in stops before the authorization server hears of it.
func TestSignInResourceMismatch(t *testing.T) {
	as := newTestAS(t, "correct", true)
	res := newTestResource(t, as.srv.URL)
	res.resource = "https://victim.example/mcp"
	opened := false
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := SignIn(ctx, res.url(), config.OAuthSettings{}, nil, nil, SignInOptions{Open: func(ctx context.Context, u string) error {
		opened = true
		return follow(ctx, u)
	}, Timeout: 5 * time.Second}, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "victim.example") {
		t.Fatalf("signIn error = %v, want one naming the other resource", err)
	}
	if opened || as.wire.count("") != 0 {
		t.Errorf("the sign-in went on: page opened %v, %d requests at the authorization server", opened, as.wire.count(""))
	}
}

// The server moves to another authorization server (SEP-2352): the old issuer's token and
// refresh token are not used again, the server needs a sign-in, and that one registers with the
// new issuer, which never sees the old client.
func TestAuthorizationServerMigration(t *testing.T) {
	as1 := newTestAS(t, "correct", true)
	as2 := newTestAS(t, "correct", true)
	res := newTestResource(t, as1.srv.URL)
	store := tokenstore.NewMemory()
	old, err := runSignIn(t, res.url(), config.OAuthSettings{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(context.Background(), "remote", old); err != nil {
		t.Fatal(err)
	}
	tokensAtAS1 := as1.tokenRequests()

	res.moveTo(as2.srv.URL)
	b := NewBearer(store, "remote", res.url())
	req, _ := http.NewRequest(http.MethodPost, res.url(), strings.NewReader(`{}`))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(`{}`)), nil }
	resp, err := b.Wrap(http.DefaultTransport).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if why := b.NeedsAuth(); !strings.Contains(why, "another authorization server") {
		t.Fatalf("needsAuth = %q, want the move named", why)
	}
	if n := as1.tokenRequests(); n != tokensAtAS1 {
		t.Errorf("the old refresh token went to the old issuer after the move (%d token requests)", n-tokensAtAS1)
	}

	cred, err := runSignIn(t, res.url(), config.OAuthSettings{}, &old)
	if err != nil {
		t.Fatal(err)
	}
	if cred.Issuer != as2.srv.URL || as2.wire.count("POST /register") != 1 {
		t.Errorf("new sign-in: issuer %s, %d registrations at the new issuer; want %s and 1", cred.Issuer, as2.wire.count("POST /register"), as2.srv.URL)
	}
	for _, leak := range []string{old.ClientID, old.AccessToken, old.RefreshToken} {
		if n := as2.wire.count(leak); n != 0 {
			t.Errorf("the new issuer saw %q of the old one (%d requests)", leak, n)
		}
	}
}

// A pre-registered client's secret goes to the token endpoint of its issuer and nowhere else:
// not to the resource, the registration or authorization endpoints, nor to the log; and when the
// server starts naming another authorization server, not there either.
func TestClientSecretStaysWithItsIssuer(t *testing.T) {
	const secret = "pre-registered-s3cret-Zq8"
	as1 := newTestAS(t, "correct", true)
	res := newTestResource(t, as1.srv.URL)
	var logs testLog
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := config.OAuthSettings{ClientID: "pre-registered", ClientSecret: secret}
	cred, err := SignIn(ctx, res.url(), s, nil, nil, SignInOptions{Open: follow, Timeout: 5 * time.Second},
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	if got, all := as1.wire.count(secret), as1.wire.count(""); got != 1 || as1.wire.count("POST /token") != 1 {
		t.Errorf("the secret was in %d of %d requests to its issuer, want exactly the one token request", got, all)
	}
	if n := res.wire.count(secret); n != 0 || strings.Contains(logs.String(), secret) {
		t.Errorf("the secret reached the resource (%d requests) or the log", n)
	}

	// The server (or whoever controls its metadata) now names another authorization server.
	evil := newTestAS(t, "correct", true)
	res.moveTo(evil.srv.URL)
	if _, err := runSignIn(t, res.url(), s, &cred); err == nil || !strings.Contains(err.Error(), "not sent there") {
		t.Fatalf("signIn error = %v, want the secret withheld", err)
	}
	if n := evil.wire.count(secret); n != 0 {
		t.Errorf("the other authorization server got the secret (%d requests)", n)
	}
	// Saying so in the config moves it.
	s.Issuer = evil.srv.URL
	if _, err := runSignIn(t, res.url(), s, &cred); err != nil {
		t.Fatalf("with oauth.issuer set to the new issuer: %v", err)
	}
	// And oauth.issuer binds a first sign-in too.
	res.moveTo(as1.srv.URL)
	if _, err := runSignIn(t, res.url(), s, nil); err == nil || as1.wire.count(secret) != 1 {
		t.Errorf("oauth.issuer %s, server names %s: signIn error %v, secret sent %d times to the latter (want 1, from before)", s.Issuer, as1.srv.URL, err, as1.wire.count(secret))
	}
}

// A client metadata document URL is the client_id where the authorization server supports it;
// elsewhere the client registers.
func TestSignInClientMetadataDocument(t *testing.T) {
	const doc = "https://switchboard.example/oauth-client-metadata.json"
	for _, cimd := range []bool{true, false} {
		as := newTestAS(t, "correct", true)
		as.cimd = cimd
		res := newTestResource(t, as.srv.URL)
		cred, err := runSignIn(t, res.url(), config.OAuthSettings{ClientMetadataURL: doc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		regs := as.wire.count("POST /register")
		if cimd && (cred.ClientID != doc || regs != 0) || !cimd && (cred.ClientID == doc || regs != 1) {
			t.Errorf("cimd supported %v: client_id %q, %d registrations", cimd, cred.ClientID, regs)
		}
	}
}

// A server of 2026-07-28 guards tools/list but has no initialize at all: the sign-in still finds
// its challenge.
func TestSignInStatelessServer(t *testing.T) {
	as := newTestAS(t, "correct", true)
	res := newTestResource(t, as.srv.URL)
	res.noInit = true
	if _, err := runSignIn(t, res.url(), config.OAuthSettings{}, nil); err != nil {
		t.Fatal(err)
	}
	if n := res.wire.count("Mcp-Method: tools/list"); n != 1 {
		t.Errorf("%d stateless tools/list probes, want 1", n)
	}
}
