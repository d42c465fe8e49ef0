package broker

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The relay's read side runs on one OS thread of its own: an epoll loop over the read ends of
// every attachment's up pipe and every server's stdout, which hands each whole frame to its
// routing (fromWindow, fromServer) on that thread. Profiled (BenchmarkRelay, perf), a call
// through the daemon was two goroutine wake-ups through the runtime's poller: the read that
// found nothing, the park, the scheduler looking for work, its epoll_wait, the wake-up, the
// read again, each way; about 40% of the daemon's CPU per call was that path rather than the
// relaying. Here a frame costs one epoll_wait and one read: the loop's epoll is level-triggered,
// so it never reads to EAGAIN, and the descriptors are the loop's alone (never in the runtime's
// poller, which would wake for every frame too). Writes stay where they were: one non-blocking
// write from the routing, and a goroutine only for what the other end has no room for yet.
//
// Nothing on the loop blocks: routing takes short locks and writes without waiting (writeUp and
// attachment.send queue what does not fit); what ends a reader (its onEnd) runs on a goroutine.

const loopSupported = true

// yieldEvery is how often the loop passes through the scheduler (see run): under the monitor's
// limit of 10 ms, with room for one round of the loop. Each pass costs more than it looks: with
// an idle P, Gosched wakes another thread, which takes the loop over while this one sleeps (three
// futex calls and a thread hand-off; strace of a daemon under sequential calls: 0.71 futex calls
// per call at 2 ms, 0.21 at 8 ms).
const yieldEvery = 8 * time.Millisecond

// reader is one descriptor the loop reads frames from.
type reader struct {
	fd      int32
	buf     []byte // buf[r:w] is read and not yet handed on
	r, w    int
	seen    int          // buf[r:seen] has no newline (a large frame is not searched again per read)
	onFrame func([]byte) // on the loop; the frame is valid until it returns
	onEnd   func(error)  // on a goroutine of its own, once: end of file, a read error, or drop
	drop    atomic.Bool  // asked to stop reading (drop)
	ended   bool         // (the loop's) onEnd was started
}

// errDropped is onEnd's error when the reader was dropped rather than its input ending.
var errDropped = errors.New("dropped")

type relayLoop struct {
	epfd, evfd int
	mu         sync.Mutex
	readers    map[int32]*reader
	drops      []*reader // asked to stop, under mu
}

var (
	loopOnce sync.Once
	theLoop  *relayLoop
	loopErr  error
)

// loop returns the process's relay loop, starting it on first use (nil: no loop here; the
// relay reads on goroutines as before).
func loop() *relayLoop {
	loopOnce.Do(func() {
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			loopErr = err
			return
		}
		evfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			unix.Close(epfd) // ignore error: unused
			loopErr = err
			return
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(evfd)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &ev); err != nil {
			unix.Close(epfd) // ignore error: unused
			unix.Close(evfd) // ignore error: unused
			loopErr = err
			return
		}
		theLoop = &relayLoop{epfd: epfd, evfd: evfd, readers: map[int32]*reader{}}
		go theLoop.run()
	})
	return theLoop
}

// add makes the loop read fd (non-blocking, the caller's no more: the loop closes it once it
// ended) and hand its frames to onFrame.
func (l *relayLoop) add(fd int, onFrame func([]byte), onEnd func(error)) (*reader, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	rd := &reader{fd: int32(fd), buf: make([]byte, 64<<10), onFrame: onFrame, onEnd: onEnd}
	l.mu.Lock()
	l.readers[rd.fd] = rd
	l.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: rd.fd}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		l.mu.Lock()
		delete(l.readers, rd.fd)
		l.mu.Unlock()
		return nil, err
	}
	return rd, nil
}

// drop stops reading rd: the loop closes its descriptor and starts its onEnd(errDropped), unless
// its input ended first. It may be called from any goroutine, any number of times.
func (l *relayLoop) drop(rd *reader) {
	if rd == nil || rd.drop.Swap(true) {
		return
	}
	l.mu.Lock()
	l.drops = append(l.drops, rd)
	l.mu.Unlock()
	one := uint64(1)
	_, _ = unix.Write(l.evfd, (*[8]byte)(unsafe.Pointer(&one))[:]) // ignore error: a full counter wakes the loop anyway
}

func (l *relayLoop) run() {
	// The goroutine stays on its thread while it waits (a system call keeps its thread), so it
	// needs no LockOSThread. It does need to pass through the scheduler now and then: a
	// goroutine that never does looks, to the runtime's monitor, like one running for ever, and
	// every 10 ms it was preempted by a signal (epoll_wait's EINTR), its P taken away, and the
	// monitor woke every 20 µs for a while after (15% of the daemon's CPU per call, perf).
	events := make([]unix.EpollEvent, 64)
	yielded := time.Now()
	for {
		if now := time.Now(); now.Sub(yielded) > yieldEvery {
			runtime.Gosched()
			yielded = now
		}
		n, err := epollWait(l.epfd, events)
		if err != nil {
			continue // EINTR
		}
		for i := range n {
			fd := events[i].Fd
			if int(fd) == l.evfd {
				var b [8]byte
				_, _ = unix.Read(l.evfd, b[:]) // ignore error: EAGAIN when another wake took it
				l.mu.Lock()
				drops := l.drops
				l.drops = nil
				l.mu.Unlock()
				for _, rd := range drops {
					l.end(rd, errDropped)
				}
				continue
			}
			l.mu.Lock()
			rd := l.readers[fd]
			l.mu.Unlock()
			if rd == nil || rd.ended {
				continue
			}
			if rd.drop.Load() {
				l.end(rd, errDropped)
				continue
			}
			l.read(rd)
		}
	}
}

// epollWait waits as a system call the scheduler knows may block (its P goes to other
// goroutines meanwhile).
func epollWait(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := syscall.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), ^uintptr(0), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// read takes what fd has (one read: the loop is level-triggered, the rest comes next round) and
// hands on every whole frame.
func (l *relayLoop) read(rd *reader) {
	if rd.w == len(rd.buf) {
		// Full: move the partial frame to the front, or grow for a large one.
		if rd.r > 0 {
			rd.w = copy(rd.buf, rd.buf[rd.r:rd.w])
			rd.seen -= rd.r
			rd.r = 0
		} else {
			if len(rd.buf) >= maxFrame {
				l.end(rd, errFrameTooLarge)
				return
			}
			nb := make([]byte, min(2*len(rd.buf), maxFrame+1))
			rd.w = copy(nb, rd.buf[rd.r:rd.w])
			rd.r = 0
			rd.buf = nb
		}
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(rd.fd), uintptr(unsafe.Pointer(&rd.buf[rd.w])), uintptr(len(rd.buf)-rd.w))
	switch {
	case e == syscall.EAGAIN || e == syscall.EINTR:
		return
	case e != 0:
		l.end(rd, e)
		return
	case n == 0:
		// End of file: a last line without its newline is still a frame, as nextFrame has it.
		if last := rd.buf[rd.r:rd.w]; len(bytes.TrimSpace(last)) > 0 {
			rd.onFrame(last)
		}
		l.end(rd, nil)
		return
	}
	rd.w += int(n)
	for !rd.drop.Load() {
		from := max(rd.seen, rd.r)
		i := bytes.IndexByte(rd.buf[from:rd.w], '\n')
		if i < 0 {
			rd.seen = rd.w
			break
		}
		frame := rd.buf[rd.r : from+i+1]
		rd.r = from + i + 1
		rd.onFrame(frame)
	}
	if rd.r == rd.w {
		rd.r, rd.w, rd.seen = 0, 0, 0
		if len(rd.buf) > 64<<10 {
			rd.buf = make([]byte, 64<<10) // a large frame's buffer is not kept
		}
	}
	if rd.w-rd.r > maxFrame {
		l.end(rd, errFrameTooLarge)
	}
}

// end stops reading rd, closes its descriptor and starts its onEnd.
func (l *relayLoop) end(rd *reader, err error) {
	if rd.ended {
		return
	}
	rd.ended = true
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, int(rd.fd), nil) // ignore error: closing removes it too
	l.mu.Lock()
	delete(l.readers, rd.fd)
	l.mu.Unlock()
	unix.Close(int(rd.fd)) // ignore error: ours
	rd.buf = nil
	go rd.onEnd(err)
}

// rawPipe makes a close-on-exec pipe of bare descriptors (none in the runtime's poller); both
// ends non-blocking with nonblock (a child's end must not be: programs expect blocking stdio).
func rawPipe(nonblock bool) (r, w int, err error) {
	var p [2]int
	flags := unix.O_CLOEXEC
	if nonblock {
		flags |= unix.O_NONBLOCK
	}
	err = unix.Pipe2(p[:], flags)
	return p[0], p[1], err
}
