package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// TestHTTPServerGone: an HTTP server that goes away is marked failed with the reason, whether a
// call notices first (the call fails once, not retried) or the periodic ping does.
func TestHTTPServerGone(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every time.Duration
		call  bool
	}{
		{"noticed by a failing call", -1, true},
		{"noticed by the ping", 20 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(server.NewStreamableHTTPServer(newInProcServer("h", "echo")))
			w := newChangeWatcher()
			r := newTestRegistry(t, Options{OnChange: w.onChange, PingInterval: tc.every})
			st := applyAndWait(t, r, config.ServerConfig{Name: "h", Transport: config.TransportHTTP, Protocol: ProtocolLegacy, URL: ts.URL + "/mcp",
				StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second})
			if st["h"].State != StateReady {
				t.Fatalf("status = %+v", st["h"])
			}
			ts.CloseClientConnections()
			ts.Close()
			if tc.call {
				// The call may go out on the kept-alive connection the server just closed, before the
				// client's transport has read the close (net/http then says "server closed idle
				// connection" and, as for any POST, does not retry), or on a new one that is refused.
				res, err := r.Call(context.Background(), "mcp__h__echo", nil)
				if err != nil || !res.IsError || !strings.Contains(res.Text, "connection refused") && !strings.Contains(res.Text, "server closed idle connection") {
					t.Errorf("call to the gone server = %+v, %v; want an error result naming the refused or closed connection", res, err)
				}
			}
			w.waitFor(t, "h failed", func() bool { return statusMap(r)["h"].State == StateFailed })
			// The status is the failing call's when a call noticed first, so it names what that call
			// met: the refused connection or the closed kept-alive one (see above).
			if e := statusMap(r)["h"].Error; !strings.Contains(e, "server unreachable") || !strings.Contains(e, "connection refused") && !(tc.call && strings.Contains(e, "server closed idle connection")) {
				t.Errorf("status error = %q, want it to say the server is unreachable and why", e)
			}
			if _, ok := r.Lookup("mcp__h__echo"); ok {
				t.Error("the failed server's tools are still registered")
			}
		})
	}
}

// TestHTTPServerHung: a server that still accepts connections but stops answering is marked
// failed once a ping times out.
func TestHTTPServerHung(t *testing.T) {
	url, hang := hangingHTTPServer(t)
	w := newChangeWatcher()
	r := newTestRegistry(t, Options{OnChange: w.onChange, PingInterval: 20 * time.Millisecond, PingTimeout: 50 * time.Millisecond})
	st := applyAndWait(t, r, config.ServerConfig{Name: "h", Transport: config.TransportHTTP, Protocol: ProtocolLegacy, URL: url,
		StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second})
	if st["h"].State != StateReady {
		t.Fatalf("status = %+v", st["h"])
	}
	hang.Store(true)
	w.waitFor(t, "h failed", func() bool { return statusMap(r)["h"].State == StateFailed })
	if e := statusMap(r)["h"].Error; !strings.Contains(e, "no answer to ping within 50ms") {
		t.Errorf("status error = %q", e)
	}
}

// TestModernHTTPServerHung: 2026-07-28 has no ping; a modern HTTP server that stops answering is
// marked failed when server/discover, asked in its place, times out.
func TestModernHTTPServerHung(t *testing.T) {
	url, hang := hangingHTTPServer(t)
	w := newChangeWatcher()
	r := newTestRegistry(t, Options{OnChange: w.onChange, PingInterval: 20 * time.Millisecond, PingTimeout: 50 * time.Millisecond})
	st := applyAndWait(t, r, config.ServerConfig{Name: "h", Transport: config.TransportHTTP, Protocol: ProtocolModern, URL: url,
		StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second})
	if st["h"].State != StateReady || st["h"].ProtocolVersion != ProtocolModern {
		t.Fatalf("status = %+v", st["h"])
	}
	hang.Store(true)
	w.waitFor(t, "h failed", func() bool { return statusMap(r)["h"].State == StateFailed })
	if e := statusMap(r)["h"].Error; !strings.Contains(e, "no answer to server/discover within 50ms") {
		t.Errorf("status error = %q", e)
	}
}

// TestPingAnsweredWithAnError: a server that answers ping with a JSON-RPC error is alive.
func TestPingAnsweredWithAnError(t *testing.T) {
	var pings atomic.Int64
	h := server.NewStreamableHTTPServer(newInProcServer("h", "echo"))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "ping" {
				pings.Add(1)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no ping here"}}`, msg.ID)
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(ts.Close)
	w := newChangeWatcher()
	r := newTestRegistry(t, Options{OnChange: w.onChange, PingInterval: 5 * time.Millisecond})
	applyAndWait(t, r, config.ServerConfig{Name: "h", Transport: config.TransportHTTP, Protocol: ProtocolLegacy, URL: ts.URL + "/mcp",
		StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second})
	// Wait for a few pings by calling (each call is a round trip; pings go on meanwhile).
	for i := 0; pings.Load() < 3; i++ {
		if i == 100000 {
			t.Fatal("no pings seen")
		}
		if res, _ := r.Call(context.Background(), "mcp__h__echo", nil); res.IsError {
			t.Fatalf("call = %+v", res)
		}
	}
	if s := statusMap(r)["h"]; s.State != StateReady {
		t.Errorf("status = %+v; a server that answers ping with an error is alive", s)
	}
}

// A hung HTTP server whose tools are being listed again (a list_changed came just before it hung)
// is marked failed when its ping times out, not when the listing gives up (its startup timeout,
// a minute here): death and re-listing share one goroutine, and the listing ends with the
// connection.
func TestHTTPServerHungDuringRelist(t *testing.T) {
	url, hang := hangingHTTPServer(t)
	w := newChangeWatcher()
	r := newTestRegistry(t, Options{OnChange: w.onChange, PingInterval: 20 * time.Millisecond, PingTimeout: 50 * time.Millisecond})
	r.debounce = time.Millisecond
	applyAndWait(t, r, config.ServerConfig{Name: "h", Transport: config.TransportHTTP, Protocol: ProtocolLegacy, URL: url,
		StartupTimeout: time.Minute, CallTimeout: time.Minute})
	r.mu.Lock()
	c := r.servers["h"].conn
	r.mu.Unlock()
	hang.Store(true)
	c.changed <- struct{}{} // a list_changed: the re-list hangs with the server
	w.waitFor(t, "h failed", func() bool { return statusMap(r)["h"].State == StateFailed })
	if e := statusMap(r)["h"].Error; !strings.Contains(e, "no answer to ping within 50ms") {
		t.Errorf("status error = %q", e)
	}
}

// hangingHTTPServer is a streamable HTTP MCP server (tool echo) at url that stops answering
// POSTs, pings included, once hang is set (until the test ends).
func hangingHTTPServer(t *testing.T) (url string, hang *atomic.Bool) {
	hang = new(atomic.Bool)
	release := make(chan struct{})
	h := server.NewStreamableHTTPServer(newInProcServer("h", "echo"))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if hang.Load() && req.Method == http.MethodPost {
			<-release
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) }) // runs first: lets the hung handlers end
	return ts.URL + "/mcp", hang
}
