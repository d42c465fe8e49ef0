//go:build linux

// Package rawio reads and writes non-blocking descriptors that the Go runtime polls (pipes and
// sockets) without entering the scheduler's system-call path for each read(2) and write(2).
//
// A Go system call (syscall.Read under os.File.Read) tells the scheduler it may block: on a
// process that was idle, the first one also wakes the runtime's monitor thread (sysmon), which
// then polls every 20 µs until the process is idle again. A relay like the host wakes for every
// message, so that monitor was about 15% of its CPU and most of its context switches per tool call
// (cmd/sbbench). On a non-blocking descriptor read(2) and write(2) never block (they return EAGAIN,
// and this package then waits in the runtime's poller like os.File does), so they can be raw
// system calls. Deadlines and Close work as for os.File: the waits go through its syscall.RawConn.
package rawio

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// File reads and writes one polled, non-blocking descriptor.
type File struct {
	f  *os.File
	rc syscall.RawConn
}

var noDeadline time.Time

// New wraps f. It reports false when f's descriptor is blocking or not in the runtime's poller
// (a regular file, a terminal, a descriptor made blocking by someone else): a raw read(2) on it
// could block the thread, and the process with it. Non-blocking mode belongs to the open file,
// so f must be one nobody else switches back: a pipe this process made (a server's), or a stdin or
// stdout of the process's own (cmd/switchboard's pollableStdin and pollableStdout check).
func New(f *os.File) (*File, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, false
	}
	if f.SetReadDeadline(noDeadline) != nil && f.SetWriteDeadline(noDeadline) != nil {
		return nil, false // not polled
	}
	ok := false
	if rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		ok = errno == 0 && flags&syscall.O_NONBLOCK != 0
	}) != nil || !ok {
		return nil, false
	}
	return &File{f: f, rc: rc}, true
}

// Read is os.File.Read: io.EOF at the end, os.ErrDeadlineExceeded past the read deadline,
// os.ErrClosed once closed.
func (r *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var (
		n     int
		errno syscall.Errno
	)
	defer acquired()
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case 0:
				n = int(m)
				return true
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait in the poller
			default:
				errno = e
				return true
			}
		}
	})
	switch {
	case err != nil:
		return 0, r.wrap("read", err)
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: r.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write is os.File.Write: it writes all of p unless the write deadline passes, the file is
// closed, or the other end is gone (EPIPE).
func (r *File) Write(p []byte) (int, error) {
	var (
		n     int
		errno syscall.Errno
	)
	if len(p) == 0 {
		return 0, nil
	}
	released()
	err := r.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
			switch e {
			case 0:
				n += int(m)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // the pipe is full: wait in the poller
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, r.wrap("write", err)
	case errno != 0:
		return n, &os.PathError{Op: "write", Path: r.f.Name(), Err: errno}
	}
	return n, nil
}

// wrap gives a wait's error as os.File gives it: os.ErrDeadlineExceeded as it is (the same
// value), a closed file as os.ErrClosed (the poller's own "use of closed file" is another value).
func (r *File) wrap(op string, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	if err.Error() == "use of closed file" {
		err = os.ErrClosed
	}
	return &os.PathError{Op: op, Path: r.f.Name(), Err: err}
}

// SetReadDeadline and SetWriteDeadline are os.File's.
func (r *File) SetReadDeadline(t time.Time) error  { return r.f.SetReadDeadline(t) }
func (r *File) SetWriteDeadline(t time.Time) error { return r.f.SetWriteDeadline(t) }

// Close closes the file; a Read or Write in progress returns os.ErrClosed.
func (r *File) Close() error { return r.f.Close() }
