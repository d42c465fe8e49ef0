package lspconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// framePeer is the editor end of a Stream under test: it writes raw bytes and collects every
// reply the stream writes.
type framePeer struct {
	t       *testing.T
	conn    net.Conn
	srv     *Stream
	replies chan []byte
}

// readModes are the two ways a Stream reads (see source): directly with read deadlines (net.Pipe
// has them, as `switchboard serve`'s stdin does), and through a reader goroutine (a reader
// without them).
var readModes = []string{"direct", "goroutine"}

// noDeadline hides a connection's read deadlines: the Stream reads it through a goroutine.
type noDeadline struct{ io.ReadWriteCloser }

// forModes runs f as a subtest per read mode; newFramePeer takes the mode from the subtest.
func forModes(t *testing.T, f func(t *testing.T)) {
	for _, m := range readModes {
		t.Run(m, f)
	}
}

func newFramePeer(t *testing.T, opts StreamOptions) *framePeer {
	t.Helper()
	a, b := net.Pipe()
	var rwc io.ReadWriteCloser = a
	if strings.HasSuffix(t.Name(), "/goroutine") {
		rwc = noDeadline{a}
	}
	p := &framePeer{t: t, conn: b, srv: NewStream(rwc, opts), replies: make(chan []byte, 16)}
	if got, want := p.srv.fr.src.direct != nil, !strings.HasSuffix(t.Name(), "/goroutine"); got != want {
		t.Fatalf("stream reads directly: %v, want %v", got, want)
	}
	t.Cleanup(func() { p.srv.Close(); b.Close() })
	go func() {
		cli := jsonrpc2.NewHeaderStream(b).(frameRW)
		for {
			body, _, err := cli.ReadFrame(context.Background())
			if err != nil {
				close(p.replies)
				return
			}
			p.replies <- append([]byte(nil), body...)
		}
	}()
	return p
}

// send writes raw in the background (net.Pipe blocks until read); the returned channel gets the
// write's error.
func (p *framePeer) send(raw string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := io.WriteString(p.conn, raw)
		done <- err
	}()
	return done
}

type readResult struct {
	body []byte
	err  error
}

func (p *framePeer) read() <-chan readResult {
	ch := make(chan readResult, 1)
	go func() {
		body, _, err := p.srv.ReadFrame(context.Background())
		ch <- readResult{append([]byte(nil), body...), err}
	}()
	return ch
}

func (p *framePeer) wantReplyCode(code int) {
	p.t.Helper()
	select {
	case reply, ok := <-p.replies:
		if !ok {
			p.t.Fatalf("no reply (connection closed), want error %d", code)
		}
		var r struct {
			Error struct{ Code int } `json:"error"`
		}
		if json.Unmarshal(reply, &r) != nil || r.Error.Code != code {
			p.t.Fatalf("reply %s, want error %d", reply, code)
		}
	case <-time.After(10 * time.Second):
		p.t.Fatalf("no reply within 10s, want error %d", code)
	}
}

func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing within 10s (the stream went deaf)", what)
		panic("unreachable")
	}
}

func lspFrame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

const goodBody = `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`

// A bad header block (no Content-Length, one that is not a positive number, one over MaxFrame or
// too big for any integer, ...) is skipped with one -32700, and the next frame is read, even though
// the skipped block's body ran straight into the next header.
func TestStreamResyncsAfterBadHeader(t *testing.T) {
	for name, bad := range map[string]string{
		"no length":         "Content-Type: x\r\n\r\n{}",
		"bad length":        "Content-Length: x\r\n\r\n{}",
		"letters":           "Content-Length: abc\r\n\r\n{}",
		"negative length":   "Content-Length: -5\r\n\r\n{}",
		"over the limit":    "Content-Length: 67108865\r\n\r\n{}",
		"1 GiB":             "Content-Length: 1073741824\r\n\r\n{}",
		"overflowing":       "Content-Length: 99999999999999999999999\r\n\r\n{}",
		"overflowing int64": "Content-Length: 18446744073709551617\r\n\r\n{}",
		"zero length":       "Content-Length: 0\r\n\r\n{}\n",
		"no colon":          "hello\r\n{}",
		"two lengths":       "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
		"endless line":      strings.Repeat("A", 1<<20),
		"endless block":     strings.Repeat("X-A: b\r\n", 100),
		"lowercase garbage": "content-type: x\n\n[1,2]",
	} {
		t.Run(name, func(t *testing.T) {
			forModes(t, func(t *testing.T) {
				p := newFramePeer(t, StreamOptions{})
				got := p.read()
				p.send(bad + lspFrame(goodBody))
				p.wantReplyCode(-32700)
				r := wait(t, got, "frame after "+name)
				if r.err != nil || string(r.body) != goodBody {
					t.Fatalf("after %q: got %q, %v; want the next frame", name, r.body, r.err)
				}
				if err := p.srv.Err(); err != nil {
					t.Errorf("Err() = %v", err)
				}
			})
		})
	}
}

// A Content-Length longer than the frame swallows the next frame's header into the body: the
// stream says so once and stops reading (with Err matching ErrFraming), instead of waiting for
// bytes that will never make sense.
func TestStreamContentLengthLongerThanFrame(t *testing.T) {
	forModes(t, testStreamContentLengthLongerThanFrame)
}

func testStreamContentLengthLongerThanFrame(t *testing.T) {
	p := newFramePeer(t, StreamOptions{})
	got := p.read()
	p.send("Content-Length: 500\r\n\r\n{}" + lspFrame(goodBody) + lspFrame(goodBody))
	r := wait(t, got, "read after a too-long Content-Length")
	if !errors.Is(r.err, ErrFraming) {
		t.Fatalf("ReadFrame = %q, %v; want ErrFraming", r.body, r.err)
	}
	p.wantReplyCode(-32700)
	wait(t, p.srv.Done(), "Done")
	if !errors.Is(p.srv.Err(), ErrFraming) {
		t.Errorf("Err() = %v, want ErrFraming", p.srv.Err())
	}
}

// A frame that stops half-way (the last frame's Content-Length is longer than what arrives, or
// a header line never ends) ends reading after the stall timeout.
func TestStreamStalledFrame(t *testing.T) {
	for name, raw := range map[string]string{
		"body":   "Content-Length: 50\r\n\r\n{}",
		"header": "Content-Length: 5",
	} {
		t.Run(name, func(t *testing.T) {
			forModes(t, func(t *testing.T) {
				p := newFramePeer(t, StreamOptions{StallTimeout: 50 * time.Millisecond})
				got := p.read()
				p.send(raw)
				r := wait(t, got, "read of a stalled frame")
				if !errors.Is(r.err, ErrFraming) {
					t.Fatalf("ReadFrame = %q, %v; want ErrFraming", r.body, r.err)
				}
				p.wantReplyCode(-32700)
			})
		})
	}
}

// An idle editor between frames is not a stall; a frame stopping half-way is, after exactly the
// stall timeout (fake clock).
func TestFramerStallClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		f := &framer{src: newSource(pr), stall: time.Minute}
		defer f.src.close()
		type res struct {
			body string
			err  error
			at   time.Time
		}
		got := make(chan res, 1)
		next := func() {
			body, _, err := f.next()
			got <- res{string(body), err, time.Now()}
		}
		go next()
		time.Sleep(time.Hour) // fake time: an editor idle for an hour between frames
		synctest.Wait()
		select {
		case r := <-got:
			t.Fatalf("idle editor: next returned %q, %v", r.body, r.err)
		default:
		}
		go io.WriteString(pw, lspFrame(goodBody)+"Content-Length: 10\r\n\r\n{}")
		if r := <-got; r.err != nil || r.body != goodBody {
			t.Fatalf("after idle: %q, %v", r.body, r.err)
		}
		start := time.Now()
		go next()
		r := <-got
		if !errors.Is(r.err, ErrFraming) || r.at.Sub(start) != time.Minute {
			t.Fatalf("half-way frame: %v after %s, want ErrFraming after 1m", r.err, r.at.Sub(start))
		}
		pw.Close()
	})
}

// A frame declared over MaxFrame is refused from its header alone and skipped: the stream
// allocates nothing for the body the editor streams after it, and reads the frame that follows.
func TestStreamSkipsHugeFrame(t *testing.T) {
	for _, decl := range []string{"1073741824", "67108865", "99999999999999999999999"} {
		t.Run(decl, func(t *testing.T) {
			forModes(t, func(t *testing.T) {
				p := newFramePeer(t, StreamOptions{})
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				got := p.read()
				p.send("Content-Length: " + decl + "\r\n\r\n")
				stream := make(chan error, 1)
				go func() { // 8 MiB of the body, then the editor gives up on it and sends a frame
					chunk := bytes.Repeat([]byte("x"), 1<<20)
					for range 8 {
						if _, err := p.conn.Write(chunk); err != nil {
							stream <- err
							return
						}
					}
					_, err := io.WriteString(p.conn, lspFrame(goodBody))
					stream <- err
				}()
				p.wantReplyCode(-32700)
				r := wait(t, got, "the frame after a huge one")
				if r.err != nil || string(r.body) != goodBody {
					t.Fatalf("ReadFrame = %q, %v; want the next frame", r.body, r.err)
				}
				runtime.ReadMemStats(&after)
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
					t.Errorf("skipping the frame allocated %d bytes", grew)
				}
				if err := wait(t, stream, "editor writes end"); err != nil {
					t.Errorf("editor write: %v", err)
				}
				if err := p.srv.Err(); err != nil {
					t.Errorf("Err() = %v", err)
				}
			})
		})
	}
}

// A frame under the bound whose body trickles in never holds more than about twice what arrived.
func TestStreamBodyGrowsWithBytes(t *testing.T) {
	f := &framer{src: newSource(strings.NewReader("Content-Length: 60000000\r\n\r\n" + strings.Repeat("x", 1<<20))), stall: time.Minute}
	defer f.src.close()
	_, _, err := f.next()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("next = %v, want ErrUnexpectedEOF", err)
	}
	if c := cap(f.body); c > 2<<20+64<<10 {
		t.Errorf("body buffer grew to %d bytes for 1 MiB received", c)
	}
}

// The framer accepts what jsonrpc2's own writer produces, several frames back to back, with
// Content-Type headers and bare \n line ends.
func TestStreamWellFormed(t *testing.T) {
	in := lspFrame(goodBody) + "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + lspFrame(goodBody) +
		"content-length:  44 \n\n" + goodBody
	f := &framer{src: newSource(strings.NewReader(in)), stall: time.Minute}
	defer f.src.close()
	for i := range 3 {
		body, n, err := f.next()
		if err != nil || string(body) != goodBody || n <= int64(len(goodBody)) {
			t.Fatalf("frame %d: %q, %d, %v", i, body, n, err)
		}
	}
	if _, _, err := f.next(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want EOF", err)
	}
}

// FuzzFramer feeds arbitrary input to the framer, then a sentinel frame. Properties: no panic, no
// hang; no body is longer than MaxFrame or its buffer bigger than what arrived; and when the input
// cannot start or hold a frame of its own (no "content-length" in it) and ends a line, the
// sentinel frame is found after it (resync).
func FuzzFramer(f *testing.F) {
	const sentinel = `{"jsonrpc":"2.0","id":"sentinel","method":"x"}`
	for _, seed := range []string{
		"",
		"Content-Type: x\r\n\r\n{}",
		"Content-Length: x\r\n\r\n",
		"Content-Length: 500\r\n\r\n{}",
		"Content-Length: 1073741824\r\n\r\n",
		"Content-Length: 99999999999999999999999999\r\n\r\n",
		"Content-Length: 2\r\n\r\n{}",
		"Content-Length: 2\r\n\r\n{}Content-Type: y\r\n\r\n[]\n",
		"\r\n\r\n\n",
		strings.Repeat("A", 5000) + "\n",
		strings.Repeat("X-A: b\r\n", 40),
		"content-length:3\n\n{}}content-length: 1\r\n\r\n}",
		strings.Repeat(":\n", maxHeaderLines-2), // the longest junk the next frame's header survives
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := append(append([]byte(nil), data...), lspFrame(sentinel)...)
		f := &framer{src: newSource(bytes.NewReader(in)), stall: time.Minute}
		defer f.src.close()
		clean := !bytes.Contains(bytes.ToLower(data), []byte("content-length")) && (len(data) == 0 || data[len(data)-1] == '\n')
		// data's last lines (after its last empty line) join the sentinel's header block, and a
		// block of more than maxHeaderLines lines is refused whole, its Content-Length with it.
		lines := strings.Split(string(data), "\n")
		n := 0
		for i := len(lines) - 2; i >= 0 && lines[i] != "" && lines[i] != "\r"; i-- {
			n++
		}
		clean = clean && n < maxHeaderLines-1
		found := false
		for range len(in) + 2 { // every call consumes at least one byte or ends
			body, _, err := f.next()
			var m *malformedError
			if errors.As(err, &m) {
				continue
			}
			if err != nil {
				break
			}
			if len(body) > MaxFrame || cap(f.body) > max(2*len(in), 64<<10) {
				t.Fatalf("body %d bytes, buffer %d, for %d bytes of input", len(body), cap(f.body), len(in))
			}
			if string(body) == sentinel {
				found = true
			}
		}
		if clean && !found {
			t.Fatalf("the sentinel frame after %q was lost", data)
		}
	})
}

// blockingReader is a Read that never returns, like a blocking os.Stdin: closing the connection
// cannot interrupt it.
type blockingReader struct{ unblock chan struct{} }

func (r blockingReader) Read([]byte) (int, error)  { <-r.unblock; return 0, io.EOF }
func (blockingReader) Write(p []byte) (int, error) { return len(p), nil }
func (blockingReader) Close() error                { return nil }

// The host reads stdin directly (no pipe): Close must end a pending ReadFrame although the
// underlying Read stays blocked, or the connection never closes.
func TestStreamCloseEndsReadBlockedInRead(t *testing.T) {
	r := blockingReader{unblock: make(chan struct{})}
	defer close(r.unblock)
	s := NewStream(r, StreamOptions{})
	done := make(chan error, 1)
	go func() {
		_, _, err := s.ReadFrame(context.Background())
		done <- err
	}()
	s.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("ReadFrame after Close returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFrame still blocked 10s after Close")
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed after the read ended")
	}
}

// A pollable stdin (an os.Pipe, as `switchboard serve` makes its stdin) is read directly, and
// Close still ends a read that waits for input that never comes: between frames (no deadline
// set) and half-way through one (the stall deadline set).
func TestStreamCloseEndsDirectRead(t *testing.T) {
	for name, input := range map[string]string{"between frames": "", "mid-frame": "Content-Length: 10\r\n\r\n{"} {
		t.Run(name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			defer r.Close()
			s := NewStream(readWriter{r, io.Discard}, StreamOptions{})
			if s.fr.src.direct == nil {
				t.Fatal("an os.Pipe is read through a goroutine; want directly")
			}
			done := make(chan error, 1)
			go func() {
				_, _, err := s.ReadFrame(context.Background())
				done <- err
			}()
			if _, err := io.WriteString(w, input); err != nil {
				t.Fatal(err)
			}
			// Close only once the reader waits in the pipe's read (else it sees the close first).
			deadline := time.Now().Add(10 * time.Second)
			for !blockedIn("(*source).fillDirect", "internal/poll.runtime_pollWait") {
				if time.Now().After(deadline) {
					t.Fatal("the reader never waited in the pipe's read")
				}
				runtime.Gosched()
			}
			s.Close()
			if err := wait(t, done, "ReadFrame after Close"); err == nil {
				t.Fatal("ReadFrame after Close returned no error")
			}
			wait(t, s.Done(), "Done after Close")
			if err := s.Err(); err != nil {
				t.Errorf("Err() after Close = %v, want nil (not a framing loss)", err)
			}
		})
	}
}

// readWriter joins a pipe's read end (with its read deadlines) and a writer. Like serve's stdio,
// its Close leaves the file open: only the stream's own Close can end the read.
type readWriter struct {
	f *os.File
	w io.Writer
}

func (rw readWriter) Read(p []byte) (int, error)        { return rw.f.Read(p) }
func (rw readWriter) SetReadDeadline(t time.Time) error { return rw.f.SetReadDeadline(t) }
func (rw readWriter) Write(p []byte) (int, error)       { return rw.w.Write(p) }
func (rw readWriter) Close() error                      { return nil }

// blockedIn reports whether a goroutine's stack holds all of frames.
func blockedIn(frames ...string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		all := true
		for _, f := range frames {
			all = all && strings.Contains(g, f)
		}
		if all {
			return true
		}
	}
	return false
}

// closedOutput is an output whose reader is gone.
type closedOutput struct{}

func (closedOutput) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
}

// When the editor closes what the host writes to, the stream ends (the host then stops) instead
// of reading on with nobody to answer: os.File died of SIGPIPE there, the host's raw stdout
// (rawio) reports EPIPE.
func TestStreamEndsWhenOutputBreaks(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s := NewStream(readWriter{r, closedOutput{}}, StreamOptions{})
	defer s.Close()
	if _, err := s.WriteFrame(context.Background(), []byte(`{"jsonrpc":"2.0","method":"x"}`)); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("WriteFrame = %v, want EPIPE", err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("the stream did not end when its output broke")
	}
	if err := s.Err(); err != nil {
		t.Errorf("Err = %v, want nil (the peer went away; nothing was malformed)", err)
	}
}
