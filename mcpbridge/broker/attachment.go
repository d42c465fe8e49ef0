package broker

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/rawio"
)

// maxQueue bounds what waits to be written to one window. A window that stops reading while its
// server keeps talking is cut off rather than growing the daemon (design §4.2).
const maxQueue = 2 * maxFrame

// maxQueueFrames bounds the same queues in frames: a queued frame costs several times its bytes
// (its allocation, its slice header), and a server flooding tiny frames (pings the daemon
// answers, notifications to a window that reads nothing) grew the daemon past 700 MB under
// maxQueue alone. Windows' requests are at most maxInflight each, far fewer.
const maxQueueFrames = 1 << 16

// attachment is one window's connection to one instance.
type attachment struct {
	in  *instance
	req Request // the window's own: its launch is the instance's, its name its own
	pid int     // the window's process (SO_PEERCRED at accept; 0: unknown)
	// counts: the window asked to hear how many windows use the instance (featureWindows).
	counts bool
	conn   *net.UnixConn // the hello's socket; frames too, unless pipes carry them
	w      rawio.Conn    // where frames to the window go (raw system calls where rawio takes it)
	r      *bufio.Reader // the window's frames
	// pipes are the daemon's ends of the attachment's pipes (featurePipes), closed with conn.
	pipes []io.Closer
	// upFD is the up pipe's read end until the relay loop takes it (rd), under qmu; done is
	// closed once the loop has ended the attachment.
	upFD int
	rd   *reader
	done chan struct{}

	// Guarded by in.mu.
	inflight int
	calls    map[string]int64 // the window's request id (JSON text) -> upstream id
	nextAsk  int64            // ids of the server's questions as this window sees them

	// scratch is the read loop's buffer for the frames it rewrites for the server.
	scratch []byte

	// qmu guards the queue of frames to write to the window, and its state.
	qmu    sync.Mutex
	q      [][]byte
	qbytes int
	// writing: the write loop is writing a frame it took from q, or has not started yet: the
	// hello's reply is written on the socket after the attachment has joined its instance, and
	// a frame sent meanwhile (another window attaching, a broadcast) must wait in q behind it.
	writing bool
	flush   bool // close once the queue is written
	closed  bool // write nothing more
	wake    chan struct{}

	// try is send's one non-blocking write: rawio's where it took w, else through raw.
	try func([]byte) int
	raw syscall.RawConn // (nil: always queue)
}

// newAttachment makes the attachment of the window on c, whose frames come from r and go to w
// (c's own, or pipes whose daemon ends are closed with c).
func newAttachment(in *instance, c *net.UnixConn, w rawio.Conn, r *bufio.Reader, upFD int, pipes ...io.Closer) *attachment {
	a := &attachment{in: in, conn: c, w: w, r: r, upFD: upFD, pipes: pipes, done: make(chan struct{}),
		calls: map[string]int64{}, wake: make(chan struct{}, 1), writing: true}
	if f, ok := w.(*rawio.File); ok {
		a.try = f.TryWrite
	} else {
		if sc, ok := w.(syscall.Conn); ok {
			a.raw, _ = sc.SyscallConn() // ignore error: a nil raw conn queues every frame
		}
		a.try = a.tryWrite
	}
	return a
}

// closeIO closes the socket and the pipes: the read loop ends, and so does the window's.
func (a *attachment) closeIO() {
	a.conn.Close() // ignore error: closing is the point
	for _, p := range a.pipes {
		p.Close() // ignore error: as above
	}
	a.qmu.Lock()
	rd, fd := a.rd, a.upFD
	a.upFD = -1
	a.qmu.Unlock()
	if rd != nil {
		loop().drop(rd)
	} else if fd >= 0 {
		closeFD(fd)
	}
}

// startReading hands the up pipe to the relay loop (false: the attachment was closed first, or
// the loop refused it).
func (a *attachment) startReading() bool {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	if a.upFD < 0 {
		return false
	}
	rd, err := loop().add(a.upFD, func(frame []byte) { a.in.fromWindow(a, frame) }, func(error) {
		a.in.detach(a)
		a.kill()
		close(a.done)
	})
	if err != nil {
		a.in.d.log.Warn("broker: the relay loop refused an attachment", "err", err)
		return false // closeIO closes upFD
	}
	a.rd, a.upFD = rd, -1
	return true
}

// send queues one frame for the window; it never blocks on the window. b is only lent: it may be
// a read buffer's or a scratch buffer reused for the next frame, so what is queued is a copy.
func (a *attachment) send(b []byte) {
	b = withNewline(b)
	a.qmu.Lock()
	if a.closed || a.flush {
		a.qmu.Unlock()
		return
	}
	if len(a.q) == 0 && !a.writing {
		// Nothing waits before this frame: try to write it at once, without blocking. Handing
		// every frame to the write loop cost a goroutine wake-up per message, about a fifth of
		// a relayed call.
		if n := a.try(b); n == len(b) {
			a.qmu.Unlock()
			return
		} else {
			b = b[n:]
		}
	}
	if (a.qbytes+len(b) > maxQueue || len(a.q) >= maxQueueFrames) && len(a.q) > 0 {
		a.closed = true
		a.q = nil
		a.qmu.Unlock()
		a.in.d.log.Warn("broker: a window stopped reading; closing its attachment", "name", a.in.req.Name)
		a.closeIO() // ends its read loop, which detaches it
		return
	}
	b = bytes.Clone(b)
	a.q = append(a.q, b)
	a.qbytes += len(b)
	a.qmu.Unlock()
	a.poke()
}

func (a *attachment) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// tryWrite makes one non-blocking write of b to the window and returns how much it took (0 on
// any error: the write loop then meets it).
func (a *attachment) tryWrite(b []byte) int {
	if a.raw == nil {
		return 0
	}
	n := 0
	err := a.raw.Write(func(fd uintptr) bool {
		var werr error
		n, werr = rawWrite(fd, b)
		if werr != nil || n < 0 {
			n = 0
		}
		return true // one attempt: never wait here
	})
	if err != nil {
		return 0
	}
	return n
}

// closeAfterFlush closes the connection once what is queued has been written.
func (a *attachment) closeAfterFlush() {
	a.qmu.Lock()
	a.flush = true
	a.qmu.Unlock()
	a.poke()
}

// kill closes the connection now.
func (a *attachment) kill() {
	a.qmu.Lock()
	a.closed = true
	a.q = nil
	a.qmu.Unlock()
	a.closeIO()
	a.poke()
}

// writeLoop writes the queue to the window in order; handle starts it once the hello's reply is
// written.
func (a *attachment) writeLoop() {
	a.qmu.Lock()
	a.writing = false // the reply is out: send may write at once when nothing waits
	a.qmu.Unlock()
	for {
		a.qmu.Lock()
		for len(a.q) == 0 {
			if a.closed || a.flush {
				a.closed = true
				a.qmu.Unlock()
				a.closeIO() // ends the read loop too
				return
			}
			a.qmu.Unlock()
			<-a.wake
			a.qmu.Lock()
		}
		if a.closed {
			a.qmu.Unlock()
			return
		}
		b := a.q[0]
		a.q[0] = nil
		a.q = a.q[1:]
		a.qbytes -= len(b)
		a.writing = true
		a.qmu.Unlock()
		_ = a.w.SetWriteDeadline(time.Now().Add(stall)) // ignore error: sockets and pipes take deadlines
		_, err := a.w.Write(b)
		a.qmu.Lock()
		a.writing = false
		a.qmu.Unlock()
		if err != nil {
			a.kill()
			return
		}
	}
}

// readLoop relays the window's frames until it leaves, then detaches it.
func (a *attachment) readLoop() {
	for {
		data, err := nextFrame(a.r, maxFrame)
		if err != nil {
			break
		}
		a.in.fromWindow(a, data)
	}
	a.in.detach(a)
	a.kill()
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
