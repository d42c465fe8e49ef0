package broker

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/switchboard-dev/switchboard/mcpbridge/rawio"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// Options configure the daemon. The zero value of each field is usable except Dir.
type Options struct {
	// Dir is the socket directory (DefaultDir in production). It is created and checked as
	// EnsureDir does; a directory that fails is an error.
	Dir string
	// Build is this binary's version, told to every window (skew warnings).
	Build string
	// Idle is how long the daemon lingers after its last window left, and how long an instance
	// lingers after its own last window (0: 60 s, so that a window reload keeps its servers;
	// negative: not at all, as daemonIdleSeconds 0 asks). A daemon waits at least
	// firstWindowGrace for its first window whatever Idle says: the window that started it
	// connects once it is ready.
	Idle time.Duration
	// InitTimeout bounds a server's start and initialize (default 2 min: npx may download).
	InitTimeout time.Duration
	// Ready, when set, gets "ready\n" once the daemon accepts connections, and is then closed if
	// it is a Closer: the starting window waits for it instead of polling.
	Ready io.Writer
	// Log receives the daemon's log (default: discarded). The daemon never writes to stdout.
	Log *slog.Logger
	// Admit, when set, is asked before every attach whether the launch may run at all: the
	// organisation's policy, checked here too (defence in depth: each window's policy decided
	// before it asked, but a window of an older build, or one that lies, must not make the
	// daemon start what the policy blocks). Its error, naming the rule, is the window's answer.
	// cmd/switchboard gives permissions/policy's decision; the package imports no policy itself.
	Admit func(Request) error
	// Recheck, when set with Admit, tells the daemon that the policy may have changed: every
	// running instance is asked of Admit again, and one it now blocks is stopped at once, its
	// windows told why (the rule) in switchboard/instanceExited. Each window's own policy watch
	// shows the server blocked; the daemon does not rely on every window having one (an older
	// build, one that lies).
	Recheck <-chan struct{}
}

// daemon is one running broker.
type daemon struct {
	o     Options
	log   *slog.Logger
	paths Paths
	key   []byte // HMAC key of instance ids, random per start
	ln    *net.UnixListener
	sock  fs.FileInfo // the socket file we bound, to unlink only ours

	stopOnce sync.Once
	stopc    chan struct{}
	// live counts instances until they have ended, retired ones included (no longer in
	// instances): the daemon returns only after the last one's end is logged.
	live   sync.WaitGroup
	drainc chan struct{} // closed when the daemon starts draining
	wg     sync.WaitGroup

	retireOnce sync.Once

	// mu guards the instances, the connection count, the idle timer, closing and draining.
	mu        sync.Mutex
	instances map[string]*instance
	conns     map[*net.UnixConn]*attachment // its attachment once it has one
	idle      *time.Timer
	closing   bool
	draining  bool // the socket is given up: exit as soon as no window is attached
	greeted   bool // a window attached: the first window's grace is over
	// why is the sentence the windows get when the daemon ends their servers, and reattach
	// whether they should attach again (to a new daemon) rather than show the server failed.
	why      string
	reattach bool
	// stopped: a person stopped the daemon (`switchboard daemon stop`): its windows show their
	// shared servers stopped, not failed.
	stopped bool
	// watchers are windows whose instance ended, waiting for another window to start it again,
	// by instance key. A watching window keeps the daemon alive as an attached one does (its
	// connection stays in conns, and in watching): were the daemon to idle out, the next
	// Reconnect would start a new one that no other window watches, and each window would need
	// a Reconnect of its own. A draining daemon does not wait for them: they watch the new one.
	watchers map[string][]chan struct{}
	watching map[*net.UnixConn]bool
	// policyGen counts Recheck's rounds. An attach admitted under one generation finds or starts
	// its instance only under the same one: otherwise the policy changed after Admit answered,
	// and the round's recheck may have looked at the instances before this one was among them.
	policyGen uint64
}

// Serve runs the daemon until ctx ends, it was idle for Options.Idle with no window attached, or
// a window asks it to stop. On the way out it stops accepting, unlinks its socket (under the
// start lock, and only its own), stops every instance (whole process groups) and closes every
// connection. It returns nil on an orderly end.
func Serve(ctx context.Context, o Options) error {
	switch {
	case o.Idle == 0:
		o.Idle = 60 * time.Second
	case o.Idle < 0:
		o.Idle = 0
	}
	if o.InitTimeout <= 0 {
		o.InitTimeout = 2 * time.Minute
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Dir == "" {
		return errors.New("broker: serve: no socket directory")
	}
	if err := EnsureDir(o.Dir); err != nil {
		return err
	}
	closeInheritedOnExec() // before any server starts
	d := &daemon{o: o, log: o.Log, paths: PathsIn(o.Dir), stopc: make(chan struct{}), drainc: make(chan struct{}),
		instances: map[string]*instance{}, conns: map[*net.UnixConn]*attachment{}, watchers: map[string][]chan struct{}{}, watching: map[*net.UnixConn]bool{}}
	d.key = make([]byte, 32)
	if _, err := rand.Read(d.key); err != nil {
		return fmt.Errorf("broker: serve: %w", err)
	}
	if err := d.listen(); err != nil {
		return err
	}
	if n := stdio.SweepOrphans(); n > 0 {
		d.log.Info("broker: killed processes a dead host left behind", "count", n)
	}
	d.writeInfo()
	if o.Ready != nil {
		_, _ = io.WriteString(o.Ready, "ready\n") // ignore error: a starter that left will dial anyway
		if c, ok := o.Ready.(io.Closer); ok {
			c.Close() // ignore error: one line written
		}
	}
	d.log.Info("broker: daemon listening", "socket", d.paths.Sock, "pid", os.Getpid(), "build", o.Build)
	d.mu.Lock()
	d.armIdle()
	d.mu.Unlock()
	d.wg.Add(1)
	go d.acceptLoop()
	if o.Admit != nil && o.Recheck != nil {
		go d.recheckLoop()
	}
	select {
	case <-ctx.Done():
		// Ended from outside (a signal, a logout): its windows attach again, to a new daemon.
		why := "the shared-server daemon was ended"
		if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
			why += " (" + c.Error() + ")"
		}
		d.ending(why+"; attaching again", true)
	case <-d.stopc:
	}
	d.shutdown()
	return nil
}

// recheckLoop stops the instances the policy blocks each time Recheck says it changed.
func (d *daemon) recheckLoop() {
	for {
		select {
		case <-d.stopc:
			return
		case _, ok := <-d.o.Recheck:
			if !ok {
				return
			}
			d.recheck()
		}
	}
}

// recheck asks Admit again about every running instance and stops those it now blocks.
func (d *daemon) recheck() {
	d.mu.Lock()
	d.policyGen++
	ins := make([]*instance, 0, len(d.instances))
	for _, in := range d.instances {
		ins = append(ins, in)
	}
	d.mu.Unlock()
	for _, in := range ins {
		go func() {
			<-in.ready // one still starting was admitted under the old policy: asked again once up
			if in.err != nil {
				return
			}
			in.recheck()
		}()
	}
}

// recheck asks Admit again about the instance as each attached window asked for it: a window's
// request names the server as that window does, and a rule on the name (serverName) may block one
// window's name and not another's. The windows now blocked are cut off, told the rule; when no
// window may run the server any more, it stops.
func (in *instance) recheck() {
	in.mu.Lock()
	atts := make([]*attachment, 0, len(in.atts))
	for a := range in.atts {
		atts = append(atts, a)
	}
	in.mu.Unlock()
	decided := map[string]error{} // by name: the launch is the same for all
	admit := func(r Request) error {
		err, ok := decided[r.Name]
		if !ok {
			err = in.d.o.Admit(r)
			decided[r.Name] = err
		}
		return err
	}
	var (
		blocked []*attachment
		why     error
	)
	for _, a := range atts {
		if err := admit(a.req); err != nil {
			blocked, why = append(blocked, a), err
		}
	}
	if len(atts) == 0 {
		why = admit(in.req) // lingering: as its first window asked
	}
	switch {
	case why == nil:
	case len(blocked) == len(atts):
		in.d.log.Warn("broker: the organisation's policy now blocks a running server; stopping it", "name", in.req.Name, "err", why)
		in.retire("the organisation's policy now blocks this server: " + why.Error())
	default:
		for _, a := range blocked {
			err := admit(a.req)
			in.d.log.Warn("broker: the organisation's policy now blocks a window's server; cutting that window off", "name", a.req.Name, "err", err)
			in.detach(a) // nothing more it sends reaches the server
			a.send(notification("switchboard/instanceExited", map[string]any{"reason": "the organisation's policy now blocks this server: " + err.Error()}))
			a.closeAfterFlush()
		}
	}
}

// ending records why the daemon ends its windows' servers (the first reason given wins).
func (d *daemon) ending(why string, reattach bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.why == "" {
		d.why, d.reattach = why, reattach
	}
}

// listen binds the socket, refusing to take over one a live daemon answers on.
func (d *daemon) listen() error {
	if c, err := net.DialTimeout("unix", d.paths.Sock, time.Second); err == nil {
		c.Close() // ignore error: only probing
		return fmt.Errorf("broker: serve: a daemon already listens on %s", d.paths.Sock)
	}
	if err := removeStale(d.paths.Sock); err != nil {
		return fmt.Errorf("broker: serve: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: d.paths.Sock, Net: "unix"})
	if err != nil {
		return fmt.Errorf("broker: serve: %w", err)
	}
	ln.SetUnlinkOnClose(false) // unlinked by shutdown, only if still ours
	// The directory (0700) is what keeps others out; the mode is belt and braces.
	if err := os.Chmod(d.paths.Sock, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("broker: serve: %w", err)
	}
	d.sock, err = os.Lstat(d.paths.Sock)
	if err != nil {
		ln.Close()
		return fmt.Errorf("broker: serve: %w", err)
	}
	d.ln = ln
	return nil
}

// removeStale unlinks a socket file nothing answers on; anything that is not a socket is left
// alone and refused.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	return os.Remove(path)
}

// info is the content of d<P>.json.
type info struct {
	Pid       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
	Build     string `json:"build"`
	Broker    int    `json:"broker"`
	Minor     int    `json:"minor"`
}

func (d *daemon) writeInfo() {
	b, _ := json.Marshal(info{Pid: os.Getpid(), StartTime: stdio.ProcStartTime(os.Getpid()), Build: d.o.Build, Broker: Major, Minor: Minor}) // ignore error: plain values
	if err := writeFileAtomic(d.paths.Info, b); err != nil {
		d.log.Warn("broker: write daemon info", "err", err)
	}
}

// ReadInfo reads the daemon info file in dir (pid, start time, build) for `daemon status`.
func ReadInfo(dir string) (pid int, startTime uint64, build string, err error) {
	b, err := os.ReadFile(PathsIn(dir).Info)
	if err != nil {
		return 0, 0, "", err
	}
	var i info
	if err := json.Unmarshal(b, &i); err != nil {
		return 0, 0, "", fmt.Errorf("broker: %s: %w", PathsIn(dir).Info, err)
	}
	return i.Pid, i.StartTime, i.Build, nil
}

func (d *daemon) stop() { d.stopOnce.Do(func() { close(d.stopc) }) }

// inUse reports whether a window keeps the daemon (d.mu held): one attached or watching, or,
// draining, one attached.
func (d *daemon) inUse() bool {
	if d.draining {
		return len(d.conns) > len(d.watching)
	}
	return len(d.conns) > 0
}

// firstWindowGrace is the least a daemon waits for its first window to attach (Options.Idle).
const firstWindowGrace = 10 * time.Second

// armIdle starts the idle timer when no window keeps the daemon (d.mu held).
func (d *daemon) armIdle() {
	if d.inUse() || d.closing || d.idle != nil {
		return
	}
	wait := d.o.Idle
	if !d.greeted {
		wait = max(wait, firstWindowGrace)
	}
	if d.draining {
		wait = 0
	}
	d.idle = time.AfterFunc(wait, func() {
		d.mu.Lock()
		expired := !d.inUse() && !d.closing
		if expired {
			d.closing = true
		}
		d.mu.Unlock()
		if expired {
			d.log.Info("broker: idle, exiting", "idle", d.o.Idle)
			d.stop()
		}
	})
}

func (d *daemon) acceptLoop() {
	defer d.wg.Done()
	for {
		c, err := d.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			d.log.Warn("broker: accept", "err", err)
			select {
			case <-d.stopc:
				return
			case <-time.After(50 * time.Millisecond): // EMFILE and friends: do not spin
			}
			continue
		}
		// Before a byte is read: only our own user may talk to us.
		uid, pid, err := peerCred(c)
		if err != nil || uid != os.Geteuid() {
			d.log.Warn("broker: refused a connection from another user", "uid", uid, "pid", pid, "err", err)
			c.Close() // ignore error: refused
			continue
		}
		d.mu.Lock()
		if d.closing {
			d.mu.Unlock()
			writeReply(c, helloReply{Broker: Major, Minor: Minor, Build: d.o.Build, Pid: os.Getpid(), Error: "the daemon is exiting", Retry: true})
			c.Close() // ignore error: refused
			continue
		}
		d.conns[c] = nil
		if d.idle != nil {
			d.idle.Stop()
			d.idle = nil
		}
		d.mu.Unlock()
		d.wg.Add(1)
		go d.handle(c, pid)
	}
}

func (d *daemon) leave(c *net.UnixConn) {
	c.Close() // ignore error: done with it
	d.mu.Lock()
	delete(d.conns, c)
	d.armIdle()
	d.mu.Unlock()
	d.wg.Done()
}

func writeReply(c *net.UnixConn, r helloReply) error {
	b, _ := json.Marshal(r) // ignore error: plain values
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Write(append(b, '\n'))
	_ = c.SetWriteDeadline(time.Time{})
	return err
}

// maxHello bounds the hello line (a launch with its whole environment).
const maxHello = 4 << 20

func (d *daemon) handle(c *net.UnixConn, pid int) {
	defer d.leave(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Raw system calls where rawio takes the socket: a relayed frame then does not wake the
	// runtime's monitor thread (about two wake-ups per call with net.Conn's reads and writes).
	rw := rawio.OrConn(c)
	// The hello's reader is small: a window's frames come on pipes with a reader of their own
	// (a window without featurePipes gets a larger one on top of this, below).
	br := bufio.NewReaderSize(rw, 4<<10)
	line, err := readFrame(br, maxHello)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	reply := helloReply{Broker: Major, Minor: Minor, Build: d.o.Build, Features: features, Pid: os.Getpid()}
	var h hello
	if err := json.Unmarshal(line, &h); err != nil {
		reply.Error = "hello: " + err.Error()
		writeReply(c, reply)
		return
	}
	if err := checkHello(&h, d.o.Build); err != nil {
		reply.Error = err.Error()
		writeReply(c, reply)
		return
	}
	switch h.Op {
	case opStatus:
		reply.Status = d.status()
		writeReply(c, reply)
		return
	case opStop:
		writeReply(c, reply)
		d.log.Info("broker: stop asked by a window")
		d.ending("the shared-server daemon was stopped with `switchboard daemon stop`; Reconnect starts the server again", false)
		d.mu.Lock()
		d.closing = true
		d.stopped = d.why != "" && !d.reattach // not if it was already ending for another reason
		d.mu.Unlock()
		d.stop()
		return
	case opDrain:
		// The socket goes before the answer: a window that dials after it starts a new daemon.
		d.log.Info("broker: drain asked by a window: the next window starts a new daemon")
		d.drain()
		writeReply(c, reply)
		return
	case opWatch:
		d.watch(c, br, h, reply)
		return
	case opAttach:
		// A window came: the first window's grace is over. Not before: a status, stop or watch
		// is no window, and a daemon lingering for no time (Idle negative) exited as the first
		// of those left, before the window that started it dialled (TestIdleNoneWaitsForItsFirstWindow).
		d.mu.Lock()
		d.greeted = true
		d.mu.Unlock()
	default:
		reply.Error = fmt.Sprintf("unknown op %q", h.Op)
		writeReply(c, reply)
		return
	}
	if h.Instance == nil {
		reply.Error = "hello: no instance"
		writeReply(c, reply)
		return
	}
	pending := reply
	pending.Pending = true
	if writeReply(c, pending) != nil {
		return
	}
	req := *h.Instance
	if req.ProtocolVersion == "" {
		reply.Error = "hello: no protocol version"
		writeReply(c, reply)
		return
	}
	if err := req.Launch.validate(); err != nil {
		reply.Error = "launch refused: " + err.Error()
		writeReply(c, reply)
		return
	}
	gen, err := d.admit(req)
	if err != nil {
		reply.Error = "launch refused: " + err.Error()
		writeReply(c, reply)
		return
	}
	// The frames move to pipes when the window can take them (featurePipes); made before the
	// attach, so that nothing the instance sends meanwhile goes to the socket instead.
	var (
		upFD                   = -1 // the up pipe's read end, for the relay loop
		upR, upW, downR, downW *os.File
		fr                     = rw
		fbr                    *bufio.Reader
		pipes                  []io.Closer
	)
	if pipesSupported && slices.Contains(h.Features, featurePipes) {
		if upFD, upR, upW, downR, downW, err = newPipes(); err != nil {
			d.log.Warn("broker: no pipes for an attachment; its frames go on the socket", "err", err)
		} else {
			down := rawio.Or(downW)
			fr, fbr, pipes = down, nil, []io.Closer{down}
			if upR != nil {
				up := rawio.Or(upR)
				fbr, pipes = bufio.NewReaderSize(up, 64<<10), append(pipes, up)
			}
		}
	}
	if pipes == nil {
		fbr = bufio.NewReaderSize(br, 64<<10) // a long read goes past br's buffer to the socket
	}
	// The window's ends are closed here once sent (or not needed): a copy kept open would hide
	// the window's leaving (no end of file on the up pipe while the daemon holds its write end).
	closePipes := func() {
		if pipes != nil {
			closeAll(upW, downR)
		}
		for _, p := range pipes {
			p.Close() // ignore error: unused
		}
		if upFD >= 0 {
			closeFD(upFD)
			upFD = -1
		}
	}
	var (
		in      *instance
		a       *attachment
		windows int
	)
	for range 3 { // an instance that ends between its lookup and the attach is started anew
		in, err = d.instanceFor(req, h.Existing, gen)
		if errors.Is(err, errPolicyChanged) {
			if gen, err = d.admit(req); err != nil {
				closePipes()
				reply.Error = "launch refused: " + err.Error()
				writeReply(c, reply)
				return
			}
			continue
		}
		if errors.Is(err, errNoInstance) {
			closePipes()
			reply.Error, reply.NoInstance = err.Error(), true
			writeReply(c, reply)
			return
		}
		if err != nil {
			closePipes()
			reply.Error = err.Error()
			writeReply(c, reply)
			return
		}
		if in.req.ProtocolVersion != req.ProtocolVersion {
			closePipes()
			reply.Error = fmt.Sprintf("the shared instance speaks MCP %s, this window %s", in.req.ProtocolVersion, req.ProtocolVersion)
			writeReply(c, reply)
			return
		}
		a = newAttachment(in, c, fr, fbr, upFD, pipes...)
		a.req, a.pid = req, pid
		a.counts = slices.Contains(h.Features, featureWindows)
		var ok bool
		if windows, ok = in.attach(a); ok {
			break
		}
		a = nil
	}
	if a == nil {
		closePipes()
		reply.Error = "the shared server kept ending while this window attached"
		writeReply(c, reply)
		return
	}
	reply.Instance = in.key[:12]
	reply.ServerPid = in.child.pid()
	reply.Windows = windows
	if pipes != nil {
		reply.Pipes = true
		b, _ := json.Marshal(reply) // ignore error: plain values
		err = writeWithFiles(c, append(b, '\n'), upW, downR)
		closeAll(upW, downR) // the window has its copies (or the attach failed)
	} else {
		err = writeReply(c, reply)
	}
	if err != nil {
		in.detach(a)
		a.kill()
		return
	}
	d.mu.Lock()
	if _, ok := d.conns[c]; ok {
		d.conns[c] = a
	}
	d.mu.Unlock()
	go a.writeLoop()
	if fbr == nil {
		// The relay loop reads the window's frames; handle returns when it has ended them.
		if !a.startReading() {
			in.detach(a)
			a.kill()
			return
		}
		<-a.done
		return
	}
	a.readLoop()
}

// watch answers once an instance of h's launch starts, which another window's Reconnect does
// after the instance ended: the windows that saw it end then restart it too, so that a restart
// in one window is one in all. It starts nothing itself, and a window watching keeps no daemon
// alive.
func (d *daemon) watch(c *net.UnixConn, br *bufio.Reader, h hello, reply helloReply) {
	if h.Instance == nil {
		reply.Error = "hello: no instance"
		writeReply(c, reply)
		return
	}
	if err := h.Instance.Launch.validate(); err != nil {
		reply.Error = "launch refused: " + err.Error()
		writeReply(c, reply)
		return
	}
	key := instanceKey(d.key, h.Instance.Launch)
	started := make(chan struct{})
	d.mu.Lock()
	in := d.instances[key]
	if in == nil {
		d.watchers[key] = append(d.watchers[key], started)
		d.watching[c] = true
	}
	draining := d.draining
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.watching, c)
		d.mu.Unlock()
	}()
	if in == nil && draining {
		// The window should watch the daemon that replaces this one.
		d.unwatch(key, started)
		reply.Retry = true
		writeReply(c, reply)
		return
	}
	if in != nil {
		// Started meanwhile (its start may still be under way: the window's attach waits for it).
		reply.Started = true
		writeReply(c, reply)
		return
	}
	pending := reply
	pending.Pending = true
	if writeReply(c, pending) != nil {
		d.unwatch(key, started)
		return
	}
	left := make(chan struct{})
	go func() {
		_, _ = br.ReadByte() // ignore error: the window sends nothing more; EOF is its leaving
		close(left)
	}()
	select {
	case <-started:
		reply.Started = true
		writeReply(c, reply)
	case <-left:
		d.unwatch(key, started)
	case <-d.drainc:
		d.unwatch(key, started)
		reply.Retry = true // watch the daemon that replaces this one
		writeReply(c, reply)
	case <-d.stopc:
		d.unwatch(key, started)
		select {
		case <-d.drainc: // drained and stopped at once: watch the new daemon all the same
			reply.Retry = true
			writeReply(c, reply)
		default:
		}
	}
}

func (d *daemon) unwatch(key string, ch chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ws := d.watchers[key]
	for i, w := range ws {
		if w == ch {
			d.watchers[key] = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(d.watchers[key]) == 0 {
		delete(d.watchers, key)
	}
}

// started tells the watchers of key that its instance runs again.
func (d *daemon) started(key string) {
	d.mu.Lock()
	ws := d.watchers[key]
	delete(d.watchers, key)
	d.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
}

var errNoInstance = errors.New("no window runs this server in the daemon")

// errPolicyChanged: the policy changed since the attach was admitted; ask it again.
var errPolicyChanged = errors.New("the organisation's policy changed")

// admit asks the policy about req (nil without Admit) and returns the generation it answered
// under.
func (d *daemon) admit(req Request) (uint64, error) {
	d.mu.Lock()
	gen := d.policyGen
	d.mu.Unlock()
	if d.o.Admit != nil {
		if err := d.o.Admit(req); err != nil {
			d.log.Warn("broker: the organisation's policy blocks a launch", "name", req.Name, "err", err)
			return gen, err
		}
	}
	return gen, nil
}

// instanceFor returns the running instance of req's launch, starting it if there is none; a
// start storm of windows waits for the one start (single-flight). gen is the policy generation
// the attach was admitted under (errPolicyChanged when it is over).
func (d *daemon) instanceFor(req Request, existing bool, gen uint64) (*instance, error) {
	key := instanceKey(d.key, req.Launch)
	d.mu.Lock()
	if d.closing {
		d.mu.Unlock()
		return nil, errors.New("the daemon is exiting")
	}
	if gen != d.policyGen {
		d.mu.Unlock()
		return nil, errPolicyChanged
	}
	in := d.instances[key]
	if in == nil && existing {
		d.mu.Unlock()
		return nil, errNoInstance
	}
	if in == nil {
		in = newInstance(d, key, req)
		d.live.Add(1) // done when it has ended (die), or failed to start a process
		d.instances[key] = in
		go in.start()
	}
	d.mu.Unlock()
	<-in.ready
	if in.err != nil {
		return nil, in.err
	}
	return in, nil
}

// forget removes in from the instances, so that the next attach starts a new one.
func (d *daemon) forget(in *instance) {
	d.mu.Lock()
	if d.instances[in.key] == in {
		delete(d.instances, in.key)
	}
	d.mu.Unlock()
}

func (d *daemon) status() *Status {
	d.mu.Lock()
	ins := make([]*instance, 0, len(d.instances))
	for _, in := range d.instances {
		ins = append(ins, in)
	}
	d.mu.Unlock()
	s := &Status{Pid: os.Getpid(), Build: d.o.Build, Broker: Major, Minor: Minor, Instances: []InstanceStatus{}}
	for _, in := range ins {
		select {
		case <-in.ready:
			if in.err == nil {
				s.Instances = append(s.Instances, in.status())
			}
		default:
		}
	}
	return s
}

// retireSocket stops accepting and unlinks the socket and the info file, if they are still ours,
// under the start lock: a window starting a new daemon meanwhile either sees ours refuse or
// finds its own.
func (d *daemon) retireSocket() {
	d.retireOnce.Do(func() {
		lock := flock.New(d.paths.Lock, flock.SetPermissions(0o600))
		lctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		locked, _ := lock.TryLockContext(lctx, 10*time.Millisecond) // ignore error: unlocked, we go on
		cancel()
		d.ln.Close() // ignore error: stops the accept loop
		if fi, err := os.Lstat(d.paths.Sock); err == nil && os.SameFile(fi, d.sock) {
			os.Remove(d.paths.Sock) // ignore error: gone already
		}
		if pid, _, _, err := ReadInfo(d.o.Dir); err == nil && pid == os.Getpid() {
			os.Remove(d.paths.Info) // ignore error: gone already
		}
		if locked {
			lock.Unlock() // ignore error: released with the file anyway
		}
		lock.Close() // ignore error: our lock file handle
	})
}

// drain is `daemon restart`'s first half (design §4.3): the socket goes, so the next window to
// dial starts a new daemon from its own binary; the windows attached here keep their servers
// and their calls in flight, and the daemon exits once the last of them has left (at most
// drainLimit later).
func (d *daemon) drain() {
	d.retireSocket()
	d.mu.Lock()
	if !d.draining {
		close(d.drainc)
	}
	d.draining = true
	d.armIdle() // only windows watching: nothing to wait for
	ins := make([]*instance, 0, len(d.instances))
	for _, in := range d.instances {
		ins = append(ins, in)
	}
	d.mu.Unlock()
	// The windows are told now, not only when the drain ends: their servers keep running here,
	// and a person looking at one should know why it is not on the new daemon yet.
	notice := notification("switchboard/daemonDraining", map[string]string{"message": drainingMessage})
	for _, in := range ins {
		in.mu.Lock()
		atts := make([]*attachment, 0, len(in.atts))
		for a := range in.atts {
			atts = append(atts, a)
		}
		in.mu.Unlock()
		for _, a := range atts {
			a.send(notice)
		}
	}
	time.AfterFunc(drainLimit, func() {
		d.ending("the shared-server daemon was replaced by `switchboard daemon restart`; moving to the new one", true)
		d.stop()
	})
}

// drainingMessage is what a window of a draining daemon shows beside its shared servers.
const drainingMessage = "the shared-server daemon is being replaced (`switchboard daemon restart`); this server moves to the new one when you Reconnect it, or by itself within 10 minutes"

// drainLimit bounds how long a draining daemon waits for its windows.
const drainLimit = 10 * time.Minute

// shutdown: stop accepting and retire the socket under the start lock (a window starting a new
// daemon meanwhile either sees ours refuse or finds its own), then stop every instance; its
// windows get instanceExited and their calls in flight an error.
func (d *daemon) shutdown() {
	d.mu.Lock()
	d.closing = true
	if d.idle != nil {
		d.idle.Stop()
	}
	d.mu.Unlock()
	d.retireSocket()
	d.mu.Lock()
	ins := make([]*instance, 0, len(d.instances))
	for _, in := range d.instances {
		ins = append(ins, in)
	}
	why, reattach, stopped := d.why, d.reattach, d.stopped
	d.mu.Unlock()
	if why == "" {
		why = "the shared-server daemon stopped"
	}
	var wg sync.WaitGroup
	for _, in := range ins {
		wg.Go(func() {
			<-in.ready
			if in.err == nil {
				if stopped {
					in.mu.Lock()
					in.stopped = true
					in.mu.Unlock()
				}
				in.retireFor(why, reattach)
				<-in.loopDone // Serve returns after the instance has ended, its last word logged
			}
		})
	}
	wg.Wait()
	d.live.Wait()
	// Attachments close once their instanceExited is written; a window that reads nothing is cut
	// off after a moment.
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		d.mu.Lock()
		for c, a := range d.conns {
			if a != nil {
				a.kill() // its pipes too
			} else {
				c.Close() // ignore error: forced
			}
		}
		d.mu.Unlock()
		<-done
	}
	d.log.Info("broker: daemon stopped")
}

// writeFileAtomic writes a file of ours (0600) through a temporary file and a rename, so that a
// reader never sees half of it.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
