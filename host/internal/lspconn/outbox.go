package lspconn

import (
	"errors"
	"io"
	"runtime"
	"strconv"
	"sync"
)

// outbox writes frames to the editor, several in one write when they come together.
//
// The host runs on one P once started, and its writes are raw system calls that never let
// another goroutine run, so writers never meet by themselves: each reply to the editor was its
// own write and woke the editor once. When the replies of several calls are ready at once (a
// server answered several calls in one read), the first writer yields once before writing, the
// others' frames join its buffer meanwhile, and all go out in one write. It yields only when
// busy says more replies are coming; otherwise a frame is written at once, as before.
type outbox struct {
	w    io.Writer
	busy func() bool // nil: never wait

	mu      sync.Mutex
	left    bool     // Stream.Leave: nothing more is written
	buf     []byte   // frames not written yet, in the order they came
	spare   []byte   // the buffer written last, reused
	writing bool     // a writer owns buf: it writes it, then what joined meanwhile
	joined  *flushed // the result for the frames in buf other than the writer's (nil: none)
}

// flushed is the result of one write, for the writers whose frames it carried.
type flushed struct {
	done chan struct{}
	err  error
}

// keptBuffer is the largest buffer kept for the next writes: a big result's is given back.
const keptBuffer = 64 << 10

// write frames body with its Content-Length header and writes it, alone or with others; it
// returns once the write that carried it is over, with that write's error.
func (o *outbox) write(body []byte) (int, error) {
	o.mu.Lock()
	if o.left {
		o.mu.Unlock()
		return 0, errLeft
	}
	start := len(o.buf)
	o.buf = appendFrame(o.buf, body)
	size := len(o.buf) - start
	if o.writing {
		f := o.joined
		if f == nil {
			f = &flushed{done: make(chan struct{})}
			o.joined = f
		}
		o.mu.Unlock()
		<-f.done
		if f.err != nil {
			return 0, f.err
		}
		return size, nil
	}
	o.writing = true
	o.mu.Unlock()
	if o.busy != nil && o.busy() {
		// The goroutines about to reply run first (a yield queues this one behind them); their
		// frames join buf, and this write carries them all.
		runtime.Gosched()
	}
	more, err := o.writeOut()
	if more {
		// Frames joined while the write waited (the editor's pipe was full): another goroutine
		// writes them, so that this writer returns once its own frame is out, as it would alone.
		go o.drain()
	}
	if err != nil {
		return 0, err
	}
	return size, nil
}

// writeOut writes buf as its owner and reports whether frames joined meanwhile; when none did,
// the ownership ends with it.
func (o *outbox) writeOut() (more bool, err error) {
	o.mu.Lock()
	buf, f := o.buf, o.joined
	o.buf, o.joined = o.spare[:0], nil
	o.mu.Unlock()
	_, err = o.w.Write(buf)
	if f != nil {
		f.err = err
		close(f.done)
	}
	o.mu.Lock()
	if cap(buf) <= keptBuffer {
		o.spare = buf[:0]
	} else {
		o.spare = nil
	}
	more = len(o.buf) > 0
	o.writing = more
	o.mu.Unlock()
	return more, err
}

// drain writes what joined while a write waited, until nothing is left.
func (o *outbox) drain() {
	for more := true; more; {
		more, _ = o.writeOut() // ignore error: each writer has it from its flushed
	}
}

// errLeft is a write after Stream.Leave.
var errLeft = errors.New("lspconn: write after the host left the editor")

// leave makes every later write fail at once (Stream.Leave).
func (o *outbox) leave() {
	o.mu.Lock()
	o.left = true
	o.mu.Unlock()
}

// appendFrame appends body framed as LSP frames it (jsonrpc2's header stream writes the same).
func appendFrame(b, body []byte) []byte {
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}
