package main

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// The settled host's GC targets: tight while it idles, the runtime's default while it is busy.
const (
	idleGCPercent = 50
	busyGCPercent = 100
	// busyGap: collections closer together than this mean the host is busy (a stream of tool
	// calls); quietAfter: busy, and no collection for this long, means it is idle again.
	busyGap    = time.Second
	quietAfter = 10 * time.Second
)

// gcPace keeps the settled host's GC target tight (idleGCPercent) while it idles, for the
// smallest resident memory over hours, and at the runtime's default (busyGCPercent) while
// collections come close together, that is while tool calls stream through it.
//
// With a few MB of live heap the tight target's goal is about 2 MB, so under 8 callers a
// collection fell every hundred or so calls, and collecting was about a tenth of the host's CPU
// per call (cmd/sbbench, the 8-caller rows: GOGC=100 took 7% off the host's CPU per call and
// added 4% to the throughput in the same run; 400 did no better than 100). The pace follows the
// collections themselves (a cleanup that runs after each cycle, as Uber's and TiDB's GC tuners
// do), so nothing is added to a call's path and an idle host wakes for nothing: the runtime's
// own forced collection, every two minutes, is the first to see the tight goal again.
type gcPace struct {
	set   func(percent int) int           // debug.SetGCPercent
	now   func() time.Time                // time.Now
	after func(d time.Duration, f func()) // time.AfterFunc

	mu   sync.Mutex
	last time.Time // the last collection seen (zero: none yet)
	busy bool
}

func newGCPace() *gcPace {
	return &gcPace{
		set:   debug.SetGCPercent,
		now:   time.Now,
		after: func(d time.Duration, f func()) { time.AfterFunc(d, f) },
	}
}

// start sets the idle target and begins following collections.
func (p *gcPace) start() {
	p.set(idleGCPercent)
	p.watch()
}

// watch has cycle called once after the next collection, and again after each one after it.
func (p *gcPace) watch() {
	// An object of its own that nothing keeps: it is unreachable from the moment watch returns,
	// so the next collection frees it and queues the cleanup. 16 bytes or more, so that the
	// tiny allocator cannot put it in a block that something else keeps alive.
	s := new([2]uintptr)
	runtime.AddCleanup(s, func(p *gcPace) {
		p.watch() // first: a collection that starts while cycle runs must find the next one
		p.cycle()
	}, p)
}

// cycle is called after each collection.
func (p *gcPace) cycle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	near := !p.last.IsZero() && now.Sub(p.last) < busyGap
	p.last = now
	if near && !p.busy {
		p.busy = true
		p.set(busyGCPercent)
		p.after(quietAfter, p.checkQuiet)
	}
}

// checkQuiet runs while busy: after quietAfter without a collection the host is idle again.
func (p *gcPace) checkQuiet() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.busy {
		return
	}
	if since := p.now().Sub(p.last); since < quietAfter {
		p.after(quietAfter-since, p.checkQuiet)
		return
	}
	p.busy = false
	p.set(idleGCPercent)
}
