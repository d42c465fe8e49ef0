package mcpbridge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/oauth"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// changeWatcher records OnChange calls so tests can wait for a condition without sleeping.
type changeWatcher chan struct{}

func newChangeWatcher() changeWatcher { return make(chan struct{}, 1) }

func (w changeWatcher) onChange([]ServerStatus) {
	select {
	case w <- struct{}{}:
	default:
	}
}

// waitFor waits until cond holds, re-checking at every change.
func (w changeWatcher) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-w:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func stdioOf(t *testing.T, r *Registry, name string) *stdio.Transport {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.servers[name]
	if e == nil || e.conn == nil || e.conn.stdio() == nil {
		t.Fatalf("server %s has no stdio connection", name)
	}
	return e.conn.stdio()
}

func TestStdioStartupFaults(t *testing.T) {
	r := newTestRegistry(t, Options{})
	hang := stdioCfg("hang", "--hang-initialize")
	hang.StartupTimeout = time.Second
	st := applyAndWait(t, r,
		stdioCfg("ok"),
		stdioCfg("exit", "--exit-at-start"),
		hang,
		stdioCfg("garbage", "--garbage-stdout"),
		stdioCfg("legacy", "--ignore-discover"),
		config.ServerConfig{Name: "missing", Transport: config.TransportStdio, Command: "/nonexistent/mcp-server", StartupTimeout: time.Second},
	)
	for name, want := range map[string]struct{ state, err, stderr string }{
		"ok":      {StateReady, "", ""},
		"garbage": {StateReady, "", ""},
		"legacy":  {StateReady, "", ""},
		"exit":    {StateFailed, "process exited: exit status 3", "mcptest: exiting at start as asked"},
		"hang":    {StateFailed, "startup timed out after 1s", "mcptest: hanging"},
		"missing": {StateFailed, "no such file or directory", ""},
	} {
		s := st[name]
		if s.State != want.state || !strings.Contains(s.Error, want.err) || !strings.Contains(s.StderrTail, want.stderr) {
			t.Errorf("%s = %+v; want %+v", name, s, want)
		}
	}
	if len(r.Tools()) != 3*8 {
		t.Errorf("%d tools; want 24 from the 3 ready servers", len(r.Tools()))
	}
}

func TestStdioCrashMidCall(t *testing.T) {
	w := newChangeWatcher()
	r := newTestRegistry(t, Options{OnChange: w.onChange})
	applyAndWait(t, r, stdioCfg("crashy", "--crash-after", "1"), stdioCfg("other"))
	if res, _ := r.Call(context.Background(), "mcp__crashy__echo", json.RawMessage(`{"text":"1"}`)); res.Text != "1" {
		t.Fatalf("first call = %+v", res)
	}
	res, err := r.Call(context.Background(), "mcp__crashy__slow", json.RawMessage(`{"seconds":25}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "failed during the call") || !strings.Contains(res.Text, "exit status 3") {
		t.Fatalf("crashing call = %+v, %v", res, err)
	}
	w.waitFor(t, "crashy failed", func() bool { return statusMap(r)["crashy"].State == StateFailed })
	s := statusMap(r)["crashy"]
	if !strings.Contains(s.Error, "exit status 3") || !strings.Contains(s.StderrTail, "crashing in call 2") || s.Tools != 0 {
		t.Errorf("status = %+v", s)
	}
	for _, tl := range r.Tools() {
		if tl.Server == "crashy" {
			t.Errorf("tool %s still registered", tl.Name)
		}
	}
	if res, _ := r.Call(context.Background(), "mcp__other__echo", json.RawMessage(`{"text":"fine"}`)); res.Text != "fine" {
		t.Errorf("other server = %+v", res)
	}
	// Not retried, and the server can be brought back by hand.
	s, err = r.ReconnectServer(context.Background(), "crashy")
	if err != nil || s.State != StateReady {
		t.Errorf("ReconnectServer = %+v, %v", s, err)
	}
}

func TestStdioDeathDetectedWithoutCall(t *testing.T) {
	w := newChangeWatcher()
	r := newTestRegistry(t, Options{OnChange: w.onChange})
	applyAndWait(t, r, stdioCfg("victim"))
	pid := stdioOf(t, r, "victim").Pid()
	if err := killPid(pid); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "victim failed", func() bool { return statusMap(r)["victim"].State == StateFailed })
	if s := statusMap(r)["victim"]; !strings.Contains(s.Error, killedError) || len(r.Tools()) != 0 {
		t.Errorf("status = %+v, tools %v", s, toolNames(r))
	}
}

func TestFrameLimit(t *testing.T) {
	r := newTestRegistry(t, Options{})
	r.dial = dialer(1 << 20)
	st := applyAndWait(t, r, stdioCfg("endless", "--endless-line"), stdioCfg("huge", "--huge-frame", "2"), stdioCfg("ok"))
	for _, name := range []string{"endless", "huge"} {
		if s := st[name]; s.State != StateFailed || !strings.Contains(s.Error, "over 1 MiB") {
			t.Errorf("%s = %+v", name, s)
		}
	}
	// A result just under the limit still arrives (and is capped).
	res, _ := r.Call(context.Background(), "mcp__ok__big", json.RawMessage(`{"n":1000000}`))
	if res.IsError || res.Bytes != 1000000 || res.Truncated {
		t.Errorf("big = %v %d %v", res.IsError, res.Bytes, res.Truncated)
	}
}

func TestHugeFrameDefaultLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB through a pipe")
	}
	r := newTestRegistry(t, Options{})
	st := applyAndWait(t, r, stdioCfg("huge", "--huge-frame", "100"), stdioCfg("endless", "--endless-line"))
	if s := st["huge"]; s.State != StateFailed || !strings.Contains(s.Error, "over 64 MiB") {
		t.Errorf("huge = %+v", s)
	}
	// An endless line of non-string bytes stops at the structure bound, far below the frame limit.
	if s := st["endless"]; s.State != StateFailed || !strings.Contains(s.Error, "outside JSON strings") {
		t.Errorf("endless = %+v", s)
	}
}

func TestBigResultCapped(t *testing.T) {
	r := newTestRegistry(t, Options{})
	applyAndWait(t, r, stdioCfg("s"))
	res, err := r.Call(context.Background(), "mcp__s__big", json.RawMessage(`{"n":3000000,"char":"€"}`))
	if err != nil || res.IsError || !res.Truncated || res.Bytes != 3000000 {
		t.Fatalf("big = %v %v %v %d", err, res.IsError, res.Truncated, res.Bytes)
	}
	want := strings.Repeat("€", MaxResultText/3) + fmt.Sprintf("\n\n[mcp output truncated: 3000000 bytes total, %d kept]", MaxResultText/3*3)
	if res.Text != want {
		t.Errorf("text ends %q", res.Text[len(res.Text)-80:])
	}
}

func TestStdioStormBounded(t *testing.T) {
	r := newTestRegistry(t, Options{})
	applyAndWait(t, r, stdioCfg("storm", "--storm", "200", "--storm-for", "1s"))
	start := time.Now()
	// The call takes longer than the storm: waiting without sleeping in the test.
	if res, _ := r.Call(context.Background(), "mcp__storm__slow", json.RawMessage(`{"seconds":1.5}`)); res.IsError {
		t.Fatalf("slow = %+v", res)
	}
	elapsed := time.Since(start)
	r.mu.Lock()
	n := r.servers["storm"].relists
	r.mu.Unlock()
	if max := int(elapsed/r.debounce) + 2; n > max {
		t.Errorf("%d re-lists in %s; want at most %d (one per debounce period)", n, elapsed, max)
	}
	if s := statusMap(r)["storm"]; s.State != StateReady || s.Tools != 8 {
		t.Errorf("status = %+v", s)
	}
}

func TestEnvNotLeaked(t *testing.T) {
	t.Setenv("SWITCHBOARD_TEST_SECRET", "hunter2")
	r := newTestRegistry(t, Options{}) // BaseEnv nil: built from this process's env
	cfg := stdioCfg("envs")
	cfg.Env = map[string]string{"GIVEN": "yes"}
	applyAndWait(t, r, cfg)
	for name, want := range map[string]string{
		"SWITCHBOARD_TEST_SECRET": "(unset)",
		"GIVEN":                   "yes",
		"PATH":                    os.Getenv("PATH"),
	} {
		res, _ := r.Call(context.Background(), "mcp__envs__env", json.RawMessage(`{"name":"`+name+`"}`))
		if res.Text != want {
			t.Errorf("child sees %s=%q; want %q", name, res.Text, want)
		}
	}
}

func TestCancelSendsNotification(t *testing.T) {
	r := newTestRegistry(t, Options{})
	applyAndWait(t, r, stdioCfg("s"))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := r.Call(ctx, "mcp__s__slow", json.RawMessage(`{"seconds":30}`))
	if err == nil || !res.IsError {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	tr := stdioOf(t, r, "s")
	for i := 0; !strings.Contains(tr.StderrTail(), "slow: cancelled"); i++ {
		if i > 5000 {
			t.Fatalf("server never saw the cancellation; stderr: %s", tr.StderrTail())
		}
		r.Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"x"}`)) // a round trip, not a sleep
	}
}

// startMCPTestHTTP runs mcptest with flag (--http or --sse) and more args on a free port and
// returns its URL.
func startMCPTestHTTP(t *testing.T, flag string, args ...string) string {
	t.Helper()
	cmd := exec.Command(mcptestBin, append([]string{flag, "127.0.0.1:0", "--instructions", "over " + flag}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "mcptest: listening on "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return u
		}
	}
	t.Fatalf("mcptest %s did not report its address", flag)
	return ""
}

func TestHTTPTransports(t *testing.T) {
	httpURL := startMCPTestHTTP(t, "--http")
	sseURL := startMCPTestHTTP(t, "--sse")
	w := newChangeWatcher()
	r := newTestRegistry(t, Options{OnChange: w.onChange})
	st := applyAndWait(t, r,
		config.ServerConfig{Name: "h", Transport: config.TransportHTTP, Protocol: ProtocolLegacy, URL: httpURL, Headers: map[string]string{"X-Test": "1"},
			StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second},
		config.ServerConfig{Name: "s", Transport: config.TransportSSE, URL: sseURL, StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second},
		config.ServerConfig{Name: "down", Transport: config.TransportHTTP, URL: "http://127.0.0.1:1/mcp", StartupTimeout: 5 * time.Second},
	)
	for _, name := range []string{"h", "s"} {
		if s := st[name]; s.State != StateReady || s.Tools != 8 || !s.Instructions {
			t.Errorf("%s = %+v", name, s)
		}
		res, err := r.Call(context.Background(), "mcp__"+name+"__echo", json.RawMessage(`{"text":"over the wire"}`))
		if err != nil || res.Text != "over the wire" {
			t.Errorf("%s echo = %+v, %v", name, res, err)
		}
		res, _ = r.Call(context.Background(), "mcp__"+name+"__big", json.RawMessage(`{"n":2000000}`))
		if !res.Truncated || res.Bytes != 2000000 {
			t.Errorf("%s big: truncated %v bytes %d", name, res.Truncated, res.Bytes)
		}
		// Runtime tool changes reach the registry over HTTP too.
		if res, _ := r.Call(context.Background(), "mcp__"+name+"__add_tool", json.RawMessage(`{"name":"fresh"}`)); res.IsError {
			t.Fatalf("add_tool = %+v", res)
		}
		w.waitFor(t, name+" fresh tool", func() bool { _, ok := r.Lookup("mcp__" + name + "__fresh"); return ok })
	}
	if s := st["down"]; s.State != StateFailed || s.Error == "" {
		t.Errorf("down = %+v", s)
	}
}

// An HTTP server that redirects to another origin must not get the user's custom headers (or
// credentials) sent there: the redirect is refused and the server reported failed. Over SSE the
// same holds for every request (an endpoint on another origin included).
func TestHTTPRedirectKeepsHeadersHome(t *testing.T) {
	target := startMCPTestHTTP(t, "--http")
	tu, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var leakMu sync.Mutex
	var leaks []string
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: tu.Scheme, Host: tu.Host})
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range []string{"X-Api-Key", "Authorization", "Cookie"} {
			if v := r.Header.Get(h); v != "" {
				leakMu.Lock()
				leaks = append(leaks, h+": "+v)
				leakMu.Unlock()
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(elsewhere.Close) // after the registry's (cleanups run last first)
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(home.Close)

	r := newTestRegistry(t, Options{})
	st := applyAndWait(t, r, config.ServerConfig{
		Name: "moved", Transport: config.TransportHTTP, URL: home.URL + "/mcp",
		Headers:        map[string]string{"X-Api-Key": "secret-key", "Authorization": "Bearer secret-token"},
		StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second,
	})
	leakMu.Lock()
	defer leakMu.Unlock()
	if len(leaks) > 0 {
		t.Errorf("the other origin received %q", leaks)
	}
	if s := st["moved"]; s.State != StateFailed || !strings.Contains(s.Error, "redirect") {
		t.Errorf("moved = %+v, want failed naming the redirect", s)
	}
}

// The transport under every HTTP and SSE client strips the configured headers from any request
// to another origin (scheme, host and port), whatever made the client go there.
func TestOriginTransportStripsHeaders(t *testing.T) {
	var got http.Header
	seen := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() })
	other := httptest.NewServer(seen)
	defer other.Close()
	c, err := oauth.HTTPClient("https://mcp.example:8443/mcp", map[string]string{"X-Api-Key": "k"})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", other.URL, nil)
	req.Header.Set("X-Api-Key", "k")
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Get("X-Api-Key") != "" || got.Get("Authorization") != "" || got.Get("Accept") == "" {
		t.Errorf("another origin got headers %v", got)
	}
	if req.Header.Get("X-Api-Key") != "k" {
		t.Errorf("the caller's request was modified")
	}
	for in, want := range map[string]string{
		"https://mcp.example/x":          "https://mcp.example:443",
		"HTTPS://MCP.example:443/y":      "https://mcp.example:443",
		"http://mcp.example/":            "http://mcp.example:80",
		"http://mcp.example:8443/":       "http://mcp.example:8443",
		"https://[::1]:8443/":            "https://[::1]:8443",
		"https://mcp.example.evil.test/": "https://mcp.example.evil.test:443",
	} {
		u, _ := url.Parse(in)
		if got := oauth.OriginOf(u); got != want {
			t.Errorf("oauth.OriginOf(%s) = %s, want %s", in, got, want)
		}
	}
}
