package broker

import (
	"bufio"
	"bytes"
	"errors"
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

// attachment is one window's connection to one instance.
type attachment struct {
	in   *instance
	conn *net.UnixConn
	rw   rawio.Conn // conn as read and written: raw system calls where rawio takes it
	r    *bufio.Reader

	// Guarded by in.mu.
	inflight int
	calls    map[string]int64 // the window's request id (JSON text) -> upstream id
	nextAsk  int64            // ids of the server's questions as this window sees them

	// scratch is the read loop's buffer for the frames it rewrites for the server.
	scratch []byte

	// qmu guards the queue of frames to write to the window, and its state.
	qmu     sync.Mutex
	q       [][]byte
	qbytes  int
	writing bool // the write loop is writing a frame it took from q
	flush   bool // close once the queue is written
	closed  bool // write nothing more
	wake    chan struct{}

	// try is send's one non-blocking write: rawio's where it took the socket, else through raw.
	try func([]byte) int
	raw syscall.RawConn // (nil: always queue)
}

func newAttachment(in *instance, c *net.UnixConn, rw rawio.Conn, r *bufio.Reader) *attachment {
	a := &attachment{in: in, conn: c, rw: rw, r: r, calls: map[string]int64{}, wake: make(chan struct{}, 1)}
	if f, ok := rw.(*rawio.File); ok {
		a.try = f.TryWrite
	} else {
		a.raw, _ = c.SyscallConn() // ignore error: a nil raw conn queues every frame
		a.try = a.tryWrite
	}
	return a
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
	if a.qbytes+len(b) > maxQueue && len(a.q) > 0 {
		a.closed = true
		a.q = nil
		a.qmu.Unlock()
		a.in.d.log.Warn("broker: a window stopped reading; closing its attachment", "name", a.in.req.Name)
		a.conn.Close() // ignore error: ends its read loop, which detaches it
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
	a.conn.Close() // ignore error: closing is the point
	a.poke()
}

// writeLoop writes the queue to the window in order.
func (a *attachment) writeLoop() {
	for {
		a.qmu.Lock()
		for len(a.q) == 0 {
			if a.closed || a.flush {
				a.closed = true
				a.qmu.Unlock()
				a.conn.Close() // ignore error: ends the read loop too
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
		_ = a.conn.SetWriteDeadline(time.Now().Add(stall)) // ignore error: a socket takes deadlines
		_, err := a.rw.Write(b)
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
