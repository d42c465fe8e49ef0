package appview

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultIdle is how long the server runs without a request.
const DefaultIdle = 15 * time.Minute

// maxRequest bounds one relayed request's body.
const maxRequest = 1 << 20

// Page is one view to serve.
type Page struct {
	ID    string // the view's id: what the Bridge is told
	Title string // shown as the page's title (escaped here)
	HTML  string // the view's document, as pinned
	CSP   string // the view's Content-Security-Policy (never wider than it declared)
	Allow string // the frame's allow attribute ("camera; clipboard-write")
	// Init is what the host page gives the view: {hostContext, toolInput, toolResult}.
	Init json.RawMessage
	// Message: the page offers the view ui/message (hostCapabilities.message): the host can
	// deliver it to a conversation.
	Message bool
}

// RPCError is a JSON-RPC error for the view.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Bridge runs what a view asks for: tools/call, ui/open-link and the like, with the params the
// view sent. It returns the JSON-RPC result, or an error to give the view.
type Bridge interface {
	ViewRequest(ctx context.Context, viewID, method string, params json.RawMessage) (json.RawMessage, *RPCError)
}

// Options configure a Server.
type Options struct {
	Bridge Bridge
	Idle   time.Duration // 0: DefaultIdle
	Log    *slog.Logger
	// Version is the host's version, as the view's hostInfo says it.
	Version string
	// OnIdle, when set, is called after an idle server stopped (tests wait for it).
	OnIdle func()
}

// Server serves views on 127.0.0.1. Safe for concurrent use.
type Server struct {
	opts Options

	mu       sync.Mutex // guards the fields below
	ln       net.Listener
	srv      *http.Server
	host     string           // "127.0.0.1:PORT" of the running listener
	pages    map[string]*Page // one-time page tokens
	apps     map[string]*Page // one-time view-document tokens
	sessions map[string]*Page // relay secrets of loaded pages
	last     time.Time        // the last request
	idle     *time.Timer
}

// New returns a server; nothing listens until Open.
func New(opts Options) *Server {
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts}
}

// token is 256 random bits, URL-safe.
func token() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Open serves p and returns its one-time address. The listener starts if it is not running.
func (s *Server) Open(p Page) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("appview: listen: %w", err)
		}
		s.ln, s.host = ln, ln.Addr().String()
		s.pages, s.apps, s.sessions = map[string]*Page{}, map[string]*Page{}, map[string]*Page{}
		s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
		srv := s.srv
		go srv.Serve(ownUser{ln, s.opts.Log}) // ignore error: ends with Close
		s.last = time.Now()
		s.idle = time.AfterFunc(s.opts.Idle, s.checkIdle)
	}
	tok := token()
	pc := p
	s.pages[tok] = &pc
	s.last = time.Now()
	return "http://" + s.host + "/p/" + tok, nil
}

// checkIdle stops the server when no view's request (a page, its frame, its relay with the
// page's secret) came for Options.Idle: requests without them, which any local process or web
// page can send, do not keep it listening.
func (s *Server) checkIdle() {
	s.mu.Lock()
	if s.ln == nil {
		s.mu.Unlock()
		return
	}
	if wait := s.opts.Idle - time.Since(s.last); wait > 0 {
		s.idle.Reset(wait)
		s.mu.Unlock()
		return
	}
	s.stopLocked()
	s.mu.Unlock()
	s.opts.Log.Info("appview: stopped after idle")
	if s.opts.OnIdle != nil {
		s.opts.OnIdle()
	}
}

func (s *Server) stopLocked() {
	if s.ln == nil {
		return
	}
	s.idle.Stop()
	s.srv.Close() // ignore error: closing
	s.ln, s.srv, s.host = nil, nil, ""
	s.pages, s.apps, s.sessions = nil, nil, nil
}

// Close stops the server; a later Open starts it again.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
	return nil
}

// CloseView stops serving the view id: its unused addresses stop working and its loaded
// pages' relay is refused (403), so nothing it asks reaches the host any more.
func (s *Server) CloseView(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range []map[string]*Page{s.pages, s.apps, s.sessions} {
		for k, p := range m {
			if p.ID == id {
				delete(m, k)
			}
		}
	}
}

// take removes and returns the page of a one-time token in m.
func take(m map[string]*Page, tok string) *Page {
	for k, p := range m {
		if subtle.ConstantTimeCompare([]byte(k), []byte(tok)) == 1 {
			delete(m, k)
			return p
		}
	}
	return nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	s.mu.Lock()
	host := s.host
	if host == "" {
		s.mu.Unlock()
		http.Error(w, "gone", http.StatusGone)
		return
	}
	s.mu.Unlock()
	if r.Host != host {
		// A name that resolves to 127.0.0.1 (DNS rebinding) is not this server's address.
		http.Error(w, "wrong host", http.StatusMisdirectedRequest)
		return
	}
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/p/"):
		s.servePage(w, strings.TrimPrefix(r.URL.Path, "/p/"), host)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/a/"):
		s.serveApp(w, strings.TrimPrefix(r.URL.Path, "/a/"), host)
	case r.Method == http.MethodPost && r.URL.Path == "/rpc":
		s.serveRPC(w, r, host)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) servePage(w http.ResponseWriter, tok, host string) {
	s.mu.Lock()
	p := take(s.pages, tok)
	var appTok, secret string
	if p != nil {
		appTok, secret = token(), token()
		s.apps[appTok], s.sessions[secret] = p, p
		s.last = time.Now() // only a view's own requests keep the server up (not any local process's)
	}
	s.mu.Unlock()
	if p == nil {
		http.Error(w, "This address was already used or has expired. Open the view again from your editor.", http.StatusNotFound)
		return
	}
	nonce := token()
	w.Header().Set("Content-Security-Policy", strings.Join([]string{
		"default-src 'none'", "script-src 'nonce-" + nonce + "'", "style-src 'nonce-" + nonce + "'",
		"frame-src 'self'", "connect-src 'self'", "img-src 'none'", "base-uri 'none'", "form-action 'none'",
		"frame-ancestors 'none'",
	}, "; "))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, hostPage(p, nonce, "/a/"+appTok, secret, s.opts.Version)) // ignore error: the browser went away
}

func (s *Server) serveApp(w http.ResponseWriter, tok, host string) {
	s.mu.Lock()
	p := take(s.apps, tok)
	if p != nil {
		s.last = time.Now()
	}
	s.mu.Unlock()
	if p == nil {
		http.NotFound(w, nil)
		return
	}
	// The view's own policy, plus: an opaque origin whatever loads it, and no framing but by
	// its host page.
	w.Header().Set("Content-Security-Policy", p.CSP+"; sandbox allow-scripts; frame-ancestors http://"+host)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, p.HTML) // ignore error: the browser went away
}

func (s *Server) serveRPC(w http.ResponseWriter, r *http.Request, host string) {
	if r.Header.Get("Origin") != "http://"+host {
		// Only the host page, loaded from this address, may relay (the view's frame has an
		// opaque origin: "null").
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	secret := r.Header.Get("X-Switchboard-Secret")
	s.mu.Lock()
	var p *Page
	for k, sp := range s.sessions {
		if subtle.ConstantTimeCompare([]byte(k), []byte(secret)) == 1 {
			p = sp
		}
	}
	if p != nil && secret != "" {
		s.last = time.Now()
	}
	s.mu.Unlock()
	if p == nil || secret == "" {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	var req struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil || len(body) > maxRequest || json.Unmarshal(body, &req) != nil || req.Method == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	res, rpcErr := s.opts.Bridge.ViewRequest(r.Context(), p.ID, req.Method, req.Params)
	out := map[string]any{}
	if rpcErr != nil {
		out["error"] = rpcErr
	} else {
		out["result"] = res
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out) // ignore error: the page went away
}

// ErrNotRunning is returned by Addr when nothing listens.
var ErrNotRunning = errors.New("appview: not running")

// Addr is the listener's address.
func (s *Server) Addr() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.host == "" {
		return "", ErrNotRunning
	}
	return s.host, nil
}
