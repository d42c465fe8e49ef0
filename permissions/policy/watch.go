package policy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// debounce gathers a burst of events (an editor's temp file, rename, chmod) into one reload;
// with it a change applies well within the 2 s the design promises.
const debounce = 100 * time.Millisecond

// A Watcher holds the current Policy and reloads it when a policy file changes. Safe for
// concurrent use; Policy is one atomic load.
type Watcher struct {
	opts Options
	cur  atomic.Pointer[Policy]
}

// NewWatcher loads the policy once.
func NewWatcher(opts Options) *Watcher {
	w := &Watcher{opts: opts}
	w.cur.Store(Load(opts))
	return w
}

// Policy is the current policy (never nil).
func (w *Watcher) Policy() *Policy { return w.cur.Load() }

// Reload reads the sources again; it reports whether the policy changed.
func (w *Watcher) Reload() bool {
	p := Load(w.opts)
	old := w.cur.Swap(p)
	return old.Digest() != p.Digest()
}

// Run watches the policy directories (or, for one that does not exist yet, the nearest
// directory above it, so that creating /etc/switchboard is seen), reloads after a change and
// calls onChange with the new policy when its content, owner, mode or errors changed. It
// returns nil when ctx ends, or an error when the watch cannot be set up.
func (w *Watcher) Run(ctx context.Context, onChange func(*Policy)) error {
	return w.run(ctx, onChange, nil)
}

func (w *Watcher) run(ctx context.Context, onChange func(*Policy), ready func()) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("policy: watch: %w", err)
	}
	defer fw.Close()
	watched := map[string]bool{}
	var interesting []string
	arm := func() {
		interesting = w.opts.Paths.watchDirs()
		for _, s := range w.Policy().Sources() {
			if real, err := filepath.EvalSymlinks(s.Path); err == nil {
				interesting = append(interesting, filepath.Dir(real))
			}
		}
		for _, d := range interesting {
			for dir := d; ; dir = filepath.Dir(dir) {
				if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
					if !watched[dir] && fw.Add(dir) == nil {
						watched[dir] = true
					}
					break
				}
				if filepath.Dir(dir) == dir {
					break
				}
			}
		}
	}
	relevant := func(name string) bool {
		for _, d := range interesting {
			if within(name, d) || within(d, name) {
				return true
			}
		}
		return false
	}
	reload := func() {
		arm() // a directory created since may now be watchable
		if w.Reload() && onChange != nil {
			onChange(w.Policy())
		}
	}
	arm()
	reload() // a change between NewWatcher and now would otherwise go unnoticed
	if ready != nil {
		ready()
	}
	t := time.NewTimer(debounce)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			if relevant(ev.Name) {
				t.Reset(debounce)
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				t.Reset(debounce) // events were lost: reload to be safe
			}
		case <-t.C:
			reload()
		}
	}
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
