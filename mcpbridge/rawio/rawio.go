//go:build linux

// Package rawio reads and writes descriptors that the Go runtime polls (pipes and sockets)
// without entering the scheduler's system-call path for each read and write.
//
// A Go system call (syscall.Read under os.File.Read) tells the scheduler it may block: on a
// process that was idle, the first one also wakes the runtime's monitor thread (sysmon), which
// then polls every 20 µs until the process is idle again. A relay like the host wakes for every
// message, so that monitor was about 15% of its CPU and most of its context switches per tool call
// (cmd/sbbench). A call that cannot block can be a raw system call instead: rawio reads with
// preadv2(2) and writes with pwritev2(2) and the flag RWF_NOWAIT, which makes that one call
// non-blocking whatever the open file's mode (O_NONBLOCK belongs to the open file, which another
// process sharing it may switch back to blocking; RWF_NOWAIT belongs to the call). When the call
// would block it returns EAGAIN and rawio waits in the runtime's poller, as os.File does, through
// the file's syscall.RawConn: deadlines and Close work as for os.File. On a kernel or a file that
// does not take RWF_NOWAIT (EOPNOTSUPP: pipes before Linux 6.4 or so, FIFOs, terminals), a File
// falls back to os.File's reads and writes for good, as the host did before rawio. A raw call can
// still sleep in the kernel for a moment (a pipe's lock held by a writer taking a page fault); with
// one P nothing else runs meanwhile, as with any short system call.
//
// The same holds for a Unix-domain socket (NewConn): the broker daemon and a window attached to
// it (mcpbridge/broker) relay every message of a shared server through one, and with net.Conn's
// reads and writes each message woke the daemon's monitor thread about twice.
package rawio

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// polled is what a File reads, writes and waits on: an *os.File or a *net.UnixConn.
type polled interface {
	io.ReadWriteCloser
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
	SyscallConn() (syscall.RawConn, error)
}

// File reads and writes one polled descriptor.
type File struct {
	f     polled
	name  string // for errors (a file's; "" for a socket, whose errors are net's already)
	rc    syscall.RawConn
	plain atomic.Bool // RWF_NOWAIT was refused: os.File's reads and writes

	// One read and one write at a time (as the descriptor takes them anyway) hand their buffer to
	// the raw call through these, so that a call allocates nothing: a closure over the call's
	// variables would escape to the heap, twice per message.
	rmu, wmu sync.Mutex
	r, w     op
	readFn   func(fd uintptr) bool // (*File).readOnce
	writeFn  func(fd uintptr) bool // (*File).writeOnce
	tryFn    func(fd uintptr) bool // (*File).tryOnce
}

// op is one read or write in progress.
type op struct {
	p     []byte
	n     int
	errno syscall.Errno
}

var noDeadline time.Time

// New wraps f. It reports false when f is not in the runtime's poller (a regular file, a
// terminal, a descriptor that was blocking when it was opened) or is blocking now: there would
// be no poller to wait in.
func New(f *os.File) (*File, bool) {
	return wrapPolled(f, f.Name())
}

// NewConn wraps a Unix-domain socket as New wraps a file (the net package polls every socket it
// makes). Errors are the net package's (*net.OpError: net.ErrClosed once closed,
// os.ErrDeadlineExceeded past a deadline); a kernel that refuses RWF_NOWAIT on sockets gets the
// Conn's own reads and writes, as New's fallback.
func NewConn(c *net.UnixConn) (*File, bool) {
	return wrapPolled(c, "")
}

func wrapPolled(f polled, name string) (*File, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, false
	}
	if f.SetReadDeadline(noDeadline) != nil || f.SetWriteDeadline(noDeadline) != nil {
		return nil, false // not polled
	}
	ok := false
	if rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		ok = errno == 0 && flags&syscall.O_NONBLOCK != 0
	}) != nil || !ok {
		return nil, false
	}
	r := &File{f: f, name: name, rc: rc}
	r.readFn, r.writeFn, r.tryFn = r.readOnce, r.writeOnce, r.tryOnce
	return r, true
}

// rw is one preadv2 or pwritev2 at the file's position, RWF_NOWAIT (a variable: tests refuse it).
var rw = func(trap, fd uintptr, p []byte) (int, syscall.Errno) {
	iov := unix.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	// The position -1 (both halves, for 32-bit systems) is "the current one", as read and write.
	n, _, e := unix.RawSyscall6(trap, fd, uintptr(unsafe.Pointer(&iov)), 1, ^uintptr(0), ^uintptr(0), unix.RWF_NOWAIT)
	return int(n), e
}

// refused reports whether errno says the kernel or the file does not take RWF_NOWAIT (pipes
// before Linux 6.4 or so, FIFOs, terminals: EOPNOTSUPP), preadv2 at all (ENOSYS, EINVAL), or a
// sandbox forbids the call (seccomp: EPERM, EACCES).
func refused(errno syscall.Errno) bool {
	switch errno {
	case syscall.EOPNOTSUPP, syscall.ENOSYS, syscall.EINVAL, syscall.EPERM, syscall.EACCES:
		return true
	}
	return false
}

// Read is os.File.Read: io.EOF at the end, os.ErrDeadlineExceeded past the read deadline,
// os.ErrClosed once closed.
func (r *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if r.plain.Load() {
		return r.f.Read(p)
	}
	defer acquired()
	r.rmu.Lock()
	r.r = op{p: p}
	err := r.rc.Read(r.readFn)
	n, errno := r.r.n, r.r.errno
	r.r = op{}
	r.rmu.Unlock()
	switch {
	case err != nil:
		return 0, r.wrap("read", err)
	case refused(errno):
		r.plain.Store(true)
		return r.f.Read(p)
	case errno != 0:
		return 0, r.errno("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write is os.File.Write: it writes all of p unless the write deadline passes, the file is
// closed, or the other end is gone (an EPIPE error; unlike os.File on stdout or stderr, it does
// not raise SIGPIPE: the caller decides).
func (r *File) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if r.plain.Load() {
		return r.f.Write(p)
	}
	released()
	r.wmu.Lock()
	r.w = op{p: p}
	err := r.rc.Write(r.writeFn)
	n, errno := r.w.n, r.w.errno
	r.w = op{}
	r.wmu.Unlock()
	switch {
	case err != nil:
		return n, r.wrap("write", err)
	case refused(errno) && n == 0:
		r.plain.Store(true)
		return r.f.Write(p)
	case errno != 0:
		return n, r.errno("write", errno)
	}
	return n, nil
}

// TryWrite makes one non-blocking write of p and returns how much of it the descriptor took: 0
// when it takes nothing now or on any error (a Write then meets it). It never waits, so a caller
// holding a lock can hand the rest to a writer that may. Where RWF_NOWAIT was refused it is one
// write(2), which the descriptor's O_NONBLOCK (New and NewConn require it) keeps from waiting.
func (r *File) TryWrite(p []byte) int {
	if len(p) == 0 {
		return 0
	}
	released()
	r.wmu.Lock()
	r.w = op{p: p}
	err := r.rc.Write(r.tryFn)
	n, errno := r.w.n, r.w.errno
	r.w = op{}
	r.wmu.Unlock()
	if err != nil {
		return 0
	}
	if refused(errno) && n == 0 && !r.plain.Load() {
		r.plain.Store(true)
		return r.TryWrite(p) // the plain way
	}
	return n
}

// tryOnce is writeOnce that never waits in the poller.
func (r *File) tryOnce(fd uintptr) bool {
	if r.plain.Load() {
		if m, err := syscall.Write(int(fd), r.w.p); err == nil && m > 0 {
			r.w.n = m
		}
		return true
	}
	r.writeOnce(fd)
	return true
}

// readOnce is one raw read into r.r.p: false to wait in the poller.
func (r *File) readOnce(fd uintptr) bool {
	for {
		m, e := rw(unix.SYS_PREADV2, fd, r.r.p)
		switch e {
		case 0:
			r.r.n = m
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait in the poller
		default:
			r.r.errno = e
			return true
		}
	}
}

// writeOnce writes what is left of r.w.p: false to wait in the poller (the pipe is full).
func (r *File) writeOnce(fd uintptr) bool {
	for r.w.n < len(r.w.p) {
		m, e := rw(unix.SYS_PWRITEV2, fd, r.w.p[r.w.n:])
		switch e {
		case 0:
			r.w.n += m
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false // the pipe is full: wait in the poller
		default:
			r.w.errno = e
			return true
		}
	}
	return true
}

// wrap gives a wait's error as os.File gives it: a *os.PathError around os.ErrDeadlineExceeded
// or, for a closed file, os.ErrClosed (the poller's own "use of closed file" is another value).
func (r *File) wrap(op string, err error) error {
	if _, sock := r.f.(*net.UnixConn); sock {
		return err // a *net.OpError already, as the Conn's own would be
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) && err.Error() == "use of closed file" {
		err = os.ErrClosed
	}
	return &os.PathError{Op: op, Path: r.name, Err: err}
}

// errno is a failed raw call's error as the file's or the socket's own call would give it.
func (r *File) errno(op string, e syscall.Errno) error {
	if c, sock := r.f.(*net.UnixConn); sock {
		return &net.OpError{Op: op, Net: "unix", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, e)}
	}
	return &os.PathError{Op: op, Path: r.name, Err: e}
}

// SetReadDeadline and SetWriteDeadline are os.File's.
func (r *File) SetReadDeadline(t time.Time) error  { return r.f.SetReadDeadline(t) }
func (r *File) SetWriteDeadline(t time.Time) error { return r.f.SetWriteDeadline(t) }

// Close closes the file; a Read or Write in progress returns os.ErrClosed.
func (r *File) Close() error { return r.f.Close() }
