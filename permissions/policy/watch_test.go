//go:build unix

package policy

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestWatchLive: with the watcher running, a new drop-in that denies a server, then a chmod
// that makes the policy untrusted, each reach onChange (the test waits for the event; the
// debounce keeps it well inside the 2 s the design promises). Creating the policy directory
// after the start is seen too.
func TestWatchLive(t *testing.T) {
	ps := rootTree(t, nil)
	os.RemoveAll(ps.Dir) // made later, while watching
	w := NewWatcher(Options{Paths: ps, LookPath: noLookPath})
	if !w.Policy().Empty() {
		t.Fatalf("policy at start: %+v", w.Policy().Sources())
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	changes := make(chan *Policy, 16)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- w.run(ctx, func(p *Policy) { changes <- p }, func() { close(ready) }) }()
	<-ready

	next := func(what string, ok func(*Policy) bool) {
		t.Helper()
		for {
			select {
			case p := <-changes:
				if ok(p) {
					return
				}
			case err := <-done:
				t.Fatalf("watcher stopped before %s: %v", what, err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(ps.Dir, DropInDir), 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(ps.Dir, DropInDir, "50-deny.json")
	writeRoot(t, f, `{"deniedMcpServers": [{"serverName": "everything"}]}`)
	next("the new drop-in", func(p *Policy) bool { return !p.Admit(stdio("everything", "x", "")).Allowed })
	if w.Policy().Admit(stdio("everything", "x", "")).Allowed {
		t.Fatalf("Policy() not updated")
	}
	chmod(t, f, 0o666)
	next("the chmod", func(p *Policy) bool { return p.Broken() != nil })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
