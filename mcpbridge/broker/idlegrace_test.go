//go:build unix

package broker

import (
	"context"
	"testing"
	"time"
)

// TestIdleNoneWaitsForItsFirstWindow: a daemon told to linger for no time after its last window
// (daemonIdleSeconds 0) still waits for the window that started it, whatever else connects
// first: `switchboard daemon status` (or a window watching for a restart) asking in between
// is no window, and leaving does not end the grace. It ended it: the daemon exited at once, and
// the window that had started it, dialling next, found none and ran the server by itself.
func TestIdleNoneWaitsForItsFirstWindow(t *testing.T) {
	dir, done := serveInProcess(t, -1)
	cfg := Config{Dir: dir, Build: "test"}
	var pid int
	// Many in a row: a daemon that took the first for its window exits as it leaves, and one of
	// the next finds it gone.
	for i := range 20 {
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		st, err := GetStatus(sctx, cfg)
		scancel()
		if err != nil {
			t.Fatalf("status %d before the first window: %v (the daemon exited)", i+1, err)
		}
		if pid == 0 {
			pid = st.Pid
		} else if st.Pid != pid {
			t.Fatalf("status %d: daemon pid %d, was %d", i+1, st.Pid, pid)
		}
	}
	select {
	case <-done:
		t.Fatal("the daemon exited before its first window came")
	default:
	}
}
