package main

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pacedClock is a gcPace's clock, target and timer under a test's control.
type pacedClock struct {
	mu      sync.Mutex
	t       time.Time
	targets []int           // every target set, in order
	timers  []time.Duration // every check armed, in order
	pending func()          // the check armed last, not yet run
}

func newPaced() (*gcPace, *pacedClock) {
	c := &pacedClock{t: time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)}
	p := &gcPace{
		set: func(n int) int {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.targets = append(c.targets, n)
			return 0
		},
		now: func() time.Time {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.t
		},
		after: func(d time.Duration, f func()) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.timers = append(c.timers, d)
			c.pending = f
		},
	}
	return p, c
}

func (c *pacedClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fire runs the armed check, as its timer would.
func (c *pacedClock) fire(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	f := c.pending
	c.pending = nil
	c.mu.Unlock()
	if f == nil {
		t.Fatal("no check is armed")
	}
	f()
}

func (c *pacedClock) state() ([]int, []time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.targets...), append([]time.Duration(nil), c.timers...)
}

// Collections far apart leave the idle target; two close together make the host busy (the
// default target) until it has gone quietAfter without one, however the quiet is reached.
func TestGCPaceBusyAndIdle(t *testing.T) {
	p, c := newPaced()
	p.start()
	p.cycle()                  // the first collection: nothing to compare it with
	c.advance(3 * time.Second) // an idle host: the runtime's forced collections and the odd call
	p.cycle()
	c.advance(busyGap)
	p.cycle()
	if got, _ := c.state(); !cmp.Equal(got, []int{idleGCPercent}) {
		t.Fatalf("targets after collections %v apart = %v, want only the idle one", busyGap, got)
	}

	c.advance(busyGap / 10) // calls streaming
	p.cycle()
	c.advance(busyGap / 10)
	p.cycle() // busy already: nothing more is set or armed
	got, armed := c.state()
	if want := []int{idleGCPercent, busyGCPercent}; !cmp.Equal(got, want) {
		t.Fatalf("targets once collections come %v apart = %v, want %v", busyGap/10, got, want)
	}
	if want := []time.Duration{quietAfter}; !cmp.Equal(armed, want) {
		t.Fatalf("checks armed = %v, want %v", armed, want)
	}

	// The check finds a collection 4 s before it: still busy, it looks again when that one is
	// quietAfter old.
	c.advance(quietAfter - 4*time.Second)
	p.cycle()
	c.advance(4 * time.Second)
	c.fire(t)
	got, armed = c.state()
	if want := []time.Duration{quietAfter, quietAfter - 4*time.Second}; !cmp.Equal(armed, want) {
		t.Fatalf("checks armed = %v, want %v", armed, want)
	}
	if len(got) != 2 {
		t.Fatalf("targets = %v: the check set one while collections were still recent", got)
	}
	c.advance(quietAfter - 4*time.Second)
	c.fire(t)
	if got, _ = c.state(); !cmp.Equal(got, []int{idleGCPercent, busyGCPercent, idleGCPercent}) {
		t.Fatalf("targets after %v without a collection = %v, want the idle one again", quietAfter, got)
	}

	// Busy again later, the same way.
	c.advance(time.Minute)
	p.cycle()
	c.advance(busyGap / 2)
	p.cycle()
	if got, _ = c.state(); got[len(got)-1] != busyGCPercent {
		t.Fatalf("targets = %v: busy again did not set the default", got)
	}
}

// The real runtime calls cycle after every collection, not only the first: the cleanup that
// follows collections registers itself again each time.
func TestGCPaceFollowsCollections(t *testing.T) {
	cycles := make(chan struct{}, 100)
	var mu sync.Mutex
	var targets []int
	clock := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	p := &gcPace{
		set: func(n int) int {
			mu.Lock()
			defer mu.Unlock()
			targets = append(targets, n)
			return 0
		},
		now: func() time.Time {
			select {
			case cycles <- struct{}{}:
			default:
			}
			mu.Lock()
			defer mu.Unlock()
			clock = clock.Add(time.Millisecond) // collections a millisecond apart, however slow the machine
			return clock
		},
		after: func(time.Duration, func()) {}, // the test's process stays "busy": nothing is set back
	}
	p.start()
	deadline := time.After(30 * time.Second)
	for i := range 3 {
		runtime.GC()
		select {
		case <-cycles:
		case <-deadline:
			t.Fatalf("collection %d: the pace never saw it", i+1)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// Three collections, seen a (fake) millisecond apart: idle, then busy.
	if want := []int{idleGCPercent, busyGCPercent}; !cmp.Equal(targets, want) {
		t.Errorf("targets after three collections in a row = %v, want %v", targets, want)
	}
}
