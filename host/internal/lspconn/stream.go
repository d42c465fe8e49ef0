// Package lspconn is the host's JSON-RPC plumbing on top of go.lsp.dev/jsonrpc2 v1: a framing
// stream that survives malformed frames, the payload codec, and a small method router that keeps
// notifications in wire order, runs slow requests concurrently, honours $/cancelRequest and turns
// handler panics into error replies.
//
// jsonrpc2 v1 ends the whole connection on a frame it cannot decode and on a panicking or failing
// notification handler; an editor must never be able to end the host that way (PROTOCOL.md section
// 1, "Robustness"), so every such case is caught here before jsonrpc2 sees it.
package lspconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// frameRW is jsonrpc2's raw-frame extension, implemented by its built-in framers. Our Stream
// implements it too, so jsonrpc2 keeps its frame fast path (and batch support) over our wrapper.
type frameRW interface {
	ReadFrame(ctx context.Context) ([]byte, int64, error)
	WriteFrame(ctx context.Context, data []byte) (int64, error)
}

// Direction of a frame seen by a Tap.
const (
	In  = "in"
	Out = "out"
)

// StreamOptions configures NewStream.
type StreamOptions struct {
	Logger *slog.Logger
	// Tap, when set, sees every frame body read or written (for test logs). It must not retain body.
	Tap func(dir string, body []byte)
	// StallTimeout bounds how long a frame may stop arriving half-way before the framing is
	// declared lost (0: DefaultStallTimeout).
	StallTimeout time.Duration
	// Busy, when set, reports that more frames are about to be written (other calls' replies,
	// their servers' answers already in hand): a frame written then waits for them (one yield)
	// and goes out with them in one write. Nil: every frame is written at once.
	Busy func() bool
}

// Stream is a jsonrpc2.Stream with LSP header framing that answers a frame whose body is not valid
// JSON with a -32700 Parse error (id null), and a valid JSON body that is not a JSON-RPC message
// with -32600, then keeps reading. A malformed header is answered the same way and skipped up to
// the next Content-Length header. When the framing is lost for good (see framer) it answers once,
// stops reading and Err reports why: the host must never stay up unable to read.
type Stream struct {
	inner jsonrpc2.Stream // for Close; reads go through fr, writes through out
	out   outbox
	leave leaver // rwc, when its writes can be ended (Leave); nil otherwise
	fr    *framer
	log   *slog.Logger
	tap   func(string, []byte)

	doneOnce sync.Once
	done     chan struct{}
	fatal    error // set before done is closed
}

var (
	_ jsonrpc2.Stream = (*Stream)(nil)
	_ frameRW         = (*Stream)(nil)
)

// NewStream wraps rwc with LSP Content-Length framing.
func NewStream(rwc io.ReadWriteCloser, opts StreamOptions) *Stream {
	inner := jsonrpc2.NewHeaderStream(rwc)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	stall := opts.StallTimeout
	if stall <= 0 {
		stall = DefaultStallTimeout
	}
	fr := &framer{src: newSource(rwc), stall: stall}
	l, _ := rwc.(leaver)
	return &Stream{inner: inner, out: outbox{w: rwc, busy: opts.Busy}, leave: l, fr: fr, log: log, tap: opts.Tap, done: make(chan struct{})}
}

// leaver is a connection whose writes can be ended for good, including one that is waiting
// (cmd/switchboard's stdin and stdout: a write deadline in the past that nothing moves again).
type leaver interface{ Leave() error }

// Leave ends the writes to the peer for good: a write that waits for it (the peer stopped
// reading and its pipe is full) fails now, where the connection can end it (see leaver), and
// every later write fails at once. The host calls it as it leaves (the editor's input ended,
// exit, a signal): what it still writes then is news nobody waits for, and a write waiting for
// an editor that stopped reading held the registry's close, and the host, for good
// (TestExitEditorStoppedReading).
func (s *Stream) Leave() {
	s.out.leave()
	if s.leave != nil {
		_ = s.leave.Leave() // ignore error: a connection without deadlines keeps waiting, as before
	}
}

// ReadFrame returns the next frame that jsonrpc2 can decode, answering the bad ones itself.
func (s *Stream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	// The goroutine that reads a frame is the one that runs the request in it (jsonrpc2 hands the
	// reading on to a new goroutine when the request goes async), so its stack is grown here,
	// while it waits for the frame, rather than on the request's way to the server.
	growStack()
	resynced := true
	for {
		body, n, err := s.fr.next()
		if malformed := asMalformed(err); malformed != nil {
			// Skip to the next header; answer once per bad stretch, not per line.
			if resynced {
				s.log.Warn("lsp: skipping input with a malformed LSP header", "error", malformed.msg)
				s.writeError(ctx, nil, jsonrpc2.ParseError, "Parse error: malformed LSP header ("+malformed.msg+")")
			}
			resynced = false
			continue
		}
		resynced = true
		if errors.Is(err, ErrFraming) {
			// Warn, not Error: the process's one stderr line is the caller's (cmd prints Serve's
			// error); this line reaches the log file and the editor's output.
			s.log.Warn("lsp: " + err.Error())
			s.writeError(ctx, nil, jsonrpc2.ParseError, "Parse error: "+err.Error())
			s.end(err)
		}
		if err != nil {
			s.end(nil)
			return nil, 0, err
		}
		if s.tap != nil {
			s.tap(In, body)
		}
		if code, msg, id := check(body); code != 0 {
			s.log.Warn("lsp: rejected a frame", "code", code, "error", msg)
			s.writeError(ctx, id, code, msg)
			continue
		}
		return body, n, nil
	}
}

// asMalformed is err's *malformedError, or nil. Its errors.As target escapes (errors.As takes
// an any), so it is declared past the nil check: a frame read well costs no allocation for it.
func asMalformed(err error) *malformedError {
	if err == nil {
		return nil
	}
	var malformed *malformedError
	if errors.As(err, &malformed) {
		return malformed
	}
	return nil
}

// check reports why jsonrpc2 would refuse body (which would end the connection), or code 0.
func check(body []byte) (code jsonrpc2.Code, msg string, id json.RawMessage) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if !json.Valid(body) {
			return jsonrpc2.ParseError, "Parse error: invalid JSON", nil
		}
		// LSP has no batches; answering one with an array would make a peer's JSON-RPC library
		// answer our responses in turn.
		return jsonrpc2.InvalidRequest, "Invalid Request: batches are not supported", nil
	}
	if plainRequest(body) {
		return 0, "", nil
	}
	// jsonrpc2's own single-pass scanner first: what it accepts here it accepts in the read loop,
	// and the common case pays no second (reflection-based) validation pass.
	_, derr := jsonrpc2.DecodeMessage(body)
	if derr == nil {
		return 0, "", nil
	}
	if !json.Valid(body) {
		var v any
		detail := "invalid JSON"
		if err := json.Unmarshal(body, &v); err != nil {
			detail = err.Error()
		}
		return jsonrpc2.ParseError, "Parse error: " + detail, nil
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &probe) == nil && validID(probe.ID) {
		id = probe.ID
	}
	return jsonrpc2.InvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message (" + derr.Error() + ")", id
}

// plainRequest reports whether body is a request that jsonrpc2.DecodeMessage accepts, found
// without its allocation (the message it builds, only to be dropped here): jsonrpc2's borrowed
// scan (ScanMessageView) runs DecodeMessage's scan and checks, and where neither the method nor
// the id has an escape, their checks are the same too (DecodeMessage unquotes escaped ones; the
// view only looks at them). Anything else (a response, an escape) is for DecodeMessage to judge
// (FuzzPlainRequest).
func plainRequest(body []byte) bool {
	v, err := jsonrpc2.ScanMessageView(body)
	if err != nil || v.Kind != jsonrpc2.MessageViewCall && v.Kind != jsonrpc2.MessageViewNotification {
		return false
	}
	return bytes.IndexByte(v.MethodRaw, '\\') < 0 && bytes.IndexByte(v.IDRaw, '\\') < 0
}

func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	default:
		_, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil
	}
}

// writeError writes an error response with the given raw id (nil = null).
func (s *Stream) writeError(ctx context.Context, id json.RawMessage, code jsonrpc2.Code, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	m, _ := json.Marshal(msg) // ignore error: a string always marshals
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, m)
	if _, err := s.WriteFrame(ctx, body); err != nil {
		s.log.Debug("lsp: writing an error reply failed", "error", err)
	}
}

// WriteFrame writes one already-encoded frame body. When the peer is gone from the other end
// (EPIPE, ECONNRESET: the editor closed what the host writes to), nothing the host says can
// reach it any more: the stream ends as when its input ends (Done), instead of reading on, mute.
func (s *Stream) WriteFrame(ctx context.Context, data []byte) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if s.tap != nil {
		s.tap(Out, data)
	}
	n, err := s.out.write(data)
	if brokenPipe(err) {
		select {
		case <-s.done:
		default:
			// Info, not Warn: warnings also go to the editor, through this very output.
			s.log.Info("lsp: the editor closed the host's output; stopping", "error", err)
		}
		s.end(nil)
	}
	return int64(n), err
}

// end ends the stream, once: fatal (nil when the peer went away) is what Err reports.
func (s *Stream) end(fatal error) {
	s.doneOnce.Do(func() {
		s.fatal = fatal
		close(s.done)
	})
}

// Read implements jsonrpc2.Stream (jsonrpc2 prefers ReadFrame; this is the fallback).
func (s *Stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	body, n, err := s.ReadFrame(ctx)
	if err != nil {
		return nil, 0, err
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	if err != nil {
		return nil, 0, err
	}
	return msg, n, nil
}

// Write implements jsonrpc2.Stream (jsonrpc2 writes its replies through it). The message is
// encoded into a reused buffer: WriteFrame copies the body into the outbox before it returns
// (and a Tap must not retain it), so nothing holds the buffer after.
func (s *Stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	bp := encodeBufs.Get().(*[]byte)
	body := jsonrpc2.AppendMessage((*bp)[:0], msg)
	n, err := s.WriteFrame(ctx, body)
	if cap(body) <= keptBuffer { // a big result's buffer is given back, as the outbox's is
		*bp = body[:0]
		encodeBufs.Put(bp)
	}
	return n, err
}

// encodeBufs are Write's buffers.
var encodeBufs = sync.Pool{New: func() any { return new([]byte) }}

// Close closes the underlying connection.
func (s *Stream) Close() error {
	s.fr.src.close()
	return s.inner.Close()
}

// Done is closed when the stream ends for good: reading ended (the peer closed the connection,
// it broke, or the framing was lost) or the peer stopped taking what is written (WriteFrame).
func (s *Stream) Done() <-chan struct{} { return s.done }

// Err is, once Done is closed, the reason reading stopped when it was a lost framing (matching
// ErrFraming), or nil when the peer closed the connection. The host then exits non-zero.
func (s *Stream) Err() error {
	select {
	case <-s.done:
		return s.fatal
	default:
		return nil
	}
}
