package mcpbridge

import (
	"context"
	"slices"
	"time"
)

// watchTools re-lists one server's tools after notifications/tools/list_changed. The
// notification handler only signals c.changed (it runs on the transport's read goroutine, where
// calling the server would deadlock); this goroutine waits for a quiet period of r.debounce,
// folds every signal that arrived meanwhile into one tools/list, and re-registers only this
// server's tools. A storm of notifications costs at most one re-list per debounce period.
func (r *Registry) watchTools(run context.Context, e *entry, gen uint64, c *conn) {
	for {
		select {
		case <-c.changed:
		case <-c.closed:
			return
		case <-run.Done():
			return
		}
		t := time.NewTimer(r.debounce)
		select {
		case <-t.C:
		case <-c.closed:
			t.Stop()
			return
		case <-run.Done():
			t.Stop()
			return
		}
		select { // signals during the quiet period are covered by this re-list
		case <-c.changed:
		default:
		}
		ctx, cancel := context.WithTimeout(run, c.cfg.StartupTimeout)
		tools, err := c.listTools(ctx)
		cancel()
		r.mu.Lock()
		if e.gen != gen {
			r.mu.Unlock()
			return
		}
		e.relists++
		if err != nil {
			r.mu.Unlock()
			r.log.Warn("mcp tools re-list failed; keeping the previous list", "server", c.cfg.Name, "err", err)
			continue
		}
		next := pinTools(c.cfg, filterTools(c.cfg, tools))
		if slices.EqualFunc(e.tools, next, sameTool) { // a list_changed that changed nothing
			r.mu.Unlock()
			continue
		}
		e.tools = next
		r.rebuildLocked()
		r.mu.Unlock()
		r.log.Info("mcp tools changed", "server", c.cfg.Name, "tools", len(tools))
		r.changed()
	}
}

func sameTool(a, b wireTool) bool {
	return a.Name == b.Name && a.hash == b.hash // the hash covers everything the model and the person see
}
