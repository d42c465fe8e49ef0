package mcpbridge

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// Progress is one notifications/progress of a running tool call.
type Progress struct {
	Progress float64 // increases with every notification
	Total    float64 // 0 when the server does not know
	Message  string  // may be empty
}

type progressKey struct{}

// WithProgress returns a ctx whose tool calls (Registry.Call) ask the server for progress and
// pass each notification to fn. fn runs on its own goroutine, never on the transport's, one call
// at a time, and never after Call has returned; notifications that arrive while fn runs are
// coalesced into the latest, and the latest is always delivered before Call returns.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

func progressFunc(ctx context.Context) func(Progress) {
	fn, _ := ctx.Value(progressKey{}).(func(Progress))
	return fn
}

// progressSink holds the latest progress of one call until its goroutine hands it on. The
// goroutine starts with the first notification, so a call that reports no progress (most calls)
// costs no goroutine and no hand-off when it ends.
type progressSink struct {
	fn     func(Progress)
	mu     sync.Mutex
	latest *Progress
	seen   bool
	high   float64       // the highest progress accepted so far
	ended  bool          // the call ended: later notifications are dropped
	signal chan struct{} // capacity 1; nil until the first notification starts the goroutine
	done   chan struct{} // closed when the call ends (only once the goroutine runs)
	exited chan struct{} // closed when the goroutine has delivered the last value
}

func (p *progressSink) put(pr Progress) {
	p.mu.Lock()
	if p.ended || (p.seen && pr.Progress < p.high) {
		// Progress must increase; notifications can arrive out of order (mcp-go's HTTP
		// transports), and a late, lower value would move the editor's bar backwards.
		p.mu.Unlock()
		return
	}
	p.seen, p.high, p.latest = true, pr.Progress, &pr
	if p.signal == nil {
		p.signal, p.done, p.exited = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		go p.deliver()
	}
	signal := p.signal
	p.mu.Unlock()
	select {
	case signal <- struct{}{}:
	default:
	}
}

// deliver hands values to fn one at a time, off the transport's read goroutine, until the call
// ends; then it hands on the last value, so the caller sees where the call ended.
func (p *progressSink) deliver() {
	defer close(p.exited)
	for {
		select {
		case <-p.signal:
			if pr, ok := p.take(); ok {
				p.fn(pr)
			}
		case <-p.done:
			if pr, ok := p.take(); ok {
				p.fn(pr)
			}
			return
		}
	}
}

func (p *progressSink) take() (Progress, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.latest == nil {
		return Progress{}, false
	}
	pr := *p.latest
	p.latest = nil
	return pr, true
}

// end stops accepting values and, when the goroutine runs, waits until fn has returned.
func (p *progressSink) end() {
	p.mu.Lock()
	p.ended = true
	running := p.signal != nil
	p.mu.Unlock()
	if running {
		close(p.done)
		<-p.exited
	}
}

// startProgress registers a progress token for one call; its notifications go to fn (see
// progressSink). The returned stop unregisters it and waits for fn to return.
func (c *conn) startProgress(fn func(Progress)) (token string, stop func()) {
	token = "sb-progress-" + strconv.FormatInt(c.seq.Add(1), 10)
	sink := &progressSink{fn: fn}
	c.progress.Store(token, sink)
	return token, func() {
		c.progress.Delete(token)
		sink.end()
	}
}

// onProgress routes a notifications/progress to its call. It runs on the transport's read
// goroutine: it only stores the value. Unknown tokens (a finished call) are ignored.
func (c *conn) onProgress(n mcp.JSONRPCNotification) {
	f := n.Params.AdditionalFields
	var token string
	switch t := f["progressToken"].(type) {
	case string:
		token = t
	default:
		return // we only hand out string tokens
	}
	v, ok := c.progress.Load(token)
	if !ok {
		return
	}
	num := func(k string) float64 {
		switch x := f[k].(type) { // float64 from JSON; Go numbers from in-process servers
		case float64:
			return x
		case float32:
			return float64(x)
		case int:
			return float64(x)
		case int64:
			return float64(x)
		case int32:
			return float64(x)
		case json.Number:
			y, _ := x.Float64()
			return y
		}
		return 0
	}
	pr := Progress{Progress: num("progress"), Total: num("total")}
	if m, ok := f["message"].(string); ok {
		pr.Message = m
	}
	if pr.Total < 0 {
		pr.Total = 0
	}
	v.(*progressSink).put(pr)
}
