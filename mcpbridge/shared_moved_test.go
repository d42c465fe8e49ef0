//go:build unix

package mcpbridge

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// TestSharedDaemonMovesOnEachTime: a daemon that ends in good order (SIGTERM, a restart's
// hand-over) is no fault, so a window that moved with it before waits no longer the next time:
// the waits between attempts (reattachDelays) are for a daemon that went away without a word.
// Here the first wait is none and the second an hour: a window that counted each orderly move as
// a failed attempt showed the server starting, its calls failing, for the second wait.
func TestSharedDaemonMovesOnEachTime(t *testing.T) {
	saved := reattachDelays
	reattachDelays = []time.Duration{0, time.Hour}
	t.Cleanup(func() { reattachDelays = saved })
	r, changed, old := sharedInItsDaemon(t)
	for move := range 3 {
		if err := syscall.Kill(old, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// Far below the hour of a counted attempt; a failure, not a measure.
		deadline := time.NewTimer(60 * time.Second)
		for {
			st := statusMap(r)["s"]
			if st.State == StateReady && st.Shared != nil && st.Shared.DaemonPid != old {
				old = st.Shared.DaemonPid
				break
			}
			select {
			case <-changed:
			case <-deadline.C:
				t.Fatalf("move %d: after the daemon ended in good order: %+v, want ready under a new daemon", move+1, st)
			}
		}
		deadline.Stop()
	}
}

// TestSharedDaemonMovedThenEnded: a server that shows starting while its window waits to attach
// to a new daemon never stays so when the wait is ended by something else: the server removed
// from the configuration, a Reconnect, the registry closed. Each time WaitIdle returns, and the
// status is what the ending makes it (gone, ready, stopped). The wait here is an hour.
func TestSharedDaemonMovedThenEnded(t *testing.T) {
	saved := reattachDelays
	reattachDelays = []time.Duration{time.Hour}
	t.Cleanup(func() { reattachDelays = saved })
	for _, how := range []string{"removed", "Reconnect", "Close"} {
		t.Run(how, func(t *testing.T) {
			r, changed, old := sharedInItsDaemon(t)
			if err := syscall.Kill(old, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			for statusMap(r)["s"].State != StateStarting {
				<-changed // the test's deadline ends a wait that never ends
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			switch how {
			case "removed":
				r.Apply(ctx, nil)
			case "Reconnect":
				r.Reconnect(ctx)
			case "Close":
				r.Close()
			}
			if err := r.WaitIdle(ctx); err != nil {
				t.Fatalf("WaitIdle after the server was %s while moving: %v (%+v)", how, err, statusMap(r)["s"])
			}
			st, ok := statusMap(r)["s"]
			switch how {
			case "removed":
				if ok {
					t.Errorf("removed while moving: still listed %+v", st)
				}
			case "Reconnect":
				if st.State != StateReady || st.Shared == nil || st.Shared.DaemonPid == old {
					t.Errorf("Reconnect while moving: %+v, want ready under a new daemon", st)
				}
			case "Close":
				if st.State == StateStarting {
					t.Errorf("closed while moving: %+v, want not starting", st)
				}
			}
		})
	}
}

// sharedInItsDaemon is a registry with the shared server "s" ready in a daemon of its own, which
// the registry started as a process of this test binary (as a window starts `switchboard
// daemon`); changed says the registry's statuses changed; old is the daemon's pid.
func sharedInItsDaemon(t *testing.T) (r *Registry, changed <-chan struct{}, old int) {
	t.Helper()
	cfg := stdioCfg("s")
	cfg.Shared = config.SharedUser
	ch := make(chan struct{}, 1)
	r = newTestRegistry(t, Options{Broker: startedDaemon(t), OnChange: func([]ServerStatus) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}})
	st := applyAndWait(t, r, cfg)["s"]
	if st.State != StateReady || st.Shared == nil {
		t.Fatalf("shared server: %+v, want ready and shared", st)
	}
	return r, ch, st.Shared.DaemonPid
}

// startedDaemon is the broker configuration of a socket directory of its own, whose daemon the
// first window starts as a process of this test binary (and starts again when it is gone),
// stopped when the test ends.
func startedDaemon(t *testing.T) *broker.Config {
	t.Helper()
	dir, err := os.MkdirTemp("", "sbm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return daemonStarter(t, dir+"/d")
}

// daemonStarter is the broker configuration of socket directory dir, whose daemon a window
// starts, when none answers, as a process of this test binary; stopped when the test ends.
func daemonStarter(t *testing.T, dir string) *broker.Config {
	t.Cleanup(func() { broker.Stop(context.Background(), broker.Config{Dir: dir}) })
	return &broker.Config{Dir: dir, Build: "test", Start: func(string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = []string{brokerDirVar + "=" + dir}
		return cmd
	}}
}
