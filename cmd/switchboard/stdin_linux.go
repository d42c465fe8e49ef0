package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// pollableStdin returns stdin as a file the Go runtime polls when it is a pipe or a socket of its
// own (how editors start `switchboard serve`): the host's framer then reads it on the reading
// goroutine itself with read deadlines, instead of through a second goroutine blocked in read(2)
// that hands every chunk over (one goroutine wake-up per message, cmd/sbbench). restore puts the
// descriptor back as it was, for whoever shares it after the host. Anything else is returned as it
// is, and the framer reads it through its goroutine:
//   - a terminal or a file (a terminal left non-blocking breaks the shell that reads it next);
//   - a stdin that is also stdout or stderr (one socket for both, as socat's EXEC:, inetd and
//     systemd's Accept=yes give): non-blocking mode belongs to the open file, not to fd 0, and the
//     host's stdout is not polled, so a full socket would make its writes fail instead of wait;
//   - a stdin already non-blocking (someone else's mode: left alone), or one the poller refuses.
//
// Linux only: on macOS kqueue reports no end of file for a FIFO (golang/go#24164).
func pollableStdin() (in *os.File, restore func()) {
	keep := func() {}
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil {
		return os.Stdin, keep
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO, syscall.S_IFSOCK:
	default:
		return os.Stdin, keep
	}
	for _, fd := range []int{1, 2} {
		var o syscall.Stat_t
		if syscall.Fstat(fd, &o) == nil && o.Dev == st.Dev && o.Ino == st.Ino {
			return os.Stdin, keep // one open file for both: see above
		}
	}
	if nonblocking(0) {
		return os.Stdin, keep
	}
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin, keep
	}
	blocking := func() { _ = syscall.SetNonblock(0, false) } // ignore error: best effort
	// A descriptor that is non-blocking when wrapped is registered with the runtime's poller.
	in = os.NewFile(0, "/dev/stdin")
	if in.SetReadDeadline(time.Time{}) != nil { // the poller did not take it
		blocking()
		dropped = append(dropped, in) // its finalizer would close fd 0
		return os.Stdin, keep
	}
	return in, func() {
		blocking()
		runtime.KeepAlive(in) // its finalizer closes fd 0: not before this point
	}
}

// dropped keeps the files over fd 0 and 1 that the poller refused: collected, they would close
// the descriptor that os.Stdin (or the host's stdout) still uses.
var dropped []*os.File

// nonblocking reports whether fd's open file is in non-blocking mode.
func nonblocking(fd int) bool {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	return errno == 0 && flags&syscall.O_NONBLOCK != 0
}

// pollableStdout is pollableStdin for stdout, given as the file the host writes (returned as
// it is unless it is fd 1): a pipe or socket of its own (not stdin's or stderr's open file, whose
// other users would meet EAGAIN), blocking now, is made non-blocking and polled, so the host's
// writes wait in the runtime's poller instead of a blocked thread (and can be raw: rawio). restore
// puts fd 1 back in blocking mode.
func pollableStdout(cur *os.File) (out *os.File, restore func()) {
	keep := func() {}
	if fdOf(cur) != 1 {
		return cur, keep
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(1, &st); err != nil {
		return cur, keep
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO, syscall.S_IFSOCK:
	default:
		return cur, keep
	}
	for _, fd := range []int{0, 2} {
		var o syscall.Stat_t
		if syscall.Fstat(fd, &o) == nil && o.Dev == st.Dev && o.Ino == st.Ino {
			return cur, keep // one open file with stdin or stderr: see above
		}
	}
	if nonblocking(1) {
		return cur, keep
	}
	if err := syscall.SetNonblock(1, true); err != nil {
		return cur, keep
	}
	blocking := func() { _ = syscall.SetNonblock(1, false) } // ignore error: best effort
	out = os.NewFile(1, cur.Name())
	if out.SetWriteDeadline(time.Time{}) != nil { // the poller did not take it
		blocking()
		dropped = append(dropped, out) // its finalizer would close fd 1
		return cur, keep
	}
	return out, func() {
		blocking()
		// Both files close fd 1 when collected: neither before this point.
		runtime.KeepAlive(out)
		runtime.KeepAlive(cur)
	}
}

// fdOf is f's descriptor, or -1. Not f.Fd(): on a file Go made non-blocking it puts the
// descriptor back in blocking mode (os.Stdout was never made so, but nothing here depends on it).
func fdOf(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if rc.Control(func(d uintptr) { fd = int(d) }) != nil {
		return -1
	}
	return fd
}
