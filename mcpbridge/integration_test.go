package mcpbridge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

func TestStdioServer(t *testing.T) {
	r := newTestRegistry(t, Options{})
	st := applyAndWait(t, r, stdioCfg("demo", "--instructions", "Call echo first."))
	if s := st["demo"]; s.State != StateReady || s.Tools != 8 || !s.Instructions || s.Transport != config.TransportStdio {
		t.Fatalf("status = %+v", s)
	}
	res, err := r.Call(context.Background(), "mcp__demo__echo", json.RawMessage(`{"text":"héllo"}`))
	if err != nil || res.IsError || res.Text != "héllo" {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	if got := r.Instructions(); got["demo"] != "Call echo first." {
		t.Errorf("Instructions = %v", got)
	}
}

func TestHTTPHeadersSent(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	h := server.NewStreamableHTTPServer(newInProcServer("h", "echo"))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		seen[req.Header.Get("Authorization")] = true
		mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(ts.Close) // after the registry's Close (cleanups run last-in first-out)
	r := newTestRegistry(t, Options{})
	st := applyAndWait(t, r, config.ServerConfig{Name: "h", Transport: config.TransportHTTP, URL: ts.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer t0ken"}, StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second})
	if st["h"].State != StateReady {
		t.Fatalf("status = %+v", st["h"])
	}
	if res, _ := r.Call(context.Background(), "mcp__h__echo", nil); res.Text != "h/echo" {
		t.Errorf("call = %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if !seen["Bearer t0ken"] || seen[""] {
		t.Errorf("Authorization headers seen: %v", seen)
	}
}
