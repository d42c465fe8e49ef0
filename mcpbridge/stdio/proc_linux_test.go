package stdio

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
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

// Servers that end together share walks of /proc: a host closing 30 servers walked it 60 times
// (each server's exit and its Close). The first walk is held until the other requests are made;
// they are then served together by one walk that began after them, and every marked process is
// killed.
func TestKillOwnedSharesWalks(t *testing.T) {
	const n = 6
	tags := make([]string, n)
	pids := make([]int, n)
	for i := range n {
		tags[i] = fmt.Sprintf("%d.%d.%d", os.Getpid(), 1, 9000+i) // no live host has this start
		cmd := exec.Command("sleep", "300")
		cmd.Env = []string{ownerVar + "=" + tags[i]}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		reaped := make(chan struct{})
		go func() { cmd.Wait(); close(reaped) }() // reap once killed, so procGone sees it gone
		t.Cleanup(func() { cmd.Process.Kill(); <-reaped })
		pids[i] = cmd.Process.Pid
	}
	begun, release := make(chan struct{}), make(chan struct{})
	var walked [][]string
	owners.mu.Lock()
	walks0 := owners.walks
	owners.before = func(tags []string) {
		walked = append(walked, tags)
		if len(walked) == 1 {
			close(begun)
			<-release
		}
	}
	owners.mu.Unlock()
	t.Cleanup(func() {
		owners.mu.Lock()
		owners.before = nil
		owners.mu.Unlock()
	})

	first := make(chan struct{})
	go func() { killOwned(tags[0]); close(first) }()
	// Once the first walk has begun (and is held), the others ask.
	<-begun
	var others sync.WaitGroup
	for _, tag := range tags[1:] {
		others.Go(func() { killOwned(tag) })
	}
	for {
		owners.mu.Lock()
		queued := len(owners.waiting)
		owners.mu.Unlock()
		if queued == n-1 {
			break
		}
		runtime.Gosched()
	}
	close(release)
	<-first
	others.Wait()

	owners.mu.Lock()
	walks := owners.walks - walks0
	owners.mu.Unlock()
	want := [][]string{{tags[0]}, slices.Sorted(slices.Values(tags[1:]))}
	if walks != 2 || !slices.EqualFunc(walked, want, slices.Equal) {
		t.Errorf("walks %d of %q, want 2: %q", walks, walked, want)
	}
	waitGone(t, "the marked processes", pids...)
}

// BenchmarkServersEnd: 30 servers ending at once (a host's shutdown) look for what each left
// behind: each walking /proc on its own (as before), or sharing walks (killOwned).
func BenchmarkServersEnd(b *testing.B) {
	const servers = 30
	tag := func(i int) string { return fmt.Sprintf("%d.1.%d", os.Getpid(), 8000+i) }
	b.Run("each-alone", func(b *testing.B) {
		for b.Loop() {
			var wg sync.WaitGroup
			for i := range servers {
				wg.Go(func() { killMarked(func(t string) bool { return t == tag(i) }) })
			}
			wg.Wait()
		}
	})
	b.Run("shared", func(b *testing.B) {
		for b.Loop() {
			var wg sync.WaitGroup
			for i := range servers {
				wg.Go(func() { killOwned(tag(i)) })
			}
			wg.Wait()
		}
	})
}
