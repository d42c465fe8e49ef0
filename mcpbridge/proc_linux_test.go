package mcpbridge

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// osThreads is this process's thread count (/proc/self/status).
func osThreads(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line in /proc/self/status")
	return 0
}

// Waiting for a stdio server's exit holds no OS thread: 16 running servers did hold 16 threads
// blocked in wait4 (each with its stacks), now their exits are awaited in the runtime's poller.
// A server that exits is still seen at once (the faults tests).
func TestServersHoldNoWaitThreads(t *testing.T) {
	r := newTestRegistry(t, Options{})
	before := osThreads(t)
	const n = 16
	var cfgs []config.ServerConfig
	for i := range n {
		cfgs = append(cfgs, stdioCfg(fmt.Sprintf("s%02d", i)))
	}
	applyAndWait(t, r, cfgs...)
	grown := osThreads(t) - before
	t.Logf("%d running servers: %d more OS threads", n, grown)
	if grown >= n {
		t.Errorf("%d running servers: %d more OS threads; want their exits awaited without a thread each", n, grown)
	}
}

// A server that exits while its wait is being set up is still seen. The wait begins by clearing
// what the runtime's poller has recorded for the pidfd, so an exit the poller took in before that
// was lost, and Close (which waits for the exit) hung for good: a host shut down right after it
// started 30 servers never answered shutdown (make bench, TestBenchRatios).
func TestAwaitExitSeesAnExitThePollerTookFirst(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait() // ignore error: reaped at the end
	// Wait for the exit without reaping it: the pidfds below must still name the process.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	f := openPidfd(cmd.Process)
	if f == nil {
		t.Skip("no pidfd on this kernel")
	}
	defer f.Close()
	// Make the poller take f's readiness in before f's wait begins: a second pidfd of the same
	// process, registered after f, is reported no earlier than f (epoll's ready list keeps its
	// order), so once the poller has reported it, it has reported f. Its own wait ends either
	// when the poller reports it or, when that report came before the wait began (the very loss
	// under test, and often the case here: g is ready when registered), at its deadline: both
	// after the poller took f in.
	g := openPidfd(cmd.Process)
	defer g.Close()
	if err := g.SetReadDeadline(time.Now().Add(time.Second)); err != nil {
		t.Skipf("the poller cannot take a pidfd here: %v", err)
	}
	rc, err := g.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	first := true
	_ = rc.Read(func(uintptr) bool { // ignore error: a deadline is as good (above)
		defer func() { first = false }()
		return !first
	})

	done := make(chan struct{})
	go func() { waitPidfd(f); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("waitPidfd did not return for a process that had exited before its wait began")
	}
}
