package appview

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

type recBridge struct {
	mu    sync.Mutex
	calls []string
}

func (b *recBridge) ViewRequest(_ context.Context, id, method string, params json.RawMessage) (json.RawMessage, *RPCError) {
	b.mu.Lock()
	b.calls = append(b.calls, id+" "+method+" "+string(params))
	b.mu.Unlock()
	if method == "tools/call" {
		return json.RawMessage(`{"content":[{"type":"text","text":"ran"}]}`), nil
	}
	return nil, &RPCError{Code: -32601, Message: "no"}
}

func (b *recBridge) seen() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

const testCSP = "default-src 'none'; script-src 'unsafe-inline'; connect-src 'none'"

func newTestServer(t *testing.T, opts Options) (*Server, *recBridge) {
	t.Helper()
	b := &recBridge{}
	if opts.Bridge == nil {
		opts.Bridge = b
	}
	s := New(opts)
	t.Cleanup(func() { s.Close() })
	return s, b
}

func open(t *testing.T, s *Server) string {
	t.Helper()
	u, err := s.Open(Page{ID: "v1", Title: "mcp__x__clock <b>", HTML: "<p>the view</p>", CSP: testCSP, Allow: "clipboard-write",
		Init: json.RawMessage(`{"toolInput":{"a":"</script><script>alert(1)</script>"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// get fetches u with an optional Host header.
func get(t *testing.T, u, host string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if host != "" {
		req.Host = host
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

var dataRE = regexp.MustCompile(`(?s)<script type="application/json" id="data" nonce="[^"]+">(.*?)</script>`)

// loadPage loads the host page and returns its view address and relay secret.
func loadPage(t *testing.T, u string) (app, secret, body string) {
	t.Helper()
	res, body := get(t, u, "")
	if res.StatusCode != 200 {
		t.Fatalf("page: %d %s", res.StatusCode, body)
	}
	m := dataRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no data in page:\n%s", body)
	}
	var d struct{ App, Secret string }
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatal(err)
	}
	return d.App, d.Secret, body
}

func rpc(t *testing.T, base, origin, secret, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/rpc", strings.NewReader(body))
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if secret != "" {
		req.Header.Set("X-Switchboard-Secret", secret)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestPageFlow: the one-time page address loads once; its view document loads once, with the
// view's own policy plus sandbox; the relay takes the page's secret and Origin and hands the
// request to the Bridge with the view's id.
func TestPageFlow(t *testing.T) {
	s, b := newTestServer(t, Options{})
	u := open(t, s)
	pu, _ := url.Parse(u)
	base := "http://" + pu.Host
	app, secret, body := loadPage(t, u)
	if strings.Contains(body, "<script>alert(1)") || strings.Contains(body, "<b>") {
		t.Errorf("server-controlled text reached the page unescaped:\n%s", body)
	}
	if res, _ := get(t, u, ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("page address reused: %d", res.StatusCode)
	}
	res, view := get(t, base+app, "")
	if res.StatusCode != 200 || view != "<p>the view</p>" {
		t.Fatalf("view: %d %q", res.StatusCode, view)
	}
	if got, want := res.Header.Get("Content-Security-Policy"), testCSP+"; sandbox allow-scripts; frame-ancestors "+base; got != want {
		t.Errorf("view CSP\n got %s\nwant %s", got, want)
	}
	if res, _ := get(t, base+app, ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("view address reused: %d", res.StatusCode)
	}
	if code := rpc(t, base, base, secret, `{"method":"tools/call","params":{"name":"tick"}}`); code != 200 {
		t.Fatalf("relay: %d", code)
	}
	if got := b.seen(); len(got) != 1 || got[0] != `v1 tools/call {"name":"tick"}` {
		t.Errorf("bridge saw %q", got)
	}
}

// TestEscapes: what another page, process or the view itself would try. Nothing reaches the
// Bridge.
func TestEscapes(t *testing.T) {
	s, b := newTestServer(t, Options{})
	u := open(t, s)
	pu, _ := url.Parse(u)
	base := "http://" + pu.Host
	for _, path := range []string{"/", "/p/", "/p/wrong", "/a/", "/a/wrong", "/rpc", "/favicon.ico", "/p/" + strings.Repeat("A", 43)} {
		if res, _ := get(t, base+path, ""); res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %d", path, res.StatusCode)
		}
	}
	// DNS rebinding: a name that resolves here is not this server.
	if res, _ := get(t, u, "evil.example:"+pu.Port()); res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("wrong Host: %d", res.StatusCode)
	}
	if res, _ := get(t, u, "localhost:"+pu.Port()); res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host localhost: %d", res.StatusCode)
	}
	_, secret, _ := loadPage(t, u) // the refused tries above did not use the token up
	call := `{"method":"tools/call","params":{}}`
	for _, tc := range []struct{ origin, secret string }{
		{"", secret},                    // a process with the secret but no browser page
		{"null", secret},                // the view's sandboxed frame
		{"http://evil.example", secret}, // another site
		{base, ""},                      // the page's origin without the secret
		{base, "wrong"},
		{base, secret + "x"},
	} {
		if code := rpc(t, base, tc.origin, tc.secret, call); code != http.StatusForbidden {
			t.Errorf("relay with origin %q secret %q: %d", tc.origin, tc.secret, code)
		}
	}
	if code := rpc(t, base, base, secret, strings.Repeat("x", maxRequest+10)); code != http.StatusBadRequest {
		t.Errorf("oversized relay: %d", code)
	}
	if got := b.seen(); len(got) != 0 {
		t.Errorf("bridge reached: %q", got)
	}
}

// TestIdleStop: after Idle without requests the server stops and its addresses are dead; the
// next Open starts a new one with new tokens.
func TestIdleStop(t *testing.T) {
	stopped := make(chan struct{}, 1)
	s, _ := newTestServer(t, Options{Idle: time.Millisecond, OnIdle: func() { stopped <- struct{}{} }})
	u := open(t, s)
	<-stopped
	if _, err := http.Get(u); err == nil {
		t.Errorf("an idle server still answers")
	}
	if _, err := s.Addr(); err != ErrNotRunning {
		t.Errorf("Addr after idle: %v", err)
	}
	u2 := open(t, s)
	if u2 == u {
		t.Errorf("same address after restart")
	}
}

// TestCloseView: a view whose conversation ended is not served any more: its loaded page's relay
// is refused, its unused addresses are gone; another view is served as before.
func TestCloseView(t *testing.T) {
	s, b := newTestServer(t, Options{})
	u := open(t, s)
	pu, _ := url.Parse(u)
	base := "http://" + pu.Host
	_, secret, _ := loadPage(t, u)
	unused := open(t, s)
	other, err := s.Open(Page{ID: "v2", Title: "other", HTML: "<p>2</p>", CSP: testCSP})
	if err != nil {
		t.Fatal(err)
	}
	_, otherSecret, _ := loadPage(t, other)
	s.CloseView("v1")
	if code := rpc(t, base, base, secret, `{"method":"tools/call","params":{"name":"tick"}}`); code != http.StatusForbidden {
		t.Errorf("relay of a closed view: %d", code)
	}
	if res, _ := get(t, unused, ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unused address of a closed view: %d", res.StatusCode)
	}
	if code := rpc(t, base, base, otherSecret, `{"method":"tools/call","params":{"name":"tick"}}`); code != 200 {
		t.Errorf("relay of another view: %d", code)
	}
	if got := b.seen(); len(got) != 1 || !strings.HasPrefix(got[0], "v2 ") {
		t.Errorf("bridge saw %q", got)
	}
}

// TestIdleKeptOnlyByViews: only a view's own requests (its page, its frame, its relay with the
// page's secret) keep the server listening. Any local process, and any web page the browser
// has open (a no-cors request to 127.0.0.1 needs no permission), can reach the port: their
// requests, refused, must not hold it open past Options.Idle.
func TestIdleKeptOnlyByViews(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	u := open(t, s)
	pu, _ := url.Parse(u)
	base := "http://" + pu.Host
	long := time.Now().Add(-time.Hour)
	setLast := func() {
		s.mu.Lock()
		s.last = long
		s.mu.Unlock()
	}
	kept := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return !s.last.Equal(long)
	}
	for name, request := range map[string]func(){
		"an unknown path":        func() { get(t, base+"/", "") },
		"a used page address":    func() { get(t, base+"/p/nope", "") },
		"another Host":           func() { get(t, base+"/", "evil.example:80") },
		"a relay without secret": func() { rpc(t, base, base, "", `{"method":"x"}`) },
		"a relay from elsewhere": func() { rpc(t, base, "http://evil.example", "", `{"method":"x"}`) },
	} {
		setLast()
		request()
		if kept() {
			t.Errorf("%s kept the server up", name)
		}
	}
	setLast()
	_, secret, _ := loadPage(t, u)
	if !kept() {
		t.Errorf("loading the view's page did not keep the server up")
	}
	setLast()
	rpc(t, base, base, secret, `{"method":"ui/notifications/size-changed","params":{}}`)
	if !kept() {
		t.Errorf("the view's relay did not keep the server up")
	}
}
