package lsp_test

import (
	"runtime/metrics"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/lsp"
)

// forcedGCs is how many collections this process was made to run (debug.FreeOSMemory, runtime.GC).
func forcedGCs() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// The host returns its start-up memory with one forced collection, which stops the world for
// 0.5–1 ms: never while a server is starting (the first call waits for that start), only once
// the start is over and a second more has passed. It used to run the moment the host started,
// before the servers were even applied, in the middle of the first call's path.
func TestStartMemoryReleasedAfterStart(t *testing.T) {
	before := forcedGCs()
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(map[string]any{"slow": server("--startup-delay", "300ms")}, "mode", "always-allow")})
	// The first calls, made the moment the server is up, as an agent or a keybinding does.
	env.AwaitServer("slow", "ready")
	for i := range 20 {
		if res := call(env, "mcp__slow__echo", map[string]string{"text": "first"}); res.IsError {
			t.Fatalf("call %d = %+v", i, res)
		}
	}
	if n := forcedGCs() - before; n != 0 {
		t.Fatalf("%d forced collection(s) during the server's start and the first calls; want none", n)
	}
	awaitForcedGC(t, before) // then it does happen
}

// awaitForcedGC waits until a collection is forced after before of them (polled: nothing on the
// wire says so).
func awaitForcedGC(t *testing.T, before uint64) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	give := time.After(30 * time.Second)
	for forcedGCs() == before {
		select {
		case <-tick.C:
		case <-give:
			t.Fatal("the start-up memory was never returned (no forced collection within 30 s)")
		}
	}
}

// A tool call in flight (a large result being decoded, say) holds the release back: the forced
// collection waits for a moment when no call runs.
func TestStartMemoryWaitsForCallsInFlight(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(map[string]any{"s": server()}, "mode", "always-allow")})
	env.AwaitServer("s", "ready")
	before := forcedGCs()
	// 2.5 s: longer than the release's delay after the start, with a margin for a slow machine.
	if res := call(env, "mcp__s__slow", map[string]any{"seconds": 2.5}); res.IsError {
		t.Fatalf("slow = %+v", res)
	}
	if n := forcedGCs() - before; n != 0 {
		t.Fatalf("%d forced collection(s) while a call was in flight; want none", n)
	}
	awaitForcedGC(t, before) // after the call
}

// The front end is told once the start is over (host.Options.Settled, where cmd/switchboard serve
// drops to one P): after the start-up memory was returned, never during the start and the first
// calls.
func TestSettledAfterStart(t *testing.T) {
	settled := make(chan uint64, 1)
	before := forcedGCs()
	env := hosttest.Run(t, hosttest.Config{
		InitOptions: initOpts(map[string]any{"slow": server("--startup-delay", "300ms")}, "mode", "always-allow"),
		Options:     func(o *lsp.Options) { o.Settled = func() { settled <- forcedGCs() } },
	})
	env.AwaitServer("slow", "ready")
	for i := range 20 {
		if res := call(env, "mcp__slow__echo", map[string]string{"text": "first"}); res.IsError {
			t.Fatalf("call %d = %+v", i, res)
		}
	}
	select {
	case <-settled:
		t.Fatal("Settled was called during the server's start or the first calls")
	default:
	}
	select {
	case n := <-settled:
		if n == before {
			t.Error("Settled was called before the start-up memory was returned")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Settled was never called (30 s)")
	}
}
