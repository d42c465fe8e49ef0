package mcpbridge

import (
	"context"
	"net/url"
	"path/filepath"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// rootsHandler answers a server's roots/list with Options.Roots.
type rootsHandler func() []string

func (h rootsHandler) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: Roots(h())}, nil
}

// Roots turns absolute folder paths into MCP roots (file URIs named after the folder).
func Roots(paths []string) []mcp.Root {
	roots := make([]mcp.Root, 0, len(paths))
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(p)}
		roots = append(roots, mcp.Root{URI: u.String(), Name: filepath.Base(p)})
	}
	return roots
}

// RootsChanged tells every ready server that the roots changed (notifications/roots/list_changed);
// they ask for the new list when they need it. It does not wait for the servers.
func (r *Registry) RootsChanged() {
	if r.opts.Roots == nil {
		return
	}
	r.sharedRootsChanged() // shared.go: a workspace-scope instance's roots never change
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	var conns []*conn
	for _, e := range r.servers {
		if e.conn != nil && e.state == StateReady && !e.conn.isModern() { // 2026-07-28 removed the notification
			conns = append(conns, e.conn)
		}
	}
	for _, c := range conns {
		r.wg.Go(func() {
			// A server that does not read its stdin must not hold anything up.
			ctx, cancel := context.WithTimeout(r.life, 5*time.Second)
			defer cancel()
			if err := c.client.RootListChanges(ctx); err != nil {
				r.log.Debug("mcp: roots/list_changed not sent", "server", c.cfg.Name, "err", err)
			}
		})
	}
	r.mu.Unlock()
}
