package mcpbridge

import (
	"context"
	"slices"
	"time"
)

// watch is the goroutine a ready connection holds in the registry (an HTTP or SSE server has
// watchHealth too; with 30 servers, each goroutine less per server is a measurable part of the
// host's memory):
//   - when the connection ends on its own it marks the server failed (died);
//   - it re-lists the server's tools after notifications/tools/list_changed. The notification
//     handler only signals c.changed (it runs on the transport's read goroutine, where calling the
//     server would deadlock); watch waits for a quiet period of r.debounce, folds every signal that
//     arrived meanwhile into one tools/list, and re-registers only this server's tools. A storm of
//     notifications costs at most one re-list per debounce period.
func (r *Registry) watch(run context.Context, e *entry, gen uint64, c *conn) {
	var dead <-chan struct{} = c.lost
	if s := c.stdio(); s != nil {
		dead = s.Done()
	}
	var quiet *time.Timer
	var quietC <-chan time.Time // nil: no re-list due
	defer func() {
		if quiet != nil {
			quiet.Stop()
		}
	}()
	for {
		select {
		case <-dead:
			r.died(e, gen, c)
			return
		case <-c.closed:
			return
		case <-run.Done():
			return
		case <-c.changed:
			if quietC == nil {
				quiet = time.NewTimer(r.debounce)
				quietC = quiet.C
			}
		case <-quietC:
			quietC = nil
			select { // signals during the quiet period are covered by this re-list
			case <-c.changed:
			default:
			}
			if !r.relist(run, dead, e, gen, c) {
				return
			}
		}
	}
}

// relist lists the server's tools again and registers them; false when the connection is no
// longer the server's current one. The listing ends as soon as the connection is lost or closed
// (dead): a hung HTTP server's lost connection (its ping timed out) does not end its pending
// requests, and watch marks it failed only once relist returns.
func (r *Registry) relist(run context.Context, dead <-chan struct{}, e *entry, gen uint64,
	c *conn) bool {
	ctx, cancel := context.WithTimeout(run, c.cfg.StartupTimeout)
	go func() { // only while the listing runs
		select {
		case <-dead:
		case <-c.closed:
		case <-ctx.Done():
		}
		cancel()
	}()
	tools, err := c.listTools(ctx)
	cancel()
	select {
	case <-dead:
		return true // watch marks it failed; the failed listing says nothing more
	default:
	}
	r.mu.Lock()
	if e.gen != gen {
		r.mu.Unlock()
		return false
	}
	e.relists++
	if err != nil {
		r.mu.Unlock()
		r.log.Warn("mcp tools re-list failed; keeping the previous list", "server", c.cfg.Name, "err", err)
		return true
	}
	next := pinTools(c.cfg, filterTools(c.cfg, tools))
	if slices.EqualFunc(e.tools, next, sameTool) { // a list_changed that changed nothing
		r.mu.Unlock()
		return true
	}
	e.tools = next
	r.rebuildLocked()
	r.mu.Unlock()
	r.log.Info("mcp tools changed", "server", c.cfg.Name, "tools", len(tools))
	r.changed()
	return true
}

func sameTool(a, b wireTool) bool {
	return a.Name == b.Name && a.hash == b.hash // the hash covers everything the model and the person see
}
