package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// subscriptions/listen (2026-07-28). A modern server sends its list changes and resource updates
// only on a subscriptions/listen request the client keeps open. listen opens one per modern
// connection, for what the server's capabilities say it may change (tools, prompts, resources
// lists) and the resources the user subscribed to (Registry.Subscribe: resourceSubscriptions,
// which replace resources/subscribe); the notifications arrive on the transport like a legacy
// server's and go through the same handler (conn.go: a changed tool list is re-listed through the
// pins by watch). It is opened again when the server ends it, and when the subscriptions change
// (the old request is cancelled first), until the connection ends.
//
// ttlMs on list results: Switchboard re-lists only when the server says its list changed, or when
// the server is reconnected; it never re-lists on a timer, so a list is never fetched again
// before its ttlMs ends unless the server notified a change.

// listenState is what Subscribe and the listen loop share on a modern connection.
type listenState struct {
	kick chan struct{} // the subscriptions changed: listen again (capacity 1: kicks coalesce)

	// mu guards everything below.
	mu      sync.Mutex
	gen     int64         // bumped by every change of lists.subscribed (under lists.mu too)
	acked   int64         // the gen of the newest listen the server acknowledged
	ackedCh chan struct{} // closed (and replaced) when acked changes
	// sentID and sentGen: the listen request in flight and the gen its filter holds.
	sentID  string
	sentGen int64
	failed  error // why the newest listen ended without an acknowledgement (nil: none did)
	// heard is closed at the first acknowledgement: from then on the server's changes are heard.
	heard     chan struct{}
	heardOnce sync.Once
}

func newListenState() *listenState {
	return &listenState{kick: make(chan struct{}, 1), ackedCh: make(chan struct{}), heard: make(chan struct{})}
}

// onAck takes notifications/subscriptions/acknowledged on the read goroutine: the listen whose
// id it names holds the subscriptions of sentGen from now on.
func (s *listenState) onAck(n mcp.JSONRPCNotification) {
	id := fmt.Sprint(n.Params.Meta[mcp.MetaKeySubscriptionID])
	s.heardOnce.Do(func() { close(s.heard) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "" || id != s.sentID || s.sentGen <= s.acked {
		return
	}
	s.acked = s.sentGen
	close(s.ackedCh)
	s.ackedCh = make(chan struct{})
}

// sent records the listen request id about to go out with the subscriptions of gen.
func (s *listenState) sent(id string, gen int64) {
	s.mu.Lock()
	s.sentID, s.sentGen, s.failed = id, gen, nil
	s.mu.Unlock()
}

// ended records why a listen that was never acknowledged ended.
func (s *listenState) ended(id string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sentID == id && s.sentGen > s.acked {
		s.failed = err
		close(s.ackedCh) // wake the waiters: it will not be acknowledged
		s.ackedCh = make(chan struct{})
	}
}

// wait blocks until a listen holding gen (or a later one) is acknowledged, the newest listen
// failed, or ctx ends.
func (s *listenState) wait(ctx context.Context, gen int64) error {
	for {
		s.mu.Lock()
		acked, ch, failed, sentGen := s.acked, s.ackedCh, s.failed, s.sentGen
		s.mu.Unlock()
		switch {
		case acked >= gen:
			return nil
		case failed != nil && sentGen >= gen:
			return failed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("the server did not acknowledge the subscription: %w", ctx.Err())
		}
	}
}

// listenFilter is base with the connection's resource subscriptions, and their gen.
func (c *conn) listenFilter(base mcp.SubscriptionFilter) (mcp.SubscriptionFilter, int64) {
	c.lists.mu.Lock()
	defer c.lists.mu.Unlock()
	f := base
	for uri := range c.lists.subscribed {
		f.ResourceSubscriptions = append(f.ResourceSubscriptions, uri)
	}
	slices.Sort(f.ResourceSubscriptions)
	c.listenS.mu.Lock()
	gen := c.listenS.gen
	c.listenS.mu.Unlock()
	return f, gen
}

// listenBase is what the server's capabilities let a listen ask for besides resource updates.
func (c *conn) listenBase() mcp.SubscriptionFilter {
	var base mcp.SubscriptionFilter
	if c.caps.Tools != nil && c.caps.Tools.ListChanged {
		base.ToolsListChanged = true
	}
	if c.caps.Prompts != nil && c.caps.Prompts.ListChanged {
		base.PromptsListChanged = true
	}
	if c.caps.Resources != nil && c.caps.Resources.ListChanged {
		base.ResourcesListChanged = true
	}
	return base
}

func (c *conn) listen(run context.Context) {
	base := c.listenBase()
	canSubscribe := c.caps.Resources != nil && c.caps.Resources.Subscribe
	if base.IsEmpty() && !canSubscribe {
		return
	}
	ctx, cancel := context.WithCancel(run)
	defer cancel()
	go func() {
		select {
		case <-c.closed:
		case <-c.lost:
		case <-ctx.Done():
		}
		cancel()
	}()
	s := c.listenS
	for ctx.Err() == nil {
		select { // a change made before the filter is read is in it
		case <-s.kick:
		default:
		}
		filter, gen := c.listenFilter(base)
		if filter.IsEmpty() { // nothing to hear of until the user subscribes
			select {
			case <-s.kick:
				continue
			case <-ctx.Done():
				return
			}
		}
		reqCtx, reqCancel := context.WithCancel(ctx)
		kicked, exited := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(exited)
			select {
			case <-s.kick:
				close(kicked)
				reqCancel()
			case <-reqCtx.Done():
			}
		}()
		id := c.nextIDString()
		s.sent(id, gen)
		_, err := c.requestID(reqCtx, mcp.NewRequestId(id), string(mcp.MethodSubscriptionsListen), map[string]any{"notifications": filter})
		reqCancel()
		<-exited
		select {
		case <-kicked:
			continue // the subscriptions changed: listen again at once
		default:
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("the server ended the stream")
		}
		s.ended(id, err)
		c.log.Debug("mcp subscriptions/listen ended", "err", err)
		select { // a server that ends the stream at once is not asked in a loop
		case <-time.After(time.Second):
		case <-s.kick:
		case <-ctx.Done():
		}
	}
}

// subscribeModern changes a modern connection's resource subscriptions: the listen request is
// made again with them, and it returns once the server acknowledged it.
func (c *conn) subscribeModern(ctx context.Context, uri string, on bool) error {
	c.lists.mu.Lock()
	if c.lists.subscribed == nil {
		c.lists.subscribed = map[string]bool{}
	}
	if on == c.lists.subscribed[uri] {
		c.lists.mu.Unlock()
		return nil
	}
	if on {
		c.lists.subscribed[uri] = true
	} else {
		delete(c.lists.subscribed, uri)
	}
	c.listenS.mu.Lock()
	c.listenS.gen++
	gen := c.listenS.gen
	c.listenS.mu.Unlock()
	c.lists.mu.Unlock()
	select {
	case c.listenS.kick <- struct{}{}:
	default:
	}
	if !on {
		if f, _ := c.listenFilter(c.listenBase()); f.IsEmpty() {
			return nil // no listen follows: the cancelled one took the subscription with it
		}
		// Whatever the server still sends about uri is dropped (onResourceNotification).
		return c.listenS.wait(ctx, gen)
	}
	if err := c.listenS.wait(ctx, gen); err != nil {
		c.lists.mu.Lock()
		delete(c.lists.subscribed, uri)
		c.lists.mu.Unlock()
		return err
	}
	return nil
}
