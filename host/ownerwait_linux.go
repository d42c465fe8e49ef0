package host

import (
	"context"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// awaitProcessExit returns once the process pid has exited, or ctx is done. It waits in the
// runtime's poller on a pidfd (no thread held, nothing woken while the other process lives);
// where a pidfd cannot be opened (PIDFD_NONBLOCK: Linux before 5.10) it looks every few seconds.
func awaitProcessExit(ctx context.Context, pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.ESRCH) {
		return // gone already
	}
	if err != nil {
		pollProcessExit(ctx, pid)
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()                                                                // ignore error: our own pidfd
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(aLongTimeAgo) }) // ends the wait
	defer stop()
	rc, err := f.SyscallConn()
	if err != nil {
		pollProcessExit(ctx, pid)
		return
	}
	// The callback looks at the pidfd itself each time: the poller's record of the file is
	// cleared when the wait begins, so an exit it saw before would otherwise never wake it.
	err = rc.Read(func(fd uintptr) bool {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 0)
		if err == unix.EINTR {
			return false
		}
		return err != nil || n > 0
	})
	if err != nil && ctx.Err() == nil {
		pollProcessExit(ctx, pid) // a pidfd the poller does not take
	}
}
