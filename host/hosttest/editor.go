// Package hosttest is a fake editor for testing the host in the gopls "integration" style: a Go
// LSP client connected to lsp.Serve over net.Pipe (unbuffered, so a handler that calls the editor
// without releasing the read loop deadlocks at once instead of passing by luck), scripted answers
// to window/showMessageRequest, awaitable expectations on everything the host sends, and the
// JSON-RPC log printed when a test fails.
package hosttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
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

// Editor is the fake editor end of the connection. Safe for concurrent use.
type Editor struct {
	conn      jsonrpc2.Conn
	raw       net.Conn
	log       *frameLog
	state     *stateBox
	mu        sync.Mutex // guards responder, applyEdit
	resp      Responder
	apply     func(params json.RawMessage) bool
	closed    chan struct{}
	closeOnce sync.Once
}

func newEditor(raw net.Conn, log *frameLog) *Editor {
	e := &Editor{raw: raw, log: log, state: newStateBox(), closed: make(chan struct{})}
	stream := lspconn.NewStream(raw, lspconn.StreamOptions{Tap: e.tap})
	e.conn = jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(lspconn.Codec{}))
	e.conn.Go(context.Background(), e.handle)
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

func (e *Editor) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	method := strings.Clone(req.Method()) // borrowed from the frame buffer
	params := json.RawMessage(append([]byte(nil), req.Params()...))
	if !req.IsCall() {
		e.state.add(Message{Method: method, Params: params}, false)
		return nil, nil
	}
	e.state.add(Message{Method: method, Params: params}, true)
	switch method {
	case "window/showMessageRequest":
		jsonrpc2.Async(ctx) // the responder may block; keep reading meanwhile
		var p ShowMessageRequestParams
		json.Unmarshal(params, &p) // ignore error: the test sees the raw params in State
		e.mu.Lock()
		r := e.resp
		e.mu.Unlock()
		title := ""
		if r != nil {
			title = r(jsonrpc2.DetachContext(ctx), p)
		}
		if title == "" {
			return json.RawMessage("null"), nil
		}
		b, _ := json.Marshal(map[string]string{"title": title}) // ignore error: a string
		return json.RawMessage(b), nil
	case "window/workDoneProgress/create":
		return json.RawMessage("null"), nil
	case "window/showDocument":
		return json.RawMessage(`{"success":true}`), nil
	case "workspace/applyEdit":
		e.mu.Lock()
		fn := e.apply
		e.mu.Unlock()
		applied := fn == nil || fn(params)
		return json.RawMessage(fmt.Sprintf(`{"applied":%v}`, applied)), nil
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "fake editor: %s not supported", method)
}

// Call sends a request and decodes the result into result (which may be nil).
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	p, err := marshal(params)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if _, err := e.conn.Call(ctx, method, p, &raw); err != nil {
		return err
	}
	if result != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("hosttest: decoding %s result %s: %w", method, raw, err)
		}
	}
	return nil
}

// Notify sends a notification.
func (e *Editor) Notify(ctx context.Context, method string, params any) error {
	p, err := marshal(params)
	if err != nil {
		return err
	}
	return e.conn.Notify(ctx, method, p)
}

// WriteRaw writes bytes to the connection as they are (malformed-frame tests).
func (e *Editor) WriteRaw(b []byte) error {
	e.log.add("editor → host (raw)", b)
	_, err := e.raw.Write(b)
	return err
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
	var we *jsonrpc2.Error
	if errors.As(err, &we) {
		return int64(we.Code)
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

func (e *Editor) tap(dir string, body []byte) {
	e.log.tap(dir, body)
	if dir != lspconn.In {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "" {
		return
	}
	r := Response{ID: string(m.ID), Result: m.Result}
	if m.Error != nil {
		r.Code, r.Message = m.Error.Code, m.Error.Message
	}
	e.state.addResponse(r)
}

func (l *frameLog) tap(dir string, body []byte) {
	// The editor's view: what the editor reads came out of the host.
	arrow := "host → editor"
	if dir == lspconn.Out {
		arrow = "editor → host"
	} else {
		l.mu.Lock()
		l.fromHost = append(l.fromHost, string(body))
		l.mu.Unlock()
	}
	l.add(arrow, body)
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
