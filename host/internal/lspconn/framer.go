package lspconn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"
)

// Bounds on what the editor can make the host hold. A frame is refused from its header alone when
// it declares more than MaxFrame bytes (a malformed header, skipped like any other, its body with
// it); a header line longer than maxHeaderLine or a header block of more than maxHeaderLines lines
// is malformed too.
const (
	MaxFrame       = 64 << 20
	maxHeaderLine  = 4 << 10
	maxHeaderLines = 32
	readChunk      = 32 << 10
	// keepBody is the largest body buffer kept for the next frame; a bigger one is dropped after
	// use so that one large frame does not pin its memory for the life of the host.
	keepBody = 1 << 20
	// DefaultStallTimeout is how long a frame may stop arriving half-way (after its first header
	// byte, before its last body byte) before the framing is declared lost.
	DefaultStallTimeout = 30 * time.Second
)

// ErrFraming is matched (errors.Is) by the error ReadFrame returns when the input lost its framing
// for good: the stream cannot find the next frame reliably, so it stops reading.
var ErrFraming = errors.New("lspconn: LSP framing lost")

// framingError is a fatal framing failure; its text is one sentence for a person.
type framingError struct{ msg string }

func (e *framingError) Error() string        { return e.msg }
func (e *framingError) Is(target error) bool { return target == ErrFraming }

// malformedError is a header the framer skips: it answers it and then resynchronises on the next
// "Content-Length:" in the input.
type malformedError struct{ msg string }

func (e *malformedError) Error() string { return e.msg }

var errStall = errors.New("stalled")

// embeddedHeader matches the end of a line that is an LSP Content-Length header. Valid JSON can
// never contain one followed by a raw newline (a raw newline is invalid inside a JSON string, and
// content-length is no JSON token outside one), so seeing it inside a body means the body's
// declared length was longer than the frame the editor sent and the next frame's header was read
// as body.
var embeddedHeader = regexp.MustCompile(`(?i)content-length[ \t]*:[ \t]*[0-9]+[ \t]*\r?$`)

// source hands the bytes of r to the framer in chunks. Waiting for the rest of a frame must be
// able to time out, and Close must be able to stop a wait:
//   - a reader with read deadlines that work (a pipe or socket the runtime polls: `switchboard
//     serve` makes its stdin one on Linux) is read directly on the goroutine asking for the next
//     frame, with a deadline only while a frame is half-way in, and Close ends a read by moving
//     the deadline to now;
//   - any other reader (a blocking stdin, a terminal, a test's pipe) is read by a goroutine of its
//     own, which hands each chunk over through a channel: one goroutine hand-off per read, what
//     the direct mode saves on every message.
//
// At most two chunk buffers exist (one in the direct mode), so memory does not follow input.
type source struct {
	chunks chan []byte
	free   chan []byte
	quit   chan struct{}
	err    error // set before chunks is closed

	held []byte // the buffer cur came from, returned to free when cur is used up
	cur  []byte

	direct   deadlineReader // the direct mode, else nil
	buf      []byte         // the direct mode's one buffer
	deadline bool           // the direct mode has a read deadline set
}

// deadlineReader is a reader whose reads can time out and be ended from another goroutine.
type deadlineReader interface {
	io.Reader
	SetReadDeadline(time.Time) error
}

func newSource(r io.Reader) *source {
	if d, ok := r.(deadlineReader); ok && d.SetReadDeadline(time.Time{}) == nil {
		return &source{direct: d, buf: make([]byte, readChunk), quit: make(chan struct{})}
	}
	s := &source{chunks: make(chan []byte), free: make(chan []byte, 2), quit: make(chan struct{})}
	s.free <- make([]byte, readChunk)
	s.free <- make([]byte, readChunk)
	go s.loop(r)
	return s
}

func (s *source) loop(r io.Reader) {
	defer close(s.chunks)
	for {
		var buf []byte
		select {
		case buf = <-s.free:
		case <-s.quit:
			s.err = io.EOF
			return
		}
		n, err := r.Read(buf)
		if n > 0 {
			select {
			case s.chunks <- buf[:n]:
			case <-s.quit:
				s.err = io.EOF
				return
			}
		} else {
			s.free <- buf
		}
		if err != nil {
			s.err = err
			return
		}
	}
}

// fillDirect is fill in the direct mode.
func (s *source) fillDirect(stall time.Duration) error {
	for {
		if s.err != nil {
			return s.err
		}
		switch {
		case stall > 0:
			_ = s.direct.SetReadDeadline(time.Now().Add(stall)) // ignore error: it worked in newSource
			s.deadline = true
		case s.deadline:
			_ = s.direct.SetReadDeadline(time.Time{}) // ignore error: as above
			s.deadline = false
		}
		// After the deadline is set: close closes quit before it moves the deadline to now, so
		// either quit is seen here or the read below ends at once.
		select {
		case <-s.quit:
			s.err = io.EOF
			return s.err
		default:
		}
		n, err := s.direct.Read(s.buf)
		if err != nil && n == 0 {
			select {
			case <-s.quit: // close moved the deadline
				s.err = io.EOF
				return s.err
			default:
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return errStall
			}
			s.err = err
			return err
		}
		if err != nil {
			s.err = err // after these bytes
		}
		if n > 0 {
			s.cur = s.buf[:n]
			return nil
		}
	}
}

// fill makes cur non-empty. stall > 0 bounds the wait (mid-frame).
func (s *source) fill(stall time.Duration) error {
	if len(s.cur) > 0 {
		return nil
	}
	if s.direct != nil {
		return s.fillDirect(stall)
	}
	if s.held != nil {
		s.free <- s.held
		s.held = nil
	}
	var timeout <-chan time.Time
	if stall > 0 {
		t := time.NewTimer(stall)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case b, ok := <-s.chunks:
		if !ok {
			return s.err
		}
		s.held, s.cur = b[:cap(b)], b
		return nil
	case <-timeout:
		return errStall
	case <-s.quit:
		// Closed while the reader may still be blocked in Read (a blocking os.Stdin cannot be
		// interrupted): reading ends here, the goroutine ends with the process.
		return io.EOF
	}
}

func (s *source) close() {
	select {
	case <-s.quit:
	default:
		close(s.quit)
		if s.direct != nil {
			_ = s.direct.SetReadDeadline(time.Now()) // ignore error: ends a read in progress
		}
	}
}

// framer reads LSP frames (Content-Length header framing) from a source:
//
//   - a header block that is malformed (a line without a colon, a Content-Length that is not a
//     positive number, declares more than MaxFrame bytes or overflows any integer, no
//     Content-Length at all, a line or block over its bound) is skipped: the framer reports it
//     once and then looks for the next "Content-Length:" in the input, wherever it is (the body of
//     such a frame has no length to trust, so resync cannot be by length; scanning holds none of it);
//   - a body that turns out to hold the next frame's header, or a frame that stops arriving
//     half-way for the stall timeout, is fatal: the bytes already taken may belong to later
//     frames, so no boundary found after that is trustworthy.
//
// The body buffer grows with the bytes that arrive, never past the declared length; it is valid
// until the next call.
type framer struct {
	src    *source
	stall  time.Duration
	resync bool
	line   []byte
	body   []byte
}

func (f *framer) next() ([]byte, int64, error) {
	if cap(f.body) > keepBody {
		f.body = nil
	}
	length, have := 0, false
	var consumed int64
	mid := false // after the first byte of a frame, waiting is bounded by the stall timeout
	wait := func() time.Duration {
		if mid {
			return f.stall
		}
		return 0
	}
	malformed := func(format string, args ...any) ([]byte, int64, error) {
		f.resync = true
		return nil, 0, &malformedError{fmt.Sprintf(format, args...)}
	}
	setLength := func(value []byte) error {
		n, ok, tooBig := parseLength(value)
		switch {
		case tooBig:
			return &malformedError{fmt.Sprintf("Content-Length %q is over the %d MiB limit", clip(bytes.TrimSpace(value)), MaxFrame>>20)}
		case !ok:
			return &malformedError{fmt.Sprintf("Content-Length %q is not a positive number", clip(value))}
		case have && n != length:
			return &malformedError{"two different Content-Length headers"}
		}
		length, have = n, true
		return nil
	}
	checkLength := func(value []byte) ([]byte, int64, error) {
		err := setLength(value)
		if _, ok := err.(*malformedError); ok { // setLength's own, never wrapped (errors.As would allocate per frame)
			f.resync = true
		}
		return nil, 0, err
	}

	if f.resync {
		n, err := f.scan()
		if err != nil {
			return nil, 0, err
		}
		f.resync = false
		consumed += n
		mid = true
		value, ln, err := f.readLine(wait())
		consumed += int64(ln)
		if err != nil {
			return f.lineErr(err, true)
		}
		if _, _, err := checkLength(value); err != nil {
			return nil, 0, err
		}
	}
	for lines := 0; ; lines++ {
		if lines >= maxHeaderLines {
			return malformed("LSP header block longer than %d lines", maxHeaderLines)
		}
		line, n, err := f.readLine(wait())
		consumed += int64(n)
		if err != nil {
			return f.lineErr(err, mid || n > 0)
		}
		mid = true
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return malformed("LSP header line without a colon")
		}
		if bytes.EqualFold(bytes.TrimSpace(name), []byte("content-length")) {
			if _, _, err := checkLength(value); err != nil {
				return nil, 0, err
			}
		}
	}
	if !have {
		return malformed("LSP header without Content-Length")
	}
	body, err := f.readBody(length)
	if err != nil {
		return nil, 0, err
	}
	return body, consumed + int64(length), nil
}

// lineErr turns a readLine error into the frame error.
func (f *framer) lineErr(err error, mid bool) ([]byte, int64, error) {
	var m *malformedError
	switch {
	case errors.As(err, &m):
		f.resync = true
	case err == io.EOF && mid:
		err = io.ErrUnexpectedEOF
	case err == errStall:
		err = &framingError{fmt.Sprintf("the editor stopped sending half-way through an LSP header for %s; closing the connection", f.stall)}
	}
	return nil, 0, err
}

// readLine reads one header line (without its \r\n or \n); n counts the bytes consumed.
func (f *framer) readLine(stall time.Duration) (line []byte, n int, err error) {
	f.line = f.line[:0]
	for {
		if err := f.src.fill(stall); err != nil {
			return nil, n, err
		}
		// After the first byte the line is under way: bound the wait for the rest of it.
		i := bytes.IndexByte(f.src.cur, '\n')
		take := len(f.src.cur)
		if i >= 0 {
			take = i + 1
		}
		if len(f.line)+take > maxHeaderLine+2 {
			take = maxHeaderLine + 2 - len(f.line)
			f.line = append(f.line, f.src.cur[:take]...)
			f.src.cur = f.src.cur[take:]
			n += take
			return nil, n, &malformedError{fmt.Sprintf("LSP header line longer than %d bytes", maxHeaderLine)}
		}
		f.line = append(f.line, f.src.cur[:take]...)
		f.src.cur = f.src.cur[take:]
		n += take
		if i >= 0 {
			line = bytes.TrimSuffix(bytes.TrimSuffix(f.line, []byte("\n")), []byte("\r"))
			return line, n, nil
		}
		if stall == 0 {
			stall = f.stall
		}
	}
}

// scan discards input up to and including the next "content-length:" (any case).
func (f *framer) scan() (int64, error) {
	const pat = "content-length:"
	matched := 0
	var n int64
	for {
		if err := f.src.fill(0); err != nil {
			return n, err
		}
		for i, c := range f.src.cur {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			switch {
			case c == pat[matched]:
				matched++
			case c == pat[0]:
				matched = 1
			default:
				matched = 0
			}
			if matched == len(pat) {
				f.src.cur = f.src.cur[i+1:]
				return n + int64(i+1), nil
			}
		}
		n += int64(len(f.src.cur))
		f.src.cur = nil
	}
}

// readBody reads length bytes, growing the buffer only as they arrive.
func (f *framer) readBody(length int) ([]byte, error) {
	f.body = f.body[:0]
	for len(f.body) < length {
		if err := f.src.fill(f.stall); err != nil {
			switch err {
			case io.EOF:
				err = io.ErrUnexpectedEOF
			case errStall:
				err = &framingError{fmt.Sprintf("the editor stopped sending half-way through a frame (%d of %d bytes) for %s; closing the connection", len(f.body), length, f.stall)}
			}
			return nil, err
		}
		take := min(len(f.src.cur), length-len(f.body))
		if need := len(f.body) + take; need > cap(f.body) {
			grown := make([]byte, len(f.body), min(length, max(need, 2*cap(f.body), 64<<10)))
			copy(grown, f.body)
			f.body = grown
		}
		start := len(f.body)
		f.body = append(f.body, f.src.cur[:take]...)
		f.src.cur = f.src.cur[take:]
		if embedsHeader(f.body, start) {
			return nil, &framingError{fmt.Sprintf("a frame's Content-Length (%d) was longer than the frame: the next frame's header arrived inside its body; closing the connection", length)}
		}
	}
	return f.body, nil
}

// embedsHeader reports whether a line ending in body[from:] is a Content-Length header.
func embedsHeader(body []byte, from int) bool {
	for i := from; i < len(body); i++ {
		j := bytes.IndexByte(body[i:], '\n')
		if j < 0 {
			return false
		}
		i += j
		start := max(0, i-96)
		if k := bytes.LastIndexByte(body[start:i], '\n'); k >= 0 {
			start += k + 1
		}
		if embeddedHeader.Match(body[start:i]) {
			return true
		}
	}
	return false
}

// parseLength parses a Content-Length value: digits with optional surrounding blanks.
func parseLength(value []byte) (n int, ok, tooBig bool) {
	v := bytes.Trim(value, " \t")
	if len(v) == 0 {
		return 0, false, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false, false
		}
		if n > MaxFrame {
			return 0, false, true
		}
		n = n*10 + int(c-'0')
	}
	if n > MaxFrame {
		return 0, false, true
	}
	return n, n > 0, false
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}
