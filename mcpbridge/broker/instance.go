package broker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/rawio"
)

// maxInflight caps the requests one attachment may have in flight on an instance, so that one
// window cannot grow the daemon's tables without bound.
const maxInflight = 256

// maxLate is how many ended requests' progress tokens an instance remembers.
const maxLate = 1024

// stall bounds a write to a child that takes none of it, or to a window that reads nothing: the
// child is stopped, the window's attachment closed.
var stall = 60 * time.Second

// instance is one shared server process and its one upstream MCP session. The daemon is its
// client; towards each attachment it acts as the server.
type instance struct {
	d   *daemon
	key string
	req Request // the first window's: the launch (equal for all), the protocol, capabilities

	ready chan struct{} // closed once start is over
	err   error         // why start failed; set before ready is closed
	init  []byte        // the initialize result, replayed to every attachment
	child *child
	// loopDone is closed when readLoop has ended the instance (set with child, before ready).
	loopDone chan struct{}

	// upMu guards the frames waiting for the child's stdin, in order, behind what it has not
	// taken yet: writeUp never waits for the child (it runs on the relay loop).
	upMu      sync.Mutex
	upQ       [][]byte
	upBytes   int
	upWriting bool // upWriter runs
	upDead    bool // the child's stdin failed: write nothing more

	// scratch is readLoop's buffer for the frames it rewrites for a window (used by fromServer
	// only, which runs on readLoop).
	scratch []byte

	dieOnce sync.Once

	// mu guards the routing tables and every attachment's inflight, calls and nextAsk.
	mu      sync.Mutex
	atts    map[*attachment]struct{}
	nextID  int64
	pending map[int64]*pending  // by upstream id
	tokens  map[string]*pending // by the daemon's progress token (JSON text)
	// late keeps the tokens of the last requests that ended, so that progress a server sends
	// after its result (mcp-go's stdio server does) still reaches the caller, as it would
	// in-window, and never anyone else: the daemon's tokens are never reused.
	late     map[string]*pending
	lateFIFO []string
	asked    map[string]*asked      // the server's requests routed to a window, by upstream id (JSON text)
	elicits  map[string]*attachment // url-mode elicitations, by elicitationId
	subs     map[string]*sub        // resource subscriptions, by uri
	// tasks are the MCP tasks windows started, by task id, with their owners (tasks.go);
	// taskOrder is their ids oldest first, and owned how many each owner has.
	tasks     map[string]*task
	taskOrder []string
	owned     map[*attachment]int
	linger    *time.Timer // runs while no window is attached
	gone      bool        // retired or exited: attaches no window
	// stopReason is set before a deliberate stop: why the windows lose the server.
	stopReason string
	// reattach: the daemon, not the server, ended it; the windows attach again (to a new daemon).
	reattach bool
	// stopped: a person stopped it on purpose (`switchboard daemon stop`): instanceExited says
	// so, and the windows show it stopped, not failed.
	stopped bool
	// windowsSeq numbers the switchboard/windowsChanged news (countWindowsLocked); in.mu.
	windowsSeq int64
	// refusedLogged: the daemon's log has said that a question of this server was refused.
	refusedLogged atomic.Bool
}

// pending is one request sent upstream.
type pending struct {
	att   *attachment // nil: the daemon's own
	down  string      // the window's id (JSON text; its key in att.calls)
	token string      // the daemon's progress token ("": none)
	orig  string      // the window's progress token (JSON text)
	then  func(ok bool)
	reply chan []byte // the daemon's own request waiting for its response
	// kind says what the daemon reads of the response (tasks.go); task and method are the task
	// a kindTask request names and its method.
	kind   uint8
	task   string
	method string
}

// asked is a server-to-client request routed to one window.
type asked struct {
	att    *attachment
	down   int64 // the id the window sees
	up     []byte
	method string
	elicit string // url mode: the elicitationId
}

// sub is one resource's subscribers.
type sub struct {
	atts     map[*attachment]bool
	upstream bool // the server confirmed the subscription
}

func newInstance(d *daemon, key string, req Request) *instance {
	return &instance{
		d: d, key: key, req: req, ready: make(chan struct{}),
		atts:    map[*attachment]struct{}{},
		pending: map[int64]*pending{},
		tokens:  map[string]*pending{},
		late:    map[string]*pending{},
		asked:   map[string]*asked{},
		elicits: map[string]*attachment{},
		subs:    map[string]*sub{},
		tasks:   map[string]*task{},
		owned:   map[*attachment]int{},
	}
}

// start spawns the child and initializes it once.
func (in *instance) start() {
	defer close(in.ready)
	c, err := startChild(in.req.Launch)
	if err != nil {
		in.err = fmt.Errorf("broker: %w", err)
		in.d.forget(in)
		in.d.live.Done()
		return
	}
	in.child = c
	in.loopDone = make(chan struct{})
	if c.outFD >= 0 {
		// The relay loop reads the server (loop_linux.go).
		rd, err := loop().add(c.outFD, in.fromServer, func(err error) {
			defer close(in.loopDone)
			in.ended(err)
		})
		if err != nil {
			closeFD(c.outFD)
			in.err = fmt.Errorf("broker: %w", err)
			go func() { c.stop(); close(in.loopDone); in.d.live.Done() }()
			in.d.forget(in)
			return
		}
		c.outRd = rd
	} else {
		go in.readLoop()
	}
	params, err := json.Marshal(map[string]any{
		"protocolVersion": in.req.ProtocolVersion,
		"capabilities":    json.RawMessage(in.capabilities()),
		"clientInfo":      json.RawMessage(in.clientInfo()),
	})
	if err != nil {
		in.err = fmt.Errorf("broker: initialize: %w", err)
	} else {
		in.init, err = in.own("initialize", params, in.d.o.InitTimeout)
		if err != nil {
			in.err = fmt.Errorf("broker: initialize %s: %w", in.req.Name, err)
		}
	}
	if in.err != nil {
		in.setStopReason("initialize failed")
		c.stop()
		if tail := c.stderrTail(); tail != "" {
			in.err = fmt.Errorf("%w; its stderr ends: %s", in.err, tail)
		}
		in.d.forget(in)
		return
	}
	in.writeUp(notification("notifications/initialized", nil))
	in.d.log.Info("broker: instance started", "name", in.req.Name, "id", in.key[:12], "pid", c.pid())
	in.d.started(in.key)
}

// capabilities are the first window's client capabilities with roots set by scope: none for
// user scope (see ScopeUser), a fixed list without list_changed for workspace scope.
func (in *instance) capabilities() []byte {
	caps := map[string]json.RawMessage{}
	if len(in.req.Capabilities) > 0 {
		_ = json.Unmarshal(in.req.Capabilities, &caps) // ignore error: a broken value declares nothing
	}
	delete(caps, "roots")
	if in.req.Launch.Scope == ScopeWorkspace {
		caps["roots"] = json.RawMessage(`{}`)
	}
	b, _ := json.Marshal(caps) // ignore error: raw JSON values that decoded
	return b
}

func (in *instance) clientInfo() []byte {
	if len(in.req.ClientInfo) > 0 && json.Valid(in.req.ClientInfo) {
		return in.req.ClientInfo
	}
	b, _ := json.Marshal(map[string]string{"name": "switchboard", "version": in.d.o.Build}) // ignore error: strings
	return b
}

// own sends the daemon's own request and returns its result.
func (in *instance) own(method string, params []byte, timeout time.Duration) ([]byte, error) {
	frame, reply := in.ownFrame(method, params, true)
	if frame == nil {
		return nil, fmt.Errorf("the server is gone")
	}
	in.writeUp(frame)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case data, ok := <-reply:
		if !ok {
			return nil, fmt.Errorf("%s", in.child.exitReason())
		}
		m, _ := parseMsg(data)
		if e := member(m.data, "error"); e != nil {
			return nil, fmt.Errorf("the server answered with an error: %s", e)
		}
		r := member(m.data, "result")
		if r == nil {
			return nil, fmt.Errorf("the server's answer has no result")
		}
		return bytes.Clone(r), nil
	case <-t.C:
		return nil, fmt.Errorf("no answer within %s", timeout)
	}
}

// ownFrame registers one of the daemon's own requests and returns its frame (nil: the instance is
// gone). With wait, the response arrives on the channel (closed if the server dies first).
func (in *instance) ownFrame(method string, params []byte, wait bool) ([]byte, chan []byte) {
	in.mu.Lock()
	defer in.mu.Unlock()
	f, p := in.ownRequest(method, params)
	if p == nil {
		return nil, nil
	}
	if wait {
		p.reply = make(chan []byte, 1)
	}
	return f, p.reply
}

// ownFrameLocked is ownFrame without waiting, with in.mu held.
func (in *instance) ownFrameLocked(method string, params []byte) ([]byte, *pending) {
	return in.ownRequest(method, params)
}

func (in *instance) ownRequest(method string, params []byte) ([]byte, *pending) {
	if in.pending == nil {
		return nil, nil
	}
	in.nextID++
	p := &pending{}
	in.pending[in.nextID] = p
	b := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(in.nextID, 10) + `,"method":`)
	b = append(b, strconv.Quote(method)...)
	if params != nil {
		b = append(append(b, `,"params":`...), params...)
	}
	return append(b, "}\n"...), p
}

// writeUp writes one frame to the child without waiting: what its stdin does not take at once
// waits in order for upWriter. A child that takes nothing within stall has stopped reading, and
// is stopped (as is one that falls more than maxQueue or maxQueueFrames behind); its death then ends every
// attachment.
func (in *instance) writeUp(frame []byte) {
	frame = withNewline(frame)
	in.upMu.Lock()
	defer in.upMu.Unlock()
	if in.upDead {
		return
	}
	if len(in.upQ) == 0 && !in.upWriting {
		// A frame the pipe takes at once, as nearly all do, needs no deadline and no goroutine.
		if f, ok := in.child.in.(*rawio.File); ok {
			n := f.TryWrite(frame)
			if n == len(frame) {
				return
			}
			frame = frame[n:]
		}
	}
	if (in.upBytes+len(frame) > maxQueue || len(in.upQ) >= maxQueueFrames) && len(in.upQ) > 0 {
		in.upDead, in.upQ, in.upBytes = true, nil, 0
		in.stopStalled()
		return
	}
	in.upQ = append(in.upQ, bytes.Clone(frame))
	in.upBytes += len(frame)
	if !in.upWriting {
		in.upWriting = true
		go in.upWriter()
	}
}

// upWriter writes the queued frames to the child, waiting for it as long as stall.
func (in *instance) upWriter() {
	for {
		in.upMu.Lock()
		if len(in.upQ) == 0 || in.upDead {
			in.upWriting = false
			in.upMu.Unlock()
			return
		}
		b := in.upQ[0]
		in.upQ[0] = nil
		in.upQ = in.upQ[1:]
		in.upBytes -= len(b)
		in.upMu.Unlock()
		_ = in.child.in.SetWriteDeadline(time.Now().Add(stall)) // ignore error: a pipe takes deadlines
		_, err := in.child.in.Write(b)
		if err != nil {
			in.upMu.Lock()
			in.upDead, in.upQ, in.upBytes, in.upWriting = true, nil, 0, false
			in.upMu.Unlock()
			if isTimeout(err) {
				in.stopStalled()
			}
			return
		}
	}
}

func (in *instance) stopStalled() {
	in.d.log.Warn("broker: server stopped reading its input; stopping it", "name", in.req.Name)
	in.setStopReason("the server stopped reading its input")
	go in.child.stop()
}

// readLoop reads the server's frames until its stdout ends, then ends the instance (where there
// is no relay loop to read it).
func (in *instance) readLoop() {
	defer close(in.loopDone)
	br := bufio.NewReaderSize(in.child.out, 64<<10)
	var err error
	for {
		var data []byte
		if data, err = nextFrame(br, maxFrame); err != nil {
			break
		}
		in.fromServer(data)
	}
	in.ended(err)
}

// ended: the server's stdout ended or failed (err), or its reader was dropped; the instance ends.
func (in *instance) ended(err error) {
	reason := ""
	if err == errFrameTooLarge {
		reason = "the server sent a frame larger than 64 MiB"
	}
	go in.child.stop() // stdout closed or broken: the process is done for
	<-in.child.exited
	in.die(reason)
}

// die ends the instance once: every attachment's calls in flight get an error response, then
// switchboard/instanceExited with the reason and the stderr tail, and the attachment closes once
// that is written. A new attach starts a new instance.
func (in *instance) die(reason string) {
	in.dieOnce.Do(func() {
		in.d.forget(in)
		in.mu.Lock()
		if reason == "" {
			reason = in.stopReason
		}
		if reason == "" {
			reason = in.child.exitReason()
		}
		in.gone = true
		if in.linger != nil {
			in.linger.Stop()
		}
		reattach, stopped := in.reattach, in.stopped && reason == in.stopReason
		atts := in.atts
		pend := in.pending
		in.atts, in.pending, in.tokens, in.late, in.asked, in.elicits, in.subs = nil, nil, nil, nil, nil, nil, nil
		in.tasks, in.taskOrder, in.owned = nil, nil, nil // its tasks end with it
		in.mu.Unlock()
		tail := in.child.stderrTail()
		for _, p := range pend {
			if p.reply != nil {
				close(p.reply)
			} else if p.att != nil {
				p.att.send(errorResponse([]byte(p.down), codeServerGone, "shared server "+in.req.Name+": "+reason))
			}
		}
		params := map[string]any{"reason": reason, "stderrTail": tail}
		if reattach {
			params["reattach"] = true
		}
		if stopped {
			params["stopped"] = true
		}
		exited := notification("switchboard/instanceExited", params)
		for a := range atts {
			a.send(exited)
			a.closeAfterFlush()
		}
		in.d.log.Info("broker: instance ended", "name", in.req.Name, "id", in.key[:12], "reason", reason)
		in.d.live.Done()
	})
}

func (in *instance) setStopReason(r string) {
	in.mu.Lock()
	if in.stopReason == "" {
		in.stopReason = r
	}
	in.mu.Unlock()
}

// retire stops the instance on purpose (linger over, daemon exiting) and waits for its end.
func (in *instance) retire(reason string) { in.retireFor(reason, false) }

// retireFor is retire; with reattach the windows are told to attach again (the daemon ends, the
// server did nothing wrong).
func (in *instance) retireFor(reason string, reattach bool) {
	in.mu.Lock()
	in.gone = true
	if in.stopReason == "" {
		in.stopReason, in.reattach = reason, reattach
	}
	in.mu.Unlock()
	in.d.forget(in)
	if in.child != nil {
		in.child.stop()
	}
}

// retireIfUnused is the linger's end: the instance stops unless a window came back.
func (in *instance) retireIfUnused() {
	in.mu.Lock()
	unused := len(in.atts) == 0 && !in.gone
	if unused {
		in.gone = true
		// Out of the table before anyone can find it gone: a window attaching now gets a new
		// instance instead of retrying this one. (Lock order: in.mu, then d.mu; nothing takes
		// in.mu while holding d.mu.)
		in.d.forget(in)
	}
	in.mu.Unlock()
	if unused {
		why := "no window used it for " + in.d.o.Idle.String()
		if in.d.o.Idle == 0 {
			why = "its last window left"
		}
		in.retire(why)
	}
}

// attach adds a window; false when the instance is going away.
func (in *instance) attach(a *attachment) (windows int, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.gone {
		return 0, false
	}
	in.atts[a] = struct{}{}
	if in.linger != nil {
		in.linger.Stop()
		in.linger = nil
	}
	// The others hear of it now; a hears its count in its hello's reply.
	in.countWindowsLocked(a)
	return len(in.atts), true
}

// countWindowsLocked tells every attached window that asked (featureWindows), but new, how many
// windows use the instance now. seq orders the news: two changes told at once may arrive in
// either order, and a window keeps the latest. in.mu held (a.send never blocks).
func (in *instance) countWindowsLocked(new *attachment) {
	in.windowsSeq++
	var f []byte
	for x := range in.atts {
		if x == new || !x.counts {
			continue
		}
		if f == nil {
			f = notification("switchboard/windowsChanged", map[string]int64{"windows": int64(len(in.atts)), "seq": in.windowsSeq})
		}
		x.send(f)
	}
}

// detach removes a window that left: its calls in flight are cancelled upstream (late results
// are dropped), the server's questions routed to it are refused, its subscriptions dropped (the
// last subscriber's leaving unsubscribes upstream). At zero windows the linger starts.
func (in *instance) detach(a *attachment) {
	in.mu.Lock()
	if _, ok := in.atts[a]; !ok {
		in.mu.Unlock()
		return
	}
	delete(in.atts, a)
	var out [][]byte
	for _, up := range a.calls {
		in.dropCall(up)
		out = append(out, notification("notifications/cancelled", map[string]any{
			"requestId": up, "reason": "the window that made this request closed"}))
	}
	for k, q := range in.asked {
		if q.att == a {
			delete(in.asked, k)
			out = append(out, refusal(q.method, q.up))
		}
	}
	for id, w := range in.elicits {
		if w == a {
			delete(in.elicits, id)
		}
	}
	var unsub []string
	for uri, s := range in.subs {
		if s.atts[a] {
			delete(s.atts, a)
			if len(s.atts) == 0 {
				delete(in.subs, uri)
				if s.upstream {
					unsub = append(unsub, uri)
				}
			}
		}
	}
	if len(in.atts) == 0 && !in.gone {
		in.linger = time.AfterFunc(in.d.o.Idle, in.retireIfUnused)
	}
	in.countWindowsLocked(nil)
	in.mu.Unlock()
	for _, uri := range unsub {
		if f, _ := in.ownFrame("resources/unsubscribe", mustJSON(map[string]string{"uri": uri}), false); f != nil {
			out = append(out, f)
		}
	}
	for _, f := range out {
		in.writeUp(f)
	}
}

// dropCall forgets one request in flight (in.mu held).
func (in *instance) dropCall(up int64) *pending {
	p := in.pending[up]
	if p == nil {
		return nil
	}
	delete(in.pending, up)
	if p.token != "" {
		delete(in.tokens, p.token)
		in.late[p.token] = p
		in.lateFIFO = append(in.lateFIFO, p.token)
		if len(in.lateFIFO) > maxLate {
			delete(in.late, in.lateFIFO[0])
			in.lateFIFO = in.lateFIFO[1:]
		}
	}
	if p.att != nil {
		delete(p.att.calls, p.down)
		p.att.inflight--
	}
	return p
}

// refusal answers a server's question that no window may see: elicitation is cancelled, sampling
// rejected as a person would.
func refusal(method string, id []byte) []byte {
	if method == "elicitation/create" {
		return response(id, `{"action":"cancel"}`)
	}
	return errorResponse(id, codeUserRejected, "User rejected sampling request")
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// windowsCount is the number of attached windows.
func (in *instance) windowsCount() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.atts)
}

func (in *instance) status() InstanceStatus {
	s := InstanceStatus{ID: in.key[:12], Name: in.req.Name, Display: in.req.Display,
		Scope: in.req.Launch.Scope, Windows: in.windowsCount()}
	if in.child != nil {
		s.ServerPid = in.child.pid()
	}
	return s
}
