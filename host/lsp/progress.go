package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/wire"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// Tool-call progress (host.ToolProgress over LSP). An MCP server may report progress on a tool call (notifications/progress);
// the host shows it in the editor as LSP work-done progress ($/progress begin/report/end), for
// switchboard.callTool and for the tool calls of a chat turn alike. The progress is created on the
// first notification only, so a quick call costs nothing; it uses the workDoneToken of
// workspace/executeCommand when the editor sent one, else window/workDoneProgress/create when the
// editor supports it. It is cancellable: window/workDoneProgress/cancel stops that call (the model
// or the editor gets an error result saying so), not the turn.

// newToolProgress is the observer of a switchboard.callTool that came with the editor's
// workDoneToken; nil when it sent none (or not a valid one): then the call's progress is the UI's
// (ToolProgress), created on the first report.
func (s *server) newToolProgress(token json.RawMessage) host.ToolProgress {
	if len(token) == 0 || string(token) == "null" {
		return nil
	}
	t, err := canonicalToken(token)
	if err != nil {
		return nil // not a valid token: as if none was sent
	}
	return &toolProgress{s: s, token: t}
}

// ToolProgress is host.UI: the progress of a chat turn's tool call, created in the editor
// (window/workDoneProgress/create) on its first report.
func (s *server) ToolProgress() host.ToolProgress {
	if !s.capabilities().progress {
		return nil // no workDoneToken and no window/workDoneProgress: nowhere to show it
	}
	return &toolProgress{s: s}
}

// toolProgress is the editor's progress for one tool call. report runs on one goroutine at a
// time (mcpbridge's), and end after the last report: no lock needed between them.
type toolProgress struct {
	s      *server
	tool   string
	token  json.RawMessage // the editor's, or ours once created
	stop   func()          // cancels this call alone (host.ToolProgress.Start)
	begun  bool
	failed bool // could not create a token: report nothing
}

// Start is host.ToolProgress.
func (tp *toolProgress) Start(tool string, stop func()) { tp.tool, tp.stop = tool, stop }

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

// Report is host.ToolProgress.
func (tp *toolProgress) Report(p mcpbridge.Progress) {
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
		tp.s.tools.add(tp)
		yes := true
		tp.s.conn.send(wire.MethodProgress, progressParams{Token: tp.token, Value: progressValue{
			Kind: "begin", Title: "Switchboard: " + tp.tool, Cancellable: &yes, Message: msg, Percentage: pct}})
		return
	}
	tp.s.conn.send(wire.MethodProgress, progressParams{Token: tp.token, Value: progressValue{Kind: "report", Message: msg, Percentage: pct}})
}

// create asks the editor for a progress token (window/workDoneProgress/create).
func (tp *toolProgress) create() bool {
	if !tp.s.capabilities().progress {
		return false
	}
	token, _ := json.Marshal("switchboard/tool/" + strconv.FormatInt(progressSeq.Add(1), 10))
	// The call waits for its last report: an editor that never answers must not hold it long.
	ctx, cancel := context.WithTimeout(tp.s.conn.baseCtx, 5*time.Second)
	defer cancel()
	if err := tp.s.conn.call(ctx, wire.MethodWorkDoneProgressNew, map[string]json.RawMessage{"token": token}, nil); err != nil {
		tp.s.log.Debug("host: workDoneProgress/create for a tool call failed", "tool", tp.tool, "error", err)
		return false
	}
	tp.token = token
	return true
}

// End is host.ToolProgress.
func (tp *toolProgress) End(res mcpbridge.Result, cancelled bool) {
	if !tp.begun {
		return
	}
	tp.s.tools.remove(tp)
	msg := "done"
	switch {
	case cancelled:
		msg = "cancelled"
	case res.IsError:
		msg = "failed"
	}
	tp.s.conn.send(wire.MethodProgress, progressParams{Token: tp.token, Value: progressValue{Kind: "end", Message: msg}})
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
	return safetext.Bounded(msg, 200), pct // as the approval preview
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
	if err := lspconn.Decode(wire.MethodWorkDoneProgressCancel, raw, &p); err != nil {
		return err
	}
	token, err := canonicalToken(p.Token)
	if err != nil {
		return lspconn.InvalidParams("%s: token must be a string or an integer", wire.MethodWorkDoneProgressCancel)
	}
	s.tools.mu.Lock()
	tp := s.tools.m[string(token)]
	s.tools.mu.Unlock()
	if tp != nil && tp.stop != nil {
		tp.stop()
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
