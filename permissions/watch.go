package permissions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch reloads the list whenever its file changes (another editor window, `switchboard allow
// set`, a text editor) and then calls onChange (if not nil) when the entries or the file's error
// changed. It watches the parent folder, not the file: an atomic rename replaces the file's inode
// and a watch on the file itself would be lost after the first replace. Events are filtered by the
// file's base name and debounced (100 ms). Watch returns nil when ctx ends, or an error when the
// watch cannot be set up. The folder is created (0700) if missing.
func (a *Allowlist) Watch(ctx context.Context, onChange func()) error {
	return a.watch(ctx, onChange, nil)
}

func (a *Allowlist) watch(ctx context.Context, onChange func(), ready func()) error {
	return watchFile(ctx, a.path, "allowlist", a.debounce, func() {
		before := a.state()
		a.Reload()
		if onChange != nil && changed(before, a.state()) {
			onChange()
		}
	}, ready)
}

// watchFile calls reload once at once (a change between the file's first read and the watch would
// otherwise go unnoticed), then ready, then whenever the file at path changes, debounced by delay,
// until ctx ends. It watches the parent folder, not the file (an atomic rename replaces the
// file's inode), created 0700 if missing; what names the file in errors. An empty path: nothing
// to watch, it only waits for ctx.
func watchFile(ctx context.Context, path, what string, delay time.Duration, reload, ready func()) error {
	if path == "" {
		if ready != nil {
			ready()
		}
		<-ctx.Done()
		return nil
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("watch %s: %w", what, err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", what, err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("watch %s folder %s: %w", what, dir, err)
	}
	names := make(chan string)
	go func() {
		defer close(names)
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				select {
				case names <- filepath.Base(ev.Name):
				case <-ctx.Done():
					return
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				if errors.Is(err, fsnotify.ErrEventOverflow) {
					// Events were lost: reload to be safe.
					select {
					case names <- base:
					case <-ctx.Done():
						return
					}
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	reload()
	if ready != nil {
		ready()
	}
	debounceLoop(ctx, names, base, delay, reload)
	return nil
}

// debounceLoop calls fire once names has been quiet for delay after an event for base. It returns
// when ctx ends or names is closed. It is separate from fsnotify so tests can drive it under
// testing/synctest.
func debounceLoop(ctx context.Context, names <-chan string, base string, delay time.Duration, fire func()) {
	t := time.NewTimer(delay)
	t.Stop()
	for {
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case n, ok := <-names:
			if !ok {
				t.Stop()
				return
			}
			if n == base {
				t.Reset(delay)
			}
		case <-t.C:
			fire()
		}
	}
}

func changed(a, b *alState) bool {
	if (a.err == nil) != (b.err == nil) || (a.err != nil && a.err.Error() != b.err.Error()) {
		return true
	}
	return !bytes.Equal(formatAllowlist(a.lines), formatAllowlist(b.lines))
}
