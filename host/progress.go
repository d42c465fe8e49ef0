package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// Tool-call progress. An MCP server may report progress on a tool call (notifications/progress);
// the host shows it in the editor as LSP work-done progress ($/progress begin/report/end), for
// switchboard.callTool and for the tool calls of a chat turn alike. The progress is created on the
// first notification only, so a quick call costs nothing; it uses the workDoneToken of
// workspace/executeCommand when the editor sent one, else window/workDoneProgress/create when the
// editor supports it. It is cancellable: window/workDoneProgress/cancel stops that call (the model
// or the editor gets an error result saying so), not the turn.

// progressTools is the registry as the session sees it: every call reports its progress.
type progressTools struct {
	*mcpbridge.Registry
	s *server
}

func (t progressTools) Call(ctx context.Context, name string, args json.RawMessage) (mcpbridge.Result, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tp := &toolProgress{s: t.s, tool: name, token: workDoneTokenFrom(ctx), cancel: cancel}
	res, err := t.Registry.Call(mcpbridge.WithProgress(ctx, tp.report), name, args)
	tp.end(res)
	if tp.cancelled.Load() && err != nil && context.Cause(ctx) == errProgressCancelled {
		// Only this call was stopped, from the editor's progress: an error result, not a cancelled turn.
		return mcpbridge.Result{Name: name, IsError: true, Text: "the user cancelled this tool call",
			Bytes: len("the user cancelled this tool call")}, nil
	}
	return res, err
}

var errProgressCancelled = fmt.Errorf("host: cancelled from the editor's progress")

type workDoneTokenKey struct{}

// withWorkDoneToken keeps the executeCommand's workDoneToken for the tool call it runs.
func withWorkDoneToken(ctx context.Context, token json.RawMessage) context.Context {
	if len(token) == 0 || string(token) == "null" {
		return ctx
	}
	t, err := canonicalToken(token)
	if err != nil {
		return ctx // not a valid token: as if none was sent
	}
	return context.WithValue(ctx, workDoneTokenKey{}, t)
}

func workDoneTokenFrom(ctx context.Context) json.RawMessage {
	t, _ := ctx.Value(workDoneTokenKey{}).(json.RawMessage)
	return t
}

// toolProgress is the editor's progress for one tool call. report runs on one goroutine at a
// time (mcpbridge's), and end after the last report: no lock needed between them.
type toolProgress struct {
	s         *server
	tool      string
	token     json.RawMessage // the editor's, or ours once created
	cancel    context.CancelCauseFunc
	begun     bool
	failed    bool // could not create a token: report nothing
	cancelled atomic.Bool
}

type progressValue struct {
	Kind        string  `json:"kind"`
	Title       string  `json:"title,omitempty"`
	Cancellable *bool   `json:"cancellable,omitempty"`
	Message     string  `json:"message,omitempty"`
	Percentage  *uint32 `json:"percentage,omitempty"`
}

type progressParams struct {
	Token json.RawMessage `json:"token"`
	Value progressValue   `json:"value"`
}

var progressSeq atomic.Int64

func (tp *toolProgress) report(p mcpbridge.Progress) {
	if tp.failed {
		return
	}
	msg, pct := progressText(p)
	if !tp.begun {
		if tp.token == nil && !tp.create() {
			tp.failed = true
			return
		}
		tp.begun = true
		tp.s.progress.add(tp)
		yes := true
		tp.s.send(MethodProgress, progressParams{Token: tp.token, Value: progressValue{
			Kind: "begin", Title: "Switchboard: " + tp.tool, Cancellable: &yes, Message: msg, Percentage: pct}})
		return
	}
	tp.s.send(MethodProgress, progressParams{Token: tp.token, Value: progressValue{Kind: "report", Message: msg, Percentage: pct}})
}

// create asks the editor for a progress token (window/workDoneProgress/create).
func (tp *toolProgress) create() bool {
	tp.s.stateMu.Lock()
	supported := tp.s.progressCap
	tp.s.stateMu.Unlock()
	if !supported {
		return false
	}
	token, _ := json.Marshal("switchboard/tool/" + strconv.FormatInt(progressSeq.Add(1), 10))
	// The call waits for its last report: an editor that never answers must not hold it long.
	ctx, cancel := context.WithTimeout(tp.s.baseCtx, 5*time.Second)
	defer cancel()
	if _, err := tp.s.call(ctx, MethodWorkDoneProgressNew, map[string]json.RawMessage{"token": token}, nil); err != nil {
		tp.s.log.Debug("host: workDoneProgress/create for a tool call failed", "tool", tp.tool, "error", err)
		return false
	}
	tp.token = token
	return true
}

func (tp *toolProgress) end(res mcpbridge.Result) {
	if !tp.begun {
		return
	}
	tp.s.progress.remove(tp)
	msg := "done"
	switch {
	case tp.cancelled.Load():
		msg = "cancelled"
	case res.IsError:
		msg = "failed"
	}
	tp.s.send(MethodProgress, progressParams{Token: tp.token, Value: progressValue{Kind: "end", Message: msg}})
}

// progressText is the report's message ("step 3 of 10", or "3/10" when the server sends none) and
// its percentage when the total is known.
func progressText(p mcpbridge.Progress) (string, *uint32) {
	msg := p.Message
	var pct *uint32
	if p.Total > 0 {
		v := uint32(min(max(p.Progress/p.Total*100, 0), 100))
		pct = &v
		if msg == "" {
			msg = fmt.Sprintf("%g/%g", p.Progress, p.Total)
		}
	} else if msg == "" {
		msg = fmt.Sprintf("%g", p.Progress)
	}
	return safetext.Bounded(msg, previewLimit), pct
}

// progressSet is the begun tool progresses, by token, for window/workDoneProgress/cancel.
type progressSet struct {
	mu sync.Mutex
	m  map[string]*toolProgress
}

func (ps *progressSet) add(tp *toolProgress) {
	ps.mu.Lock()
	if ps.m == nil {
		ps.m = map[string]*toolProgress{}
	}
	ps.m[string(tp.token)] = tp
	ps.mu.Unlock()
}

func (ps *progressSet) remove(tp *toolProgress) {
	ps.mu.Lock()
	delete(ps.m, string(tp.token))
	ps.mu.Unlock()
}

// workDoneProgressCancel is window/workDoneProgress/cancel: stop that tool call. Unknown tokens
// (the startup progress, a call that just ended) are ignored.
func (s *server) workDoneProgressCancel(ctx context.Context, raw json.RawMessage) error {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	if err := lspconn.Decode(MethodWorkDoneProgressCancel, raw, &p); err != nil {
		return err
	}
	token, err := canonicalToken(p.Token)
	if err != nil {
		return lspconn.InvalidParams("%s: token must be a string or an integer", MethodWorkDoneProgressCancel)
	}
	s.progress.mu.Lock()
	tp := s.progress.m[string(token)]
	s.progress.mu.Unlock()
	if tp != nil {
		tp.cancelled.Store(true)
		tp.cancel(errProgressCancelled)
	}
	return nil
}

// canonicalToken re-encodes a progress token (a string or an integer) so that equal tokens compare
// equal whatever their spelling on the wire.
func canonicalToken(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	switch v.(type) {
	case string, float64:
		return json.Marshal(v)
	}
	return nil, fmt.Errorf("not a string or a number")
}
