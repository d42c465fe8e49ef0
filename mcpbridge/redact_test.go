package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// logCapture is a slog handler target that records text output and signals each record.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
	rec chan struct{}
}

func (l *logCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(p)
	select {
	case l.rec <- struct{}{}:
	default:
	}
	return n, err
}

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitFor waits until the log holds want (each record wakes it), or fails after 20s.
func (l *logCapture) waitFor(t *testing.T, want string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if s := l.String(); strings.Contains(s, want) {
			return s
		}
		select {
		case <-l.rec:
		case <-deadline:
			t.Fatalf("no log line with %q; log:\n%s", want, l.String())
		}
	}
}

// TestCallErrorRedactsURLSecret (F3): a key in the URL path must not reach the model through a
// failing call's error, nor the log through mcp-go's own lines (its listener's GET fails too).
func TestCallErrorRedactsURLSecret(t *testing.T) {
	const secret = "zapKEY123456789"
	h := server.NewStreamableHTTPServer(newInProcServer("zap", "echo"))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		drop := req.Method == http.MethodGet // the continuous listener: fails, and mcp-go logs it
		if req.Method == http.MethodPost {
			body, _ := io.ReadAll(req.Body) // ignore error: an empty body fails below
			var msg struct{ Method string }
			json.Unmarshal(body, &msg) // ignore error: not JSON-RPC is passed on
			drop = msg.Method == "tools/call"
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		if drop {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(ts.Close)
	logs := &logCapture{rec: make(chan struct{}, 1)}
	r := newTestRegistry(t, Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Getenv: env(map[string]string{"ZAP_KEY": secret})})
	st := applyAndWait(t, r, config.ServerConfig{Name: "zap", Transport: config.TransportHTTP, Protocol: ProtocolLegacy, URL: ts.URL + "/api/${ZAP_KEY}/mcp?k=${ZAP_KEY}",
		StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second})
	if st["zap"].State != StateReady {
		t.Fatalf("status = %+v", st["zap"])
	}
	res, err := r.Call(context.Background(), "mcp__zap__echo", json.RawMessage(`{}`))
	if err != nil || !res.IsError {
		t.Fatalf("call = %+v, %v; want an error result", res, err)
	}
	if strings.Contains(res.Text, secret) || !strings.Contains(res.Text, "${env:ZAP_KEY}") {
		t.Errorf("call error = %q; want the secret replaced by ${env:ZAP_KEY}", res.Text)
	}
	out := logs.waitFor(t, "failed to listen")
	if strings.Contains(out, secret) {
		t.Errorf("log carries the secret:\n%s", out)
	}
}

// TestRedactEncodedForms (F4): the value is hidden however a library wrote it: raw, in a URL
// path or query, JSON-escaped, %-encoded in lower case.
func TestRedactEncodedForms(t *testing.T) {
	const secret = `s3cr et&/"x`
	c := config.ServerConfig{Name: "e", Transport: config.TransportHTTP, URL: "https://h.example/${TOK}"}
	get := env(map[string]string{"TOK": secret})
	for _, s := range []string{
		secret,
		"Post https://h/s3cr%20et&%2F%22x: EOF", // url.PathEscape
		"k=s3cr+et%26%2F%22x",                   // url.QueryEscape
		`{"error":"s3cr et\u0026/\"x"}`,         // JSON with HTML escaping
		`{"error":"s3cr et&/\"x"}`,              // JSON
		"s3cr%20et&%2f%22x",                     // lower-case hex
		"s3cr%20et%26%2F%22x",                   // encodeURIComponent
		`Get "https://h/s3cr%20et&%2F%22x" (quoted with %q)`, // path form in a quoted URL
		`msg="s3cr et&/\"x"`, // Go %q
	} {
		got := c.Redact(s, get)
		if !strings.Contains(got, "${env:TOK}") {
			t.Errorf("Redact(%q) = %q: secret not found", s, got)
		}
	}
	// Short values are kept: hiding "abc" would shred ordinary text (documented floor).
	short := config.ServerConfig{Name: "s", Transport: config.TransportHTTP, URL: "https://h.example/${S}"}
	if got := short.Redact("abc def", env(map[string]string{"S": "abc"})); got != "abc def" {
		t.Errorf("short value redacted: %q", got)
	}
}

// TestRedactHandler: every message and attribute (groups and With attributes included) passes
// through the redactor.
func TestRedactHandler(t *testing.T) {
	var buf bytes.Buffer
	h := newRedactHandler(slog.NewTextHandler(&buf, nil), func(s string) string { return strings.ReplaceAll(s, "SECRET", "[x]") })
	log := slog.New(h).With("url", "http://h/SECRET").WithGroup("g")
	log.Error("failed at SECRET", "err", io.ErrUnexpectedEOF, "e2", &json.SyntaxError{}, slog.Group("in", "u", "SECRET"),
		"v", struct{ A string }{"SECRET"})
	if strings.Contains(buf.String(), "SECRET") {
		t.Errorf("log = %s", buf.String())
	}
}
