package mcpbridge

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// subscriptions/listen (2026-07-28). A modern server sends its list changes only on a
// subscriptions/listen request the client keeps open. listen opens one per modern connection, for
// what the server's capabilities say it may change (tools, prompts, resources lists); the
// notifications arrive on the transport like a legacy server's and go through the same handler
// (conn.go: a changed tool list is re-listed through the pins by watch). It is opened again when
// the server ends it, until the connection ends.
//
// ttlMs on list results: Switchboard re-lists only when the server says its list changed, or when
// the server is reconnected; it never re-lists on a timer, so a list is never fetched again
// before its ttlMs ends unless the server notified a change.
//
// Not done yet: resource subscriptions (Registry.Subscribe) on modern servers still send
// resources/subscribe; they belong in this request's resourceSubscriptions.
func (c *conn) listen(run context.Context) {
	var filter mcp.SubscriptionFilter
	if c.caps.Tools != nil && c.caps.Tools.ListChanged {
		filter.ToolsListChanged = true
	}
	if c.caps.Prompts != nil && c.caps.Prompts.ListChanged {
		filter.PromptsListChanged = true
	}
	if c.caps.Resources != nil && c.caps.Resources.ListChanged {
		filter.ResourcesListChanged = true
	}
	if filter.IsEmpty() {
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
	for ctx.Err() == nil {
		_, err := c.request(ctx, string(mcp.MethodSubscriptionsListen), map[string]any{"notifications": filter})
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.log.Debug("mcp subscriptions/listen ended", "err", err)
		}
		select { // a server that ends the stream at once is not asked in a loop
		case <-time.After(time.Second):
		case <-ctx.Done():
		}
	}
}
