//go:build linux

package stdio

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SweepOrphans ends processes marked by a host that is gone (or whose pid now belongs to another
// process), and never those of a running host. Linux only: elsewhere there is no /proc to sweep
// from and SweepOrphans does nothing.
func TestSweepOrphans(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	deadPid, deadStart := dead.Process.Pid, procStartTime(dead.Process.Pid)
	dead.Wait()
	live := os.Getppid() // the go command: a running "host"
	liveStart := procStartTime(live)
	start := func(tag string) int {
		cmd := exec.Command("sleep", "300")
		cmd.Env = []string{ownerVar + "=" + tag}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		reaped := make(chan struct{})
		go func() { cmd.Wait(); close(reaped) }() // reap once killed, so procGone sees it gone
		t.Cleanup(func() { cmd.Process.Kill(); <-reaped })
		return cmd.Process.Pid
	}
	orphan := start(fmt.Sprintf("%d.%d.1", deadPid, deadStart))
	reused := start(fmt.Sprintf("%d.%d.1", live, liveStart+1))
	kept := start(fmt.Sprintf("%d.%d.1", live, liveStart))
	unknown := start(fmt.Sprintf("%d.0.1", deadPid))
	if n := SweepOrphans(); n < 2 {
		t.Errorf("SweepOrphans killed %d processes, want at least 2", n)
	}
	waitGone(t, "orphans of a dead host", orphan, reused)
	if procGone(kept) || procGone(unknown) {
		t.Errorf("a running host's server (gone %v) or an unverifiable one (gone %v) was killed", procGone(kept), procGone(unknown))
	}
}

// procGone and waitGone are copies of mcpbridge's fault-test helpers.

// procGone reports whether pid no longer runs (gone or a zombie waiting for init).
func procGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) != nil
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// waitGone waits (bounded; polling, not sleeping to synchronise) until every pid is gone.
func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var alive []int
		for _, p := range pids {
			if !procGone(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range alive {
				syscall.Kill(p, syscall.SIGKILL) // ignore error: clean up what the test started
			}
			t.Fatalf("%s: still running: %v", what, alive)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, bounded by the deadline
	}
}
