package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/jsonscan"
	"github.com/switchboard-dev/switchboard/mcpbridge/rawio"
)

// DefaultMaxFrame bounds one line (one JSON-RPC message) from a stdio server. A 50 MB result
// fits; a server that writes an endless line or a larger frame fails with errFrameTooLarge after
// at most this much memory. Registry.maxFrame overrides it (tests).
const DefaultMaxFrame = 64 << 20

// Timeouts of the stdio shutdown sequence: close stdin, wait, SIGTERM the group, wait, SIGKILL.
var (
	stdinGrace = 300 * time.Millisecond
	termGrace  = 2 * time.Second
	exitGrace  = 200 * time.Millisecond // after the process exits, for the last output to be read
)

// Transport is the transport.Interface for a stdio server. It replaces mcp-go's
// transport.Stdio, which reads unbounded lines, copies each frame several times, inherits the
// host's whole environment, does not own a process group and notices a dead child only when its
// stdout closes. Here the host builds the exec.Cmd (explicit env, own process group), reads
// bounded frames (frame.go) into one buffer that the response aliases, and watches the process
// itself.
type Transport struct {
	command string
	args    []string
	env     []string
	dir     string
	log     *slog.Logger
	limit   int // maximum frame size

	// startMu orders Start against Close: a Close that comes first stops Start from spawning, and
	// one that comes after sees every field Start set.
	startMu sync.Mutex
	cmd     *exec.Cmd
	tag     string     // ownerVar value of this start: finds the child's strays (proc_owner.go)
	stdin   *os.File   // write end of the child's stdin
	stdout  *os.File   // read end of the child's stdout
	in      rawio.Conn // stdin as written: raw system calls where rawio takes it
	errR    *os.File   // read end of the child's stderr
	frames  *FrameReader
	stderr  *ring

	// Sandbox, when set before Start, confines the child (mcpbridge/sandbox): Start resolves the
	// profile against the command line and refuses to run the server where it cannot confine it.
	Sandbox *Sandbox
	box     *sandbox.Sandbox // the running confinement (its proxy), closed when the child is gone
	plan    *sandbox.Plan

	blockedMu sync.Mutex
	blocked   []string // the latest refusals (Blocked)

	// open, when set, connects to a shared copy of the server instead of starting it (Shared);
	// stream is that connection once Start made it.
	open   OpenStream
	stream Stream
	// started is what Start made (the stream, or the child's pid), for what others ask while a
	// start may still be running (Pid, StderrTail): a start that outlives the registry's start-up
	// timeout goes on while the registry reports the failure.
	started atomic.Pointer[startedAs]

	writeMu sync.Mutex
	// Stall bounds a write that has no deadline of its own (a notification, an answer to the
	// server's request): a child that takes none of it for this long stopped reading its stdin,
	// and is stopped (0: unbounded). The registry sets the server's call timeout.
	Stall time.Duration

	pendingMu sync.Mutex
	// The calls sent and not answered yet: by their string id (ours, "sb-N"), so that an answer
	// finds its call by the id's bytes, without building an id; and the others (mcp-go's own int64
	// ids) by pendingKey.
	pending      map[string]*pendingCall
	pendingOther map[any]*pendingCall
	// One timer watches the deadlines of all pending calls (expire): armed for the earliest when
	// none is armed, it re-arms itself when it fires. Calls one after another arm it about once
	// per call timeout, instead of a timer (and a context) of their own each.
	watch      *time.Timer
	watchArmed bool
	watchAt    time.Time // when the armed timer fires

	handlerMu sync.RWMutex
	onNotify  func(mcp.JSONRPCNotification)
	onRequest transport.RequestHandler

	servingMu sync.Mutex
	serving   map[string]context.CancelFunc // the server's requests we are answering, by id

	failOnce sync.Once
	done     chan struct{} // closed when the connection is over (process died, bad frame, Close)
	failErr  error         // why; set before done is closed

	exited   chan struct{} // closed when cmd.Wait returned
	readDone chan struct{} // closed when the read loop ended
	errDone  chan struct{} // closed when stderr reached EOF (or was closed)

	closeOnce sync.Once
	closing   chan struct{}
}

var (
	_ transport.Interface              = (*Transport)(nil)
	_ transport.BidirectionalInterface = (*Transport)(nil)
)

func NewTransport(command string, args, env []string, dir string, limit int, log *slog.Logger) *Transport {
	return &Transport{
		command: command, args: args, env: env, dir: dir, log: log, limit: limit,
		stderr:       newRing(64 << 10),
		pending:      map[string]*pendingCall{},
		pendingOther: map[any]*pendingCall{},
		done:         make(chan struct{}),
		exited:       make(chan struct{}),
		readDone:     make(chan struct{}),
		errDone:      make(chan struct{}),
		closing:      make(chan struct{}),
	}
}

// Stream is a connection to a copy of the server that runs elsewhere: a shared server held by
// the broker daemon (mcpbridge/broker.Conn). It carries the same newline-delimited JSON-RPC as
// a child's pipes; the transport reads and writes it as it would them.
type Stream interface {
	io.ReadWriteCloser
	SetWriteDeadline(time.Time) error
	// ServerPid is the server's process id (it is not this process's child).
	ServerPid() int
	// ExitInfo is why the server ended and the end of its stderr, as its holder said ("": not
	// said, as when the holder itself went away).
	ExitInfo() (reason, stderrTail string)
}

// OpenStream connects to a shared copy of the server.
type OpenStream func(ctx context.Context) (Stream, error)

// Shared makes Start connect through open. When open fails (no daemon can be reached or
// started, the socket directory is unsafe, the instance cannot start there), Start starts the
// server itself as it would without sharing, and logs the reason once.
func (t *Transport) Shared(open OpenStream) { t.open = open }

// SharedStream is the stream to the shared copy of the server (nil: it runs here).
func (t *Transport) SharedStream() Stream {
	t.startMu.Lock()
	defer t.startMu.Unlock()
	return t.stream
}

// streamConn is a Stream as the writer needs it.
type streamConn struct{ Stream }

func (streamConn) SetReadDeadline(time.Time) error { return nil }

// Start spawns the child (or connects to its shared copy, see Shared). The child lives until
// Close or its own death, not until ctx ends.
func (t *Transport) Start(ctx context.Context) error {
	t.startMu.Lock()
	defer t.startMu.Unlock()
	select {
	case <-t.closing:
		return errors.New("transport closed before the server started")
	default:
	}
	if t.open != nil {
		s, err := t.open(ctx)
		if err == nil {
			t.stream = s
			t.started.Store(&startedAs{stream: s})
			t.in = streamConn{s}
			t.frames = &FrameReader{r: bufio.NewReaderSize(s, 8<<10), limit: t.limit}
			close(t.errDone) // no stderr pipe: the holder sends the tail when the server ends
			go t.readLoop()
			return nil
		}
		t.log.Warn("shared server unavailable; running it in this window", "err", err)
	}
	cmd := exec.Command(t.command, t.args...)
	tag := newOwnerTag()
	cmd.Env = append(slices.Clip(t.env), ownerVar+"="+tag)
	cmd.Dir = t.dir
	ownProcessGroup(cmd)
	if t.Sandbox != nil {
		if err := t.confine(cmd); err != nil {
			return fmt.Errorf("start %s: %w", t.command, err)
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = startChild(cmd) // with a parent-death signal where the OS has one (proc_*.go)
	// The child has its copies now (or never will): close ours so EOF means the child is done.
	inR.Close()
	outW.Close()
	errW.Close()
	if err == nil && t.box != nil {
		// The launcher confines itself, then becomes the server, or says why it did not (and exits).
		// One that says nothing is ended when ctx ends (its window closes): nothing else ends the
		// wait for its word, and Close, which waits for Start, waited with it for good
		// (TestStartEndsWhenTheLauncherNeverAnswers).
		stop := context.AfterFunc(ctx, func() { _ = killGroup(cmd.Process) }) // ignore error: gone already
		err = t.box.Started()
		if !stop() && err == nil {
			err = fmt.Errorf("sandbox launcher: %w", ctx.Err())
		}
		if err != nil {
			cmd.Wait() // ignore error: the launcher exits by itself after a refusal, or was killed
		}
	}
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		if t.box != nil {
			t.box.Close()
		}
		return fmt.Errorf("start %s: %w", t.command, err)
	}
	t.cmd, t.tag, t.stdin, t.stdout, t.errR = cmd, tag, inW, outR, errR
	t.started.Store(&startedAs{pid: cmd.Process.Pid})
	// The pipes are polled and non-blocking (os.Pipe): each read and write of a call is a raw
	// system call (rawio), so a call does not wake the runtime's monitor thread.
	t.in = rawio.Or(inW)
	// 8 KiB, not 64: one buffer per server for the host's life, and a tool result of any size
	// streams through it. With the stderr buffer below: 30 servers, 1.4 MB less host RSS; the 50 MB
	// result's time stayed about 0.33x a bare client's.
	t.frames = &FrameReader{r: bufio.NewReaderSize(rawio.Or(outR), 8<<10), limit: t.limit}
	go t.drainStderr()
	go t.readLoop()
	go t.wait()
	return nil
}

// Done is closed when the connection is over; Err says why.
func (t *Transport) Done() <-chan struct{} { return t.done }

// Err is the reason the connection ended (nil while it runs).
func (t *Transport) Err() error {
	select {
	case <-t.done:
		return t.failErr
	default:
		return nil
	}
}

// startedAs is what Start made: a connection to a shared server, or a child.
type startedAs struct {
	stream Stream
	pid    int
}

// Pid is the started child's process ID (the leader of its process group), 0 before Start.
// The fault tests kill it for real.
func (t *Transport) Pid() int {
	switch st := t.started.Load(); {
	case st == nil:
		return 0
	case st.stream != nil:
		return st.stream.ServerPid()
	default:
		return st.pid
	}
}

// StderrTail is the end of what the child wrote to stderr. Once the connection is over it
// first lets the last lines arrive (briefly: a grandchild may hold the pipe open).
func (t *Transport) StderrTail() string {
	if st := t.started.Load(); st != nil && st.stream != nil {
		_, tail := st.stream.ExitInfo()
		return tail
	}
	select {
	case <-t.done:
		select {
		case <-t.errDone:
		case <-time.After(exitGrace):
		}
	default:
	}
	return t.stderr.Tail(2 << 10)
}

// fail ends the connection with err (the first reason wins).
func (t *Transport) fail(err error) {
	t.failOnce.Do(func() {
		t.failErr = err
		close(t.done)
		t.pendingMu.Lock()
		if t.watch != nil {
			t.watch.Stop()
		}
		t.pendingMu.Unlock()
	})
}

// pendingCall is a request sent and not answered yet. Whoever takes it out of the pending calls
// settles it, once: the read loop sets resp, the deadline watch sets timedOut, then either
// signals ch; a caller that gives up and finds it gone waits for that signal (forget). The
// response is kept here, so that a call costs one allocation for it and its channel's.
type pendingCall struct {
	id       mcp.RequestId // the request's: the response's ID when the server sent it back plainly
	ch       chan struct{} // capacity 1: signalled once, after resp or timedOut is set
	resp     Response
	timedOut bool
	deadline time.Time // zero: none (the caller's context decides)
}

// addLocked registers p under its id.
func (t *Transport) addLocked(p *pendingCall) {
	if s, ok := p.id.Value().(string); ok {
		t.pending[s] = p
		return
	}
	t.pendingOther[pendingKey(p.id)] = p
}

// takeLocked removes and returns the pending call with id (nil: none).
func (t *Transport) takeLocked(id mcp.RequestId) *pendingCall {
	if s, ok := id.Value().(string); ok {
		return t.takeStringLocked(s)
	}
	key := pendingKey(id)
	p := t.pendingOther[key]
	delete(t.pendingOther, key)
	return p
}

// takeStringLocked removes and returns the pending call whose id is the string s (nil: none).
// s may be string(b) of a []byte: the lookup does not allocate.
func (t *Transport) takeStringLocked(s string) *pendingCall {
	p := t.pending[s]
	if p != nil {
		delete(t.pending, p.id.Value().(string))
	}
	return p
}

// pendingKey is id as a key of pendingOther: its value (no string built per call), or its
// String for a value a map cannot take.
func pendingKey(id mcp.RequestId) any {
	switch v := id.Value().(type) {
	case string, int64, float64, nil:
		return v
	}
	return otherID(id.String())
}

// otherID keys an id of any other type apart from the string ids.
type otherID string

// ErrCallTimeout is a call that got no answer before its timeout.
var ErrCallTimeout = errors.New("mcpbridge: call timed out")

// watchLocked arms the deadline timer for at, unless it is armed for at or earlier.
func (t *Transport) watchLocked(at time.Time) {
	if t.watchArmed && !at.Before(t.watchAt) {
		return
	}
	t.watchArmed, t.watchAt = true, at
	if t.watch == nil {
		t.watch = time.AfterFunc(time.Until(at), t.expire)
	} else {
		t.watch.Reset(time.Until(at))
	}
}

// expire ends the pending calls whose deadline has passed and re-arms the timer for the earliest
// of the others.
func (t *Transport) expire() {
	now := time.Now()
	t.pendingMu.Lock()
	defer t.pendingMu.Unlock()
	t.watchArmed = false
	var next time.Time
	check := func(p *pendingCall) bool { // true: expired, and settled
		switch {
		case p.deadline.IsZero():
		case !p.deadline.After(now):
			p.timedOut = true
			p.ch <- struct{}{} // capacity 1, and the one who deletes the call is the one who sends
			return true
		case next.IsZero() || p.deadline.Before(next):
			next = p.deadline
		}
		return false
	}
	for key, p := range t.pending {
		if check(p) {
			delete(t.pending, key)
		}
	}
	for key, p := range t.pendingOther {
		if check(p) {
			delete(t.pendingOther, key)
		}
	}
	select {
	case <-t.done:
		return
	default:
	}
	if !next.IsZero() {
		t.watchLocked(next)
	}
}

func (t *Transport) wait() {
	awaitExit(t.cmd.Process) // in the poller, not in a thread blocked in wait4 (proc_linux.go)
	err := t.cmd.Wait()
	close(t.exited)
	// Let the read loop take whatever the child wrote before it died, then stop it even if a
	// grandchild still holds the pipe open.
	select {
	case <-t.readDone:
	case <-time.After(exitGrace):
	}
	reason := "process exited"
	if err != nil {
		reason = "process exited: " + err.Error()
	}
	t.fail(errors.New(reason))
	// The leader is gone: whatever it left in its group, or started in a session of its own, is an
	// orphan of a dead server.
	_ = killGroup(t.cmd.Process) // ignore error: best effort
	killOwned(t.tag)
	t.stdout.Close()
	if t.box != nil {
		t.box.Close()
	}
}

// stopServer stops a server that broke the protocol: its process group, or, shared, this
// window's connection to it (the daemon then cancels this window's calls; the others go on).
func (t *Transport) stopServer() {
	if t.stream != nil {
		t.stream.Close() // ignore error: closing is the point
		return
	}
	_ = killGroup(t.cmd.Process) // ignore error: best effort
}

// streamEnded is why a shared server's connection ended.
func (t *Transport) streamEnded() error {
	if reason, _ := t.stream.ExitInfo(); reason != "" {
		return errors.New("shared server: " + reason)
	}
	return errors.New("the shared-server daemon went away (killed or crashed); attaching again")
}

func (t *Transport) readLoop() {
	defer close(t.readDone)
	garbage := 0
	for {
		fr, err := t.frames.Next()
		if err != nil {
			switch {
			case errors.Is(err, errFrameTooLarge):
				t.fail(fmt.Errorf("server wrote a message over %d MiB on stdout: connection dropped", t.limit>>20))
				t.stopServer()
			case errors.Is(err, errFrameStructure):
				t.fail(fmt.Errorf("server wrote a line with over %d MiB outside JSON strings on stdout (not an MCP message): connection dropped", structureLimit>>20))
				t.stopServer()
			case t.stream != nil:
				t.fail(t.streamEnded())
			default:
				// EOF: the child closed stdout, usually because it exited; let wait report how.
				select {
				case <-t.exited: // wait reports the exit status
				case <-t.done:
				case <-time.After(exitGrace):
					t.fail(errors.New("server closed its stdout"))
				}
			}
			return
		}
		if !t.route(fr) {
			garbage++
			if garbage <= 3 {
				t.log.Warn("mcp server wrote a line that is not JSON-RPC on stdout; ignored", "line", preview(fr.Data))
			}
		}
	}
}

// Envelope is decoded from every frame; Result aliases the frame.
type Envelope struct {
	ID     *mcp.RequestId           `json:"id"`
	Method string                   `json:"method"`
	Result AliasRaw                 `json:"result"`
	Error  *mcp.JSONRPCErrorDetails `json:"error"`
}

// ScanEnvelope decodes the usual Envelope (a string id or none, a plain method) in one pass,
// as encoding/json would; false: decode it with encoding/json (see package jsonscan).
func ScanEnvelope(line []byte) (Envelope, bool) {
	env, id, ok := scanEnvelope(line)
	if ok && id.plain {
		v := mcp.NewRequestId(string(id.text))
		env.ID = &v
	}
	return env, ok
}

// plainID is an id that is a JSON string without escapes, as written (not yet a mcp.RequestId).
type plainID struct {
	text  []byte // between the quotes; aliases the line
	plain bool   // there is one
}

// scanEnvelope is ScanEnvelope leaving a string id as its bytes: when id.plain, env.ID is nil and
// id is what encoding/json would decode. A response to one of our calls (the read loop's every
// frame) then finds its call without building an id.
func scanEnvelope(line []byte) (env Envelope, id plainID, ok bool) {
	ok = jsonscan.Members(line, func(name, v []byte) bool {
		which, unsure := jsonscan.Which(name, "id", "method", "result", "error")
		switch {
		case unsure:
			return false
		case which == 0: // as *mcp.RequestId decodes it: null is no id; the last one wins
			env.ID, id = nil, plainID{}
			if string(v) == "null" {
				return true
			}
			text, ok := jsonscan.StringBytes(v)
			if !ok {
				return false // a number, an escape: rare (our own ids are plain strings)
			}
			id = plainID{text: text, plain: true}
		case which == 1:
			return jsonscan.SetString(&env.Method, v)
		case which == 2:
			env.Result = v
		case which == 3:
			if string(v) == "null" {
				env.Error = nil
				return true
			}
			if env.Error == nil {
				env.Error = new(mcp.JSONRPCErrorDetails)
			}
			if json.Unmarshal(v, env.Error) != nil {
				return false
			}
		}
		return true
	})
	return env, id, ok
}

// route dispatches one frame; false means it was not JSON-RPC.
func (t *Transport) route(fr Frame) bool {
	line := fr.Data
	env, id, ok := scanEnvelope(line)
	if !ok {
		var slow Envelope // its own variable: decoded into, it lives on the heap
		if err := json.Unmarshal(line, &slow); err != nil {
			return false
		}
		env, id = slow, plainID{}
	}
	switch {
	case env.Method != "" && env.ID == nil && !id.plain:
		var n mcp.JSONRPCNotification
		if err := json.Unmarshal(line, &n); err != nil {
			return false
		}
		if n.Method == string(mcp.MethodNotificationCancelled) {
			t.cancelServing(n.Params.AdditionalFields["requestId"])
		}
		t.handlerMu.RLock()
		h := t.onNotify
		t.handlerMu.RUnlock()
		if h != nil {
			h(n) // must not block: the registry's handler only hands off
		}
	case env.Method != "":
		var req transport.JSONRPCRequest
		var raw struct {
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(line, &req); err != nil || json.Unmarshal(line, &raw) != nil {
			return false
		}
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), RawParamsKey{}, raw.Params))
		key := req.ID.String()
		t.servingMu.Lock()
		if t.serving == nil {
			t.serving = map[string]context.CancelFunc{}
		}
		t.serving[key] = cancel
		t.servingMu.Unlock()
		go func() {
			defer func() {
				t.servingMu.Lock()
				delete(t.serving, key)
				t.servingMu.Unlock()
				cancel()
			}()
			t.serveRequest(ctx, req)
		}()
	case env.ID != nil || id.plain:
		var p *pendingCall
		t.pendingMu.Lock()
		if id.plain {
			p = t.takeStringLocked(string(id.text))
		} else {
			p = t.takeLocked(*env.ID)
		}
		t.pendingMu.Unlock()
		if p != nil {
			respID := p.id // the same string as the one sent back
			if env.ID != nil {
				respID = *env.ID
			}
			p.resp = Response{
				JSONRPCResponse: transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: respID, Result: json.RawMessage(env.Result), Error: env.Error},
				Frame:           fr,
			}
			answersInHand.Add(1)
			p.ch <- struct{}{}
			if t.frames.r.Buffered() == 0 {
				// The caller goes first, with its answer: this loop's next read finds the pipe
				// empty and waits, and that system call (with the poller's) would come before the
				// caller's reply. With frames still buffered it reads on, so that answers that came
				// together reach their callers together (the editor's replies go out in one write).
				runtime.Gosched()
			}
		}
	default:
		return false
	}
	return true
}

// serveRequest answers a server-to-client request (ping, roots/list ...).
// ctx ends when the server cancels the request (notifications/cancelled) or the connection ends.
func (t *Transport) serveRequest(ctx context.Context, req transport.JSONRPCRequest) {
	t.handlerMu.RLock()
	h := t.onRequest
	t.handlerMu.RUnlock()
	var resp *transport.JSONRPCResponse
	if h == nil {
		resp = transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, "method not found", nil)
	} else {
		ctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-t.done:
			case <-ctx.Done():
			}
			cancel()
		}()
		r, err := h(ctx, req)
		cancelled := ctx.Err() != nil && !t.isDone()
		cancel()
		switch {
		case cancelled:
			return // the server cancelled it: no answer is expected
		case err != nil:
			resp = transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil)
		case r == nil:
			return
		default:
			resp = r
		}
	}
	_ = t.writeJSON(context.Background(), resp) // ignore error: the connection is failing anyway
}

// writeJSON writes one frame. A write that cannot finish by ctx's deadline (a child that stopped
// reading its stdin) breaks the framing, so it fails the connection.
func (t *Transport) writeJSON(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	deadline, _ := ctx.Deadline() // zero: no deadline
	return t.writeLine(deadline, b)
}

// writeLine writes one message and its newline; b is one line of compact JSON, with room for the
// newline where it can (append). A server that does not take it by deadline (zero: none) is
// stopped.
func (t *Transport) writeLine(deadline time.Time, b []byte) error {
	b = append(b, '\n')
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	select {
	case <-t.done:
		return t.closedErr()
	default:
	}
	// A deadline only matters to a write that waits (the pipe is full), and arming one is a
	// change to the runtime's timers on every line: a raw pipe's non-blocking write goes first,
	// and only what it could not take is written under the deadline, cleared again after.
	if tw, ok := t.in.(tryWriter); ok && t.stream == nil {
		n := tw.TryWrite(b) // 0 on an error: the write below meets it
		if n == len(b) {
			return nil
		}
		b = b[n:]
		// ignore error: pipes support deadlines where it matters; a deadline left behind would
		// only send a later line this way
		defer t.stdin.SetWriteDeadline(time.Time{})
	}
	if deadline.IsZero() && t.Stall > 0 {
		deadline = time.Now().Add(t.Stall)
	}
	if t.stream != nil {
		_ = t.stream.SetWriteDeadline(deadline) // ignore error: a socket takes deadlines
	} else {
		_ = t.stdin.SetWriteDeadline(deadline) // ignore error: pipes support deadlines where it matters
	}
	if _, err := t.in.Write(b); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.fail(errors.New("server stopped reading its stdin"))
			t.stopServer()
			return t.closedErr()
		}
		return fmt.Errorf("write to server: %w", err)
	}
	return nil
}

// answersInHand counts the servers' answers handed to their callers (on a call's channel) and not
// yet taken, over every transport of the process (AnswersInHand).
var answersInHand atomic.Int64

// AnswersInHand reports how many calls have their server's answer waiting for them and have not
// taken it yet. Above zero, goroutines that will each write their caller's reply are about to
// run: a writer that can wait a moment for them (the host's LSP output) sends them together.
func AnswersInHand() int64 { return answersInHand.Load() }

// taken counts p's answer, signalled on its channel and received, as taken.
func taken(p *pendingCall) {
	if !p.timedOut {
		answersInHand.Add(-1)
	}
}

// tryWriter is a stdin that can write without waiting (rawio.File).
type tryWriter interface{ TryWrite([]byte) int }

func (t *Transport) closedErr() error {
	return fmt.Errorf("%w: %v", transport.ErrTransportClosed, t.failErr)
}

// Response is a response with the frame it came in (Result aliases frame.data).
type Response struct {
	transport.JSONRPCResponse
	Frame Frame
}

// SendRequest sends request and waits for its response, the connection's end or ctx.
func (t *Transport) SendRequest(ctx context.Context, request transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.RoundTrip(ctx, request)
	if err != nil {
		return nil, err
	}
	return &resp.JSONRPCResponse, nil
}

// RoundTrip is SendRequest keeping the frame, for the lean tools/call path.
func (t *Transport) RoundTrip(ctx context.Context, request transport.JSONRPCRequest) (*Response, error) {
	b, err := json.Marshal(request)
	if err != nil {
		return nil, err
	}
	return t.RoundTripLine(ctx, request.ID, b, 0)
}

// RoundTripLine sends one request already encoded (without its newline) and waits for its
// response, for at most timeout (0: as long as ctx lets it; after the timeout: ErrCallTimeout).
func (t *Transport) RoundTripLine(ctx context.Context, id mcp.RequestId, line []byte, timeout time.Duration) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := &pendingCall{id: id, ch: make(chan struct{}, 1)}
	if timeout > 0 {
		p.deadline = time.Now().Add(timeout)
	}
	t.pendingMu.Lock()
	t.addLocked(p)
	if timeout > 0 {
		t.watchLocked(p.deadline)
	}
	t.pendingMu.Unlock()
	// forget drops the call; when the read loop (or the deadline watch) took it first, that one
	// signals ch (capacity 1) without waiting: the signal is taken here so answersInHand stays
	// exact.
	forget := func() {
		t.pendingMu.Lock()
		mine := t.takeLocked(id) != nil
		t.pendingMu.Unlock()
		if !mine {
			<-p.ch
			taken(p)
		}
	}
	deadline, ok := ctx.Deadline()
	if timeout > 0 && (!ok || p.deadline.Before(deadline)) {
		deadline = p.deadline
	}
	if err := t.writeLine(deadline, line); err != nil {
		forget()
		return nil, err
	}
	settled := func() (*Response, error) {
		taken(p)
		if p.timedOut {
			return nil, ErrCallTimeout
		}
		return &p.resp, nil
	}
	select {
	case <-p.ch:
		return settled()
	case <-t.done:
		select {
		case <-p.ch:
			return settled()
		default:
		}
		forget()
		return nil, t.closedErr()
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}

func (t *Transport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	return t.writeJSON(ctx, n)
}

func (t *Transport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	t.handlerMu.Lock()
	t.onNotify = h
	t.handlerMu.Unlock()
}

func (t *Transport) SetRequestHandler(h transport.RequestHandler) {
	t.handlerMu.Lock()
	t.onRequest = h
	t.handlerMu.Unlock()
}

func (t *Transport) GetSessionId() string { return "" }

// Close ends the connection and the child's whole process group: stdin closed, a short grace,
// SIGTERM to the group, then SIGKILL to the group. It returns once the child has been reaped.
func (t *Transport) Close() error {
	t.closeOnce.Do(func() {
		t.startMu.Lock()
		close(t.closing)
		cmd, stdin, stdout, errR, stream := t.cmd, t.stdin, t.stdout, t.errR, t.stream
		t.startMu.Unlock()
		t.fail(errors.New("closed"))
		if stream != nil { // shared: the daemon cancels this window's calls; the server stays for others
			stream.Close() // ignore error: closing is the point
			<-t.readDone
			return
		}
		if cmd == nil { // never started: no stderr to drain
			close(t.errDone)
			return
		}
		stdin.Close() // not under writeMu: this also unblocks a writer stuck on a full pipe
		select {
		case <-t.exited:
		case <-time.After(stdinGrace):
			_ = terminateGroup(cmd.Process) // ignore error: SIGKILL follows
			select {
			case <-t.exited:
			case <-time.After(termGrace):
			}
		}
		_ = killGroup(cmd.Process) // ignore error: the group may be gone already
		<-t.exited
		waitGroupGone(cmd.Process, time.Second)
		killOwned(t.tag) // descendants that left the group (setsid) carry the marker still
		stdout.Close()
		errR.Close()
	})
	return nil
}

func (t *Transport) drainStderr() {
	defer close(t.errDone)
	var w io.Writer = t.stderr
	if t.plan != nil {
		w = &explainer{to: t.stderr, plan: t.plan, note: t.noteBlocked}
	}
	// A 2 KiB buffer instead of io.Copy's 32 KiB (os.File's WriteTo would bring its own): it is
	// held for the server's life, while the goroutine waits in Read.
	_, _ = io.CopyBuffer(w, struct{ io.Reader }{t.errR}, make([]byte, 2<<10)) // ignore error: ends when the pipe closes
}

func preview(b []byte) string {
	s := strings.TrimSpace(string(b[:min(len(b), 120)]))
	if len(b) > 120 {
		s += "..."
	}
	return s
}

// ring keeps the last size bytes written to it.
type ring struct {
	mu   sync.Mutex
	buf  []byte
	size int
}

func newRing(size int) *ring { return &ring{size: size} }

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if len(p) >= r.size {
		r.buf = append(r.buf[:0], p[len(p)-r.size:]...)
		return n, nil
	}
	if over := len(r.buf) + len(p) - r.size; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	r.buf = append(r.buf, p...)
	return n, nil
}

// Tail returns up to n bytes of the end, starting at a line boundary when there is one.
func (r *ring) Tail(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buf
	if len(b) > n {
		b = b[len(b)-n:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(string(b), "\n")
}

// RawParamsKey carries a server request's params as sent (key order kept) to the client's handlers.
type RawParamsKey struct{}

// RawParams returns the params of the server request that ctx serves, as sent (stdio only).
func RawParams(ctx context.Context) json.RawMessage {
	p, _ := ctx.Value(RawParamsKey{}).(json.RawMessage)
	return p
}

// cancelServing ends the handling of a server request the server cancelled.
func (t *Transport) cancelServing(id any) {
	var key string
	switch v := id.(type) {
	case string:
		key = mcp.NewRequestId(v).String()
	case float64:
		key = mcp.NewRequestId(int64(v)).String()
	default:
		return
	}
	t.servingMu.Lock()
	cancel := t.serving[key]
	t.servingMu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (t *Transport) isDone() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}
