//go:build unix

package broker

import (
	"strings"
	"testing"
	"time"
)

// TestWindowsCountKept: a window's count of the windows sharing its instance follows the others
// as they attach and leave ("shared (2 windows)" in the first window once a second attached,
// "1 window" again once it left); a window of an older build, which did not ask, gets no frame of
// it.
func TestWindowsCountKept(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	req := request(launch())
	a := attachWin(t, "A", cfg, req)
	changed := make(chan struct{}, 16)
	a.c.OnWindows(func() { changed <- struct{}{} })
	told := func(what string) { // (30 s: a hang, not a timing)
		t.Helper()
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			t.Fatalf("A was not told the count changed when %s", what)
		}
	}
	if n := a.c.Windows(); n != 1 {
		t.Fatalf("A alone counts %d windows", n)
	}
	b := attachWin(t, "B", cfg, req)
	if n := b.c.Windows(); n != 2 {
		t.Errorf("B attached as window %d, want 2", n)
	}
	told("B attached")
	if n := a.c.Windows(); n != 2 {
		t.Errorf("A counts %d windows after B attached, want 2", n)
	}

	offerWindows = false
	old := attachWin(t, "old", cfg, req)
	offerWindows = true
	told("an older window attached")
	if n := a.c.Windows(); n != 3 {
		t.Errorf("A counts %d windows after an older window attached, want 3", n)
	}
	b.c.Close()
	told("B left")
	if n := a.c.Windows(); n != 2 {
		t.Errorf("A counts %d windows after B left, want 2", n)
	}
	// The older window heard nothing it did not ask for (its Conn passes such a frame on).
	for _, f := range old.sync() {
		if strings.HasPrefix(f.Method, "switchboard/") {
			t.Errorf("a window that did not ask for the count got %s", f.raw)
		}
	}
	if n := old.c.Windows(); n != 3 {
		t.Errorf("the older window counts %d, want 3 (as when it attached)", n)
	}
}
