package host

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// configSettle is how long the configuration watch waits after a change before re-reading: an
// editor's save is often several writes (truncate, write, rename).
const configSettle = 150 * time.Millisecond

// configFiles are the MCP configuration files read with the current settings and folders (PROTOCOL.md
// section 2), whether they exist yet or not.
func (a *App) configFiles() []string {
	user := a.opts.UserConfigFile
	if user == "" {
		user = config.DefaultUserFile(a.lookupEnv)
	}
	files := []string{user}
	for _, f := range a.Folders() {
		for _, rel := range []string{".vscode/mcp.json", ".mcp.json", ".switchboard/mcp.json"} {
			files = append(files, filepath.Join(f, filepath.FromSlash(rel)))
		}
	}
	for _, f := range a.currentSettings().ConfigFiles {
		if abs, err := filepath.Abs(f); err == nil {
			files = append(files, abs)
		}
	}
	return files
}

// armConfigWatch watches the MCP configuration files: it sets the watches up and returns what
// follows them until the host closes (nil when no watch could be made), which re-reads the
// configuration when a file is created, changed or removed, as the allowlist is watched; Reapply
// then restarts only the servers whose entry changed, starts new ones and stops removed ones. It
// watches folders (a file replaced by rename keeps its watch), and the parents of folders not
// there yet (.vscode created later). connectServers arms it before it reads the configuration, so
// that an edit made while the first servers start is seen, and follows it after. follow closes
// the watch when it returns; stop closes one that is never followed.
func (a *App) armConfigWatch() (follow func(), stop func()) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		a.log.Warn(fmt.Sprintf("host: watching MCP configuration files: %v (edits apply on Reconnect)", err))
		return nil, nil
	}
	watched := map[string]bool{}
	files := map[string]bool{}
	refresh := func() {
		want := map[string]bool{}
		files = map[string]bool{}
		for _, f := range a.configFiles() {
			files[filepath.Clean(f)] = true
			dir := filepath.Dir(f)
			for dir != filepath.Dir(dir) {
				if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
					want[dir] = true
					break
				}
				dir = filepath.Dir(dir) // not there yet: watch the nearest folder that is
			}
		}
		for d := range watched {
			if !want[d] {
				w.Remove(d) // ignore error: it may be gone
				delete(watched, d)
			}
		}
		for d := range want {
			if !watched[d] && w.Add(d) == nil {
				watched[d] = true
			}
		}
	}
	refresh()
	return func() { defer w.Close(); a.followConfig(w, refresh, func() map[string]bool { return files }) },
		func() { w.Close() } // ignore error: nothing was read from it
}

// followConfig is armConfigWatch's loop: w's events for the configuration files, settled, reapply.
func (a *App) followConfig(w *fsnotify.Watcher, refresh func(), files func() map[string]bool) {
	var settle <-chan time.Time
	for {
		select {
		case <-a.baseCtx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			name := filepath.Clean(ev.Name)
			if files()[name] {
				settle = time.After(configSettle)
			} else if fi, err := os.Stat(name); err == nil && fi.IsDir() {
				refresh() // a folder on the way to a configuration file appeared
				for f := range files() {
					if _, err := os.Stat(f); err == nil && filepath.Dir(f) == name {
						settle = time.After(configSettle)
					}
				}
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			a.log.Debug("host: configuration watch", "error", err)
			settle = time.After(configSettle)
		case <-settle:
			settle = nil
			a.reapply()
			refresh() // the folders or settings may have changed meanwhile
		}
	}
}
