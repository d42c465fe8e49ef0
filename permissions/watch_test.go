package permissions

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// advance moves the bubble's fake clock (time inside synctest is virtual).
func advance(d time.Duration) { <-time.After(d); synctest.Wait() }

func TestDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		names := make(chan string)
		var fired atomic.Int32
		done := make(chan struct{})
		go func() {
			debounceLoop(ctx, names, "allow_tool", 100*time.Millisecond, func() { fired.Add(1) })
			close(done)
		}()
		// A burst of events (renameio's temp file, the rename, a chmod) fires once, 100 ms after
		// the last event for our file; other names do not count.
		names <- ".allow_tool12345"
		names <- "allow_tool"
		advance(60 * time.Millisecond)
		names <- "allow_tool"
		advance(60 * time.Millisecond)
		names <- "allow_tool.lock"
		if fired.Load() != 0 {
			t.Fatalf("fired %d times during the burst", fired.Load())
		}
		advance(40 * time.Millisecond)
		if fired.Load() != 1 {
			t.Fatalf("fired %d times after the burst, want 1", fired.Load())
		}
		advance(time.Second)
		names <- "other"
		advance(time.Second)
		if fired.Load() != 1 {
			t.Fatalf("fired %d times, want 1", fired.Load())
		}
		names <- "allow_tool"
		advance(100 * time.Millisecond)
		if fired.Load() != 2 {
			t.Fatalf("fired %d times, want 2", fired.Load())
		}
		cancel()
		<-done
	})
}
