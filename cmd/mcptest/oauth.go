package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// oauthOptions are the --oauth flags: a test authorization server (like a test IdP, it approves
// every authorization request at once) in front of the MCP endpoint, which then demands a Bearer.
type oauthOptions struct {
	on           bool
	clientID     string        // pre-registered client (--oauth-client-id)
	clientSecret string        // its secret (confidential client) or "" (public)
	noDCR        bool          // no registration_endpoint
	tokenTTL     time.Duration // access token lifetime
	scope        string        // scope the MCP endpoint demands
	wrongIssuer  bool          // metadata declares another issuer (mix-up)
	wrongRes     bool          // protected resource metadata names another resource
	wrongIss     bool          // the authorization response carries another iss
}

func (o *oauthOptions) flags(fs *flag.FlagSet) {
	fs.BoolVar(&o.on, "oauth", false, "with --http or --sse: serve a test OAuth authorization server (RFC 9728, 8414, 7591, PKCE S256, refresh, revocation) and demand a Bearer on the MCP endpoint; controls: POST /control/expire, /control/revoke, /control/scope (scope=S: demand S too), GET /control/stats")
	fs.StringVar(&o.clientID, "oauth-client-id", "", "a pre-registered client `ID`")
	fs.StringVar(&o.clientSecret, "oauth-client-secret", "", "the pre-registered client's `SECRET` (confidential client)")
	fs.BoolVar(&o.noDCR, "oauth-no-dcr", false, "offer no dynamic client registration")
	fs.DurationVar(&o.tokenTTL, "oauth-token-ttl", time.Hour, "access token lifetime `D`")
	fs.StringVar(&o.scope, "oauth-scope", "mcp", "the `SCOPE` the MCP endpoint demands")
	fs.BoolVar(&o.wrongIssuer, "oauth-wrong-issuer", false, "fault: authorization server metadata declares another issuer")
	fs.BoolVar(&o.wrongRes, "oauth-wrong-resource", false, "fault: protected resource metadata names another resource")
	fs.BoolVar(&o.wrongIss, "oauth-wrong-iss", false, "fault: the authorization response's iss names another issuer")
}

type oauthClient struct {
	secret    string
	redirects []string // registered redirect URIs ("" = any loopback, pre-registered)
}

type oauthCode struct {
	client, redirect, challenge, resource, scope string
	expires                                      time.Time
}

type oauthToken struct {
	client, resource, scope string
	expires                 time.Time
	refresh                 bool
}

// authServer is the test authorization server and the Bearer check.
type authServer struct {
	o        oauthOptions
	base     string // http://127.0.0.1:PORT
	mcpPath  string // /mcp or /sse
	resource string // base + mcpPath

	mu        sync.Mutex
	clients   map[string]*oauthClient
	codes     map[string]oauthCode
	tokens    map[string]*oauthToken // access and refresh tokens
	stats     map[string]int
	lastAuthz map[string]string
	demand    string // extra scopes the MCP endpoint demands (POST /control/scope); 403 insufficient_scope without them
}

func newAuthServer(o oauthOptions, base, mcpPath string) *authServer {
	a := &authServer{o: o, base: base, mcpPath: mcpPath, resource: base + mcpPath,
		clients: map[string]*oauthClient{}, codes: map[string]oauthCode{}, tokens: map[string]*oauthToken{},
		stats: map[string]int{}}
	if o.clientID != "" {
		a.clients[o.clientID] = &oauthClient{secret: o.clientSecret}
	}
	return a
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // ignore error: the client went away
}

func oauthError(w http.ResponseWriter, code int, kind, desc string) {
	writeJSON(w, code, map[string]string{"error": kind, "error_description": desc})
}

// wrap serves the OAuth endpoints and guards mcp (every other path) with the Bearer check.
func (a *authServer) wrap(mcp http.Handler) http.Handler {
	mux := http.NewServeMux()
	prm := func(w http.ResponseWriter, r *http.Request) {
		res := a.resource
		if a.o.wrongRes {
			res = "http://127.0.0.1:1/other-mcp"
		}
		writeJSON(w, 200, map[string]any{
			"resource": res, "authorization_servers": []string{a.base},
			"scopes_supported": []string{a.o.scope}, "bearer_methods_supported": []string{"header"},
		})
	}
	mux.HandleFunc("GET /.well-known/oauth-protected-resource"+a.mcpPath, prm)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		iss := a.base
		if a.o.wrongIssuer {
			iss = "https://issuer.invalid"
		}
		m := map[string]any{
			"issuer": iss, "authorization_endpoint": a.base + "/authorize", "token_endpoint": a.base + "/token",
			"revocation_endpoint": a.base + "/revoke", "response_types_supported": []string{"code"},
			"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported":               []string{"S256"},
			"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_post", "client_secret_basic"},
			"scopes_supported":                               []string{a.o.scope},
			"authorization_response_iss_parameter_supported": true,
		}
		if !a.o.noDCR {
			m["registration_endpoint"] = a.base + "/register"
		}
		writeJSON(w, 200, m)
	})
	mux.HandleFunc("POST /register", a.register)
	mux.HandleFunc("GET /authorize", a.authorize)
	mux.HandleFunc("POST /token", a.token)
	mux.HandleFunc("POST /revoke", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		delete(a.tokens, r.FormValue("token"))
		a.stats["revoke"]++
		a.mu.Unlock()
		w.WriteHeader(200)
	})
	mux.HandleFunc("POST /control/expire", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		for _, t := range a.tokens {
			if !t.refresh {
				t.expires = time.Now().Add(-time.Second)
			}
		}
		a.mu.Unlock()
	})
	mux.HandleFunc("POST /control/revoke", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		clear(a.tokens)
		a.mu.Unlock()
	})
	// scope=S: from now on the MCP endpoint also demands the space-separated scopes S (step-up
	// authorization): a token without them gets 403 insufficient_scope naming every scope it needs,
	// while the 401 challenge keeps naming the base scope.
	mux.HandleFunc("POST /control/scope", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.demand = r.FormValue("scope")
		a.mu.Unlock()
	})
	mux.HandleFunc("GET /control/stats", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		writeJSON(w, 200, map[string]any{"stats": a.stats, "authorize": a.lastAuthz})
	})
	mux.Handle("/", a.guard(mcp))
	return mux
}

func (a *authServer) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		oauthError(w, 400, "invalid_client_metadata", "redirect_uris required")
		return
	}
	for _, u := range req.RedirectURIs {
		if p, err := url.Parse(u); err != nil || p.Scheme != "http" || (p.Hostname() != "127.0.0.1" && p.Hostname() != "localhost") {
			oauthError(w, 400, "invalid_redirect_uri", "loopback redirect URIs only")
			return
		}
	}
	id := "dcr-" + randomToken()[:12]
	c := &oauthClient{redirects: req.RedirectURIs}
	method := "none"
	if req.AuthMethod == "client_secret_post" {
		c.secret, method = randomToken(), "client_secret_post"
	}
	a.mu.Lock()
	a.clients[id] = c
	a.stats["register"]++
	a.mu.Unlock()
	writeJSON(w, 201, map[string]any{"client_id": id, "client_secret": c.secret, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": method})
}

// authorize approves at once and redirects to the client's loopback listener.
func (a *authServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stats["authorize"]++
	a.lastAuthz = map[string]string{}
	for k := range q {
		a.lastAuthz[k] = q.Get(k)
	}
	c := a.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	switch {
	case c == nil:
		http.Error(w, "unknown client_id", 400)
		return
	case len(c.redirects) > 0 && !contains(c.redirects, redirect):
		http.Error(w, "redirect_uri not registered", 400)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "response_type=code with PKCE S256 required", 400)
		return
	case q.Get("resource") != a.resource:
		http.Error(w, "resource must be "+a.resource, 400)
		return
	}
	code := randomToken()
	a.codes[code] = oauthCode{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scope: q.Get("scope"), expires: time.Now().Add(time.Minute)}
	iss := a.base
	if a.o.wrongIss {
		iss = "https://issuer.invalid"
	}
	v := url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {iss}}
	http.Redirect(w, r, redirect+"?"+v.Encode(), http.StatusFound)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (a *authServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request", err.Error())
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.clients[id]
	if c == nil || c.secret != secret {
		oauthError(w, 401, "invalid_client", "unknown client or wrong secret")
		return
	}
	resource := r.PostForm.Get("resource")
	if resource != a.resource {
		oauthError(w, 400, "invalid_target", "resource must be "+a.resource)
		return
	}
	var scope string
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code, ok := a.codes[r.PostForm.Get("code")]
		delete(a.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		switch {
		case !ok || time.Now().After(code.expires) || code.client != id:
			oauthError(w, 400, "invalid_grant", "unknown or expired code")
			return
		case code.redirect != r.PostForm.Get("redirect_uri"):
			oauthError(w, 400, "invalid_grant", "redirect_uri differs")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != code.challenge:
			oauthError(w, 400, "invalid_grant", "PKCE verification failed")
			return
		case code.resource != resource:
			oauthError(w, 400, "invalid_target", "resource differs from the authorization request")
			return
		}
		scope = code.scope
		a.stats["code"]++
	case "refresh_token":
		rt := a.tokens[r.PostForm.Get("refresh_token")]
		if rt == nil || !rt.refresh || rt.client != id {
			oauthError(w, 400, "invalid_grant", "refresh token unknown or revoked")
			return
		}
		delete(a.tokens, r.PostForm.Get("refresh_token")) // rotation: one use
		scope = rt.scope
		a.stats["refresh"]++
	default:
		oauthError(w, 400, "unsupported_grant_type", "")
		return
	}
	access, refresh := "at-"+randomToken(), "rt-"+randomToken()
	a.tokens[access] = &oauthToken{client: id, resource: resource, scope: scope, expires: time.Now().Add(a.o.tokenTTL)}
	a.tokens[refresh] = &oauthToken{client: id, resource: resource, scope: scope, refresh: true}
	writeJSON(w, 200, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(a.o.tokenTTL.Seconds()),
		"refresh_token": refresh, "scope": scope})
}

// guard lets a request through only with a live access token for this resource.
func (a *authServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		challenge := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource%s", scope="%s"`, a.base, a.mcpPath, a.o.scope)
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		a.mu.Lock()
		t := a.tokens[tok]
		live := ok && t != nil && !t.refresh && time.Now().Before(t.expires) && t.resource == a.resource
		if live {
			a.stats["mcp"]++
		} else {
			a.stats["401"]++
		}
		need := strings.Fields(a.o.scope + " " + a.demand)
		scoped := live
		for _, sc := range need {
			scoped = scoped && contains(strings.Fields(t.scope), sc)
		}
		a.mu.Unlock()
		switch {
		case !live:
			w.Header().Set("WWW-Authenticate", challenge+`, error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		case !scoped:
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s/.well-known/oauth-protected-resource%s"`, strings.Join(need, " "), a.base, a.mcpPath))
			http.Error(w, "insufficient scope", http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// guard wraps an HTTP handler factory with the authorization server when --oauth is on.
func (o oauthOptions) guard(path string, h func(base string) http.Handler) func(base string) http.Handler {
	if !o.on {
		return h
	}
	return func(base string) http.Handler { return newAuthServer(o, base, path).wrap(h(base)) }
}
