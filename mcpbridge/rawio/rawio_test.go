//go:build linux

package rawio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe() // non-blocking and polled, as exec's pipes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func wrap(t *testing.T, f *os.File) *File {
	t.Helper()
	rf, ok := New(f)
	if !ok {
		t.Fatalf("New(%s) refused a polled pipe", f.Name())
	}
	return rf
}

// What goes in one end comes out of the other, in order, across many full pipes: the writer
// waits in the poller when the pipe is full (EAGAIN) and goes on from where it stopped.
func TestRoundTripLargerThanThePipe(t *testing.T) {
	r, w := pipe(t)
	rr, rw := wrap(t, r), wrap(t, w)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: 16 pipe buffers
	errc := make(chan error, 1)
	go func() {
		n, err := rw.Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		w.Close()
		errc <- err
	}()
	got, err := io.ReadAll(rr) // io.EOF once the writer closed
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("Write: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d written", len(got), len(want))
	}
}

func TestReadDeadlineAndClose(t *testing.T) {
	r, _ := pipe(t)
	rr := wrap(t, r)
	if err := rr.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := rr.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	if err := rr.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := rr.Read(make([]byte, 8))
		errc <- err
	}()
	rr.Close() // ends the read waiting in the poller
	if err := <-errc; !errors.Is(err, os.ErrClosed) {
		t.Fatalf("read of a closed file: %v, want os.ErrClosed", err)
	}
}

// A write into a pipe whose reader is gone fails with EPIPE (Go ignores SIGPIPE on descriptors
// other than 1 and 2), as os.File's does.
func TestWriteToClosedPipe(t *testing.T) {
	r, w := pipe(t)
	rw := wrap(t, w)
	r.Close()
	if _, err := rw.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("write to a pipe without reader: %v, want EPIPE", err)
	}
}

// A descriptor a raw read(2) could block on is refused: a regular file (not polled), and a pipe
// in blocking mode (someone else's, wrapped as it is).
func TestNewRefusesWhatCouldBlock(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := New(f); ok {
		t.Error("New took a regular file")
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil { // blocking
		t.Fatal(err)
	}
	br, bw := os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
	defer br.Close()
	defer bw.Close()
	if _, ok := New(br); ok {
		t.Error("New took a blocking pipe")
	}
}

// Data handed from one goroutine to another through a pipe is ordered for the race detector as
// os.File's reads and writes order it (under -race, this test fails without the annotation).
func TestHandOverThroughAPipe(t *testing.T) {
	r, w := pipe(t)
	rr, rw := wrap(t, r), wrap(t, w)
	var handed []int
	wrote := make(chan error, 1)
	go func() {
		handed = append(handed, 42) // written before the byte goes out
		_, err := rw.Write([]byte{1})
		wrote <- err
	}()
	if _, err := rr.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if len(handed) != 1 || handed[0] != 42 { // read after the byte came in
		t.Fatalf("handed = %v", handed)
	}
	if err := <-wrote; err != nil { // and the writer done before the next test swaps rw
		t.Fatal(err)
	}
}

// Another process sharing the open file may switch it back to blocking mode: a read or write
// still never blocks the thread (RWF_NOWAIT is the call's, not the file's), so it waits in the
// poller and its deadline ends it. A plain read(2) here would hang its thread for good, and the
// process with it at the next collection (the test binary times out).
func TestSwitchedToBlockingStillWaitsInThePoller(t *testing.T) {
	// Ps to spare: were a read or write to block its thread (and hold its P), this test would
	// still run to say so.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	r, _ := pipe(t) // nobody writes
	_, w := pipe(t) // nobody reads
	if e := noWait(t, r); refused(e) {
		t.Skipf("this kernel refuses RWF_NOWAIT on pipes (%v): rawio falls back to os.File", e)
	}
	rr, rw := wrap(t, r), wrap(t, w)
	for _, f := range []*os.File{r, w} {
		if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 2)
	go func() {
		if err := rr.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			t.Error(err)
		}
		_, err := rr.Read(make([]byte, 8))
		done <- err
	}()
	go func() {
		if err := rw.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			t.Error(err)
		}
		_, err := rw.Write(make([]byte, 1<<20)) // more than the pipe holds, nobody reading
		done <- err
	}()
	for range 2 {
		select {
		case err := <-done:
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("read or write on a pipe switched to blocking: %v, want os.ErrDeadlineExceeded", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a read or write on a pipe switched to blocking mode never returned")
		}
	}
}

// Where the kernel or the file refuses RWF_NOWAIT (or a sandbox the call), a File reads and
// writes as os.File does.
func TestFallbackWhenNoWaitIsRefused(t *testing.T) {
	saved := rw
	defer func() { rw = saved }()
	for _, refusal := range []syscall.Errno{syscall.EOPNOTSUPP, syscall.ENOSYS, syscall.EINVAL, syscall.EPERM, syscall.EACCES} {
		t.Run(refusal.Error(), func(t *testing.T) {
			calls := 0
			rw = func(uintptr, uintptr, []byte) (int, syscall.Errno) { calls++; return 0, refusal }
			r, w := pipe(t)
			rr, rwf := wrap(t, r), wrap(t, w)
			if n, err := rwf.Write([]byte("hello")); n != 5 || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
			buf := make([]byte, 8)
			n, err := rr.Read(buf)
			if err != nil || string(buf[:n]) != "hello" {
				t.Fatalf("Read = %q, %v", buf[:n], err)
			}
			if _, err := rwf.Write([]byte("again")); err != nil {
				t.Fatal(err)
			}
			if calls != 2 {
				t.Errorf("RWF_NOWAIT tried %d times; want once per file, then never again", calls)
			}
			// TryWrite still writes, with a plain write(2): a caller that tries before it queues
			// (the broker daemon) would otherwise queue every frame.
			_, w2 := pipe(t)
			tw := wrap(t, w2)
			if n := tw.TryWrite([]byte("hello")); n != 5 {
				t.Errorf("TryWrite with RWF_NOWAIT refused took %d bytes of 5", n)
			}
			if n := tw.TryWrite([]byte("again")); n != 5 {
				t.Errorf("the second TryWrite took %d bytes of 5", n)
			}
		})
	}
}

// noWait is what one RWF_NOWAIT read of f says (EAGAIN on an empty pipe where the kernel takes it).
// Not f.Fd(): that would put f in blocking mode.
func noWait(t *testing.T, f *os.File) syscall.Errno {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var e syscall.Errno
	if err := rc.Control(func(fd uintptr) { _, e = rw(unix.SYS_PREADV2, fd, make([]byte, 1)) }); err != nil {
		t.Fatal(err)
	}
	return e
}

// socketPair is two connected Unix stream sockets as the net package makes them (polled,
// non-blocking), wrapped by NewConn.
func socketPair(t *testing.T) (a, b *File, ca, cb *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]*net.UnixConn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socket")
		c, err := net.FileConn(f) // a dup, polled; f is ours to close
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.(*net.UnixConn)
		t.Cleanup(func() { c.Close() })
	}
	files := make([]*File, 2)
	for i, c := range conns {
		f, ok := NewConn(c)
		if !ok {
			t.Fatal("NewConn refused a socket of the net package")
		}
		files[i] = f
	}
	return files[0], files[1], conns[0], conns[1]
}

// A socket carries in order what is larger than its buffer, the writer waiting in the poller
// (the broker relays every frame of a shared server this way).
func TestSocketRoundTrip(t *testing.T) {
	a, b, ca, _ := socketPair(t)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: many socket buffers
	errc := make(chan error, 1)
	go func() {
		n, err := a.Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		ca.CloseWrite() // ignore error: EOF for the reader
		errc <- err
	}()
	got, err := io.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("Write: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not what was written", len(got))
	}
}

// A socket's errors are the net package's, as callers test them: a deadline passed, a closed
// connection, a peer gone.
func TestSocketErrors(t *testing.T) {
	a, b, _, _ := socketPair(t)
	if err := a.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read of a closed socket: %v, want net.ErrClosed", err)
	}
	var err error
	for err == nil { // the peer is gone: EPIPE (or ECONNRESET) once the kernel says so
		_, err = a.Write([]byte("x"))
	}
	var op *net.OpError
	if !errors.As(err, &op) || !(errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
		t.Errorf("write to a socket whose peer closed: %#v, want a *net.OpError with EPIPE", err)
	}
}

// TryWrite takes what fits and never waits: a full socket takes 0 bytes, and what it took is
// read in order.
func TestTryWriteNeverWaits(t *testing.T) {
	a, b, _, _ := socketPair(t)
	if n := a.TryWrite([]byte("hello\n")); n != 6 {
		t.Fatalf("TryWrite to an empty socket took %d bytes of 6", n)
	}
	got := make([]byte, 6)
	if _, err := io.ReadFull(b, got); err != nil || string(got) != "hello\n" {
		t.Fatalf("read %q, %v", got, err)
	}
	big := make([]byte, 1<<20) // more than the socket holds, nobody reading
	total := 0
	for {
		n := a.TryWrite(big)
		if n == 0 {
			break // full: it returned instead of waiting
		}
		total += n
		if total > 64<<20 {
			t.Fatal("the socket never filled")
		}
	}
	if total == 0 {
		t.Fatal("TryWrite took nothing of an empty socket")
	}
}
