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

// progressSink holds the latest progress of one call until its goroutine hands it on.
type progressSink struct {
	mu     sync.Mutex
	latest *Progress
	seen   bool
	high   float64       // the highest progress accepted so far
	signal chan struct{} // capacity 1
}

func (p *progressSink) put(pr Progress) {
	p.mu.Lock()
	if p.seen && pr.Progress < p.high {
		// Progress must increase; notifications can arrive out of order (mcp-go's HTTP
		// transports), and a late, lower value would move the editor's bar backwards.
		p.mu.Unlock()
		return
	}
	p.seen, p.high, p.latest = true, pr.Progress, &pr
	p.mu.Unlock()
	select {
	case p.signal <- struct{}{}:
	default:
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

// startProgress registers a progress token for one call and starts the goroutine that hands its
// notifications to fn. The returned stop unregisters it and waits for fn to return.
func (c *conn) startProgress(fn func(Progress)) (token string, stop func()) {
	token = "sb-progress-" + strconv.FormatInt(c.seq.Add(1), 10)
	sink := &progressSink{signal: make(chan struct{}, 1)}
	c.progress.Store(token, sink)
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-sink.signal:
				if pr, ok := sink.take(); ok {
					fn(pr)
				}
			case <-done:
				if pr, ok := sink.take(); ok {
					fn(pr) // the last value, so the caller sees where the call ended
				}
				return
			}
		}
	}()
	return token, func() {
		c.progress.Delete(token)
		close(done)
		<-exited
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
