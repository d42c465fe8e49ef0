package stdio

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

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

// Prewarm, called any number of times before or after a start, leaves the spawner starting
// children with their parent-death signal as before.
func TestPrewarm(t *testing.T) {
	Prewarm()
	Prewarm()
	for range 2 {
		cmd := exec.Command("sh", "-c", "exit 0")
		if err := startChild(cmd); err != nil {
			t.Fatalf("startChild after Prewarm: %v", err)
		}
		if cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
			t.Fatalf("child started without its parent-death signal: %+v", cmd.SysProcAttr)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
		Prewarm()
	}
}
