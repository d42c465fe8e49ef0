// Package hosttest is a fake editor for testing the host in the gopls "integration" style: the one
// LSP test client (host/lsptest) connected to lsp.Serve over net.Pipe (unbuffered, so a handler that calls the editor
// without releasing the read loop deadlocks at once instead of passing by luck), scripted answers
// to window/showMessageRequest, awaitable expectations on everything the host sends, and the
// JSON-RPC log printed when a test fails.
//
// It owns the fake editor's state and scripts, nothing of the protocol: frames and JSON-RPC are
// host/lsptest's. It imports the language server (host/lsp, to start it), the application's
// options (host) and host/lsptest; it must not import go.lsp.dev, host/internal/lspconn or mcp-go
// (deps_test.go guards it), so the host's framer is checked, not shared.
package hosttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/host/lsptest"
)

// Message is one notification or request the host sent to the editor.
type Message struct {
	Method string
	Params json.RawMessage
}

// Responder answers a window/showMessageRequest: the returned title is the chosen action, "" means
// a null reply (dismissed). It may block (the editor's read loop is not held while it runs); ctx
// ends when the host cancels the request or the connection ends.
type Responder func(ctx context.Context, params ShowMessageRequestParams) (title string)

// ShowMessageRequestParams is window/showMessageRequest's params.
type ShowMessageRequestParams struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
	Actions []struct {
		Title string `json:"title"`
	} `json:"actions"`
}

// Editor is the fake editor end of the connection: an [lsptest.Client] (the one LSP test client)
// whose answers to the host's requests run asynchronously. Safe for concurrent use.
type Editor struct {
	client    *lsptest.Client
	raw       net.Conn
	log       *frameLog
	state     *stateBox
	mu        sync.Mutex // guards resp, apply
	resp      Responder
	apply     func(params json.RawMessage) bool
	closed    chan struct{}
	closeOnce sync.Once
}

func newEditor(raw net.Conn, log *frameLog) *Editor {
	e := &Editor{raw: raw, log: log, state: newStateBox(), closed: make(chan struct{})}
	e.client = lsptest.New(raw, tapWriter{raw, log}, lsptest.Options{
		NoRecord:    true, // the state below records in wire order, responses included
		OnMessage:   e.received,
		AnswerAsync: e.answer,
	})
	return e
}

// SetResponder sets how showMessageRequest is answered (default: null, i.e. dismissed).
func (e *Editor) SetResponder(r Responder) {
	e.mu.Lock()
	e.resp = r
	e.mu.Unlock()
}

// Answer returns a Responder that always picks title ("" = null).
func Answer(title string) Responder {
	return func(context.Context, ShowMessageRequestParams) string { return title }
}

// SetApplyEdit sets the answer to workspace/applyEdit (default: applied).
func (e *Editor) SetApplyEdit(fn func(params json.RawMessage) bool) {
	e.mu.Lock()
	e.apply = fn
	e.mu.Unlock()
}

// received records every message from the host, in wire order, before it is answered.
func (e *Editor) received(m lsptest.Message) {
	e.log.fromHostFrame(m.Raw)
	switch {
	case m.Method == "":
		r := Response{ID: string(m.ID), Result: m.Result}
		if m.Error != nil {
			r.Code, r.Message = m.Error.Code, m.Error.Message
		}
		e.state.addResponse(r)
	default:
		e.state.add(Message{Method: m.Method, Params: m.Params}, m.IsRequest())
	}
}

// answer answers one request from the host on a goroutine of its own (lsptest.Options.AnswerAsync):
// ctx ends when the host cancels the request or the connection ends.
func (e *Editor) answer(ctx context.Context, m lsptest.Message) (any, bool) {
	switch m.Method {
	case "window/showMessageRequest":
		var p ShowMessageRequestParams
		json.Unmarshal(m.Params, &p) // ignore error: the test sees the raw params in State
		e.mu.Lock()
		r := e.resp
		e.mu.Unlock()
		title := ""
		if r != nil {
			title = r(ctx, p)
		}
		if title == "" {
			return nil, true
		}
		return map[string]string{"title": title}, true
	case "window/workDoneProgress/create":
		return nil, true
	case "window/showDocument":
		return map[string]bool{"success": true}, true
	case "workspace/applyEdit":
		e.mu.Lock()
		fn := e.apply
		e.mu.Unlock()
		return map[string]bool{"applied": fn == nil || fn(m.Params)}, true
	}
	return &lsptest.Error{Code: -32601, Message: "fake editor: " + m.Method + " not supported"}, true
}

// Call sends a request and decodes the result into result (which may be nil).
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	p, err := marshal(params)
	if err != nil {
		return err
	}
	return e.client.Call(ctx, method, p, result)
}

// Notify sends a notification.
func (e *Editor) Notify(ctx context.Context, method string, params any) error {
	p, err := marshal(params)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return e.client.Notify(method, p)
}

// WriteRaw writes bytes to the connection as they are (malformed-frame tests).
func (e *Editor) WriteRaw(b []byte) error {
	return e.client.WriteRaw(b) // logged by tapWriter
}

// RawCall writes a request frame with the given raw JSON id (e.g. `"c1"`), bypassing the client's
// id allocation, so a test can cancel it with $/cancelRequest; await its answer with
// Env.AwaitResponse.
func (e *Editor) RawCall(id, method string, params any) error {
	p, err := marshal(params)
	if err != nil {
		return err
	}
	if p == nil {
		p = json.RawMessage("null")
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, p)
	return e.WriteRaw(lsptest.Frame([]byte(body)))
}

// Close drops the connection, as an editor that dies does.
func (e *Editor) Close() error {
	e.closeOnce.Do(func() { close(e.closed) })
	return e.raw.Close()
}

func marshal(v any) (json.RawMessage, error) {
	switch p := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	case string:
		return json.RawMessage(p), nil
	}
	b, err := json.Marshal(v)
	return json.RawMessage(b), err
}

// ErrorCode returns the JSON-RPC error code of err, or 0.
func ErrorCode(err error) int64 {
	var we *lsptest.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// frameLog records every frame for the failure report.
type frameLog struct {
	mu    sync.Mutex
	start time.Time
	lines []string
	// fromHost holds every frame the host sent, whole (lines are cut for the failure log).
	fromHost []string
}

// fromHostFrame logs one message the host sent.
func (l *frameLog) fromHostFrame(body []byte) {
	l.mu.Lock()
	l.fromHost = append(l.fromHost, string(body))
	l.mu.Unlock()
	l.add("host → editor", body)
}

// tapWriter logs every frame the editor writes (raw bytes too) on its way to the host.
type tapWriter struct {
	w   io.Writer
	log *frameLog
}

func (t tapWriter) Write(b []byte) (int, error) {
	body := b
	if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 && bytes.HasPrefix(b, []byte("Content-Length:")) {
		body = b[i+4:]
	}
	t.log.add("editor → host", body)
	return t.w.Write(b)
}

func (l *frameLog) add(dir string, body []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := string(body)
	if len(b) > 4000 {
		b = b[:4000] + fmt.Sprintf("… (%d bytes)", len(body))
	}
	l.lines = append(l.lines, fmt.Sprintf("%8.3fms %s %s", float64(time.Since(l.start).Microseconds())/1000, dir, b))
}

func (l *frameLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
