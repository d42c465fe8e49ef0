package stdio

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
)

// childWith finds a child of this process whose command line holds marker (0: none yet).
func childWith(marker string) int {
	ents, _ := os.ReadDir("/proc") // ignore error: none found
	me := strconv.Itoa(os.Getpid())
	for _, d := range ents {
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 || f[1] != me {
			continue
		}
		cl, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline") // ignore error: gone
		if strings.Contains(string(cl), marker) {
			pid, _ := strconv.Atoi(d.Name())
			return pid
		}
	}
	return 0
}

// A sandboxed server's launcher that never says whether it started the server (it hangs before
// its first word): the start waited for its word with nothing to end the wait, under the lock
// that Close takes first, so the registry's close, and the host, waited for good.
func TestStartEndsWhenTheLauncherNeverAnswers(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	arg := fmt.Sprintf("%d.%d", 3000+os.Getpid()%500, time.Now().Nanosecond()%1000) // finds it among our children
	tr := NewTransport(sleep, []string{arg}, os.Environ(), "", 1<<20, slog.New(slog.DiscardHandler))
	// The launcher is sleep: it runs, holds the status socket it was given, and says nothing.
	home := t.TempDir()
	tr.Sandbox = &Sandbox{Profile: sandbox.Profile{}, Options: sandbox.Options{Launcher: sleep},
		Env: sandbox.Env{Home: home, StateDir: home + "/state"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan error, 1)
	go func() { started <- tr.Start(ctx) }()

	hang := time.After(time.Minute) // a hang guard, not a timing assertion
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	pid := 0
	for pid == 0 {
		select {
		case err := <-started:
			t.Skipf("the sandboxed start did not get as far as the launcher here: %v", err)
		case <-tick.C:
			pid = childWith(arg)
		case <-hang:
			t.Fatal("the launcher did not start")
		}
	}
	defer func() {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill() // ignore error: gone, as it should be
		}
	}()
	cancel() // the server's start is given up (its window closes)
	select {
	case <-started:
	case <-hang:
		t.Fatal("Start did not return after its context ended: it waits for the launcher's word for good")
	}
	closed := make(chan struct{})
	go func() { tr.Close(); close(closed) }()
	select {
	case <-closed:
	case <-hang:
		t.Fatal("Close did not return")
	}
	if childWith(arg) != 0 {
		t.Errorf("the launcher (pid %d) is still running after Close", pid)
	}
}
