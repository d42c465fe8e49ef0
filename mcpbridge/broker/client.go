package broker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/switchboard-dev/switchboard/mcpbridge/rawio"
)

// Config is a window's side of the broker.
type Config struct {
	// Dir is the socket directory ("": DefaultDir()).
	Dir string
	// Build is this binary's version, for the skew warning.
	Build string
	// Start returns the command that runs the daemon on the socket path given (`switchboard
	// daemon --socket PATH`). nil: attach only to a running daemon, never start one (`switchboard
	// call` and `check`). The command is started in a session of its own with stdin and stdout on
	// /dev/null and, when its Env is nil, an empty environment: the daemon reads nothing from
	// it. Its readiness pipe is passed as an extra file named by ReadyFDVar.
	Start func(sock string) *exec.Cmd
	// Require lists hello features this window cannot do without.
	Require []string
	// Existing attaches only to an instance that already runs, and never starts a daemon
	// either (switchboard call and check): Attach returns ErrNoInstance or ErrNotRunning.
	Existing bool
	// Heartbeat is how often an attachment pings the daemon (default 6 s); two pings without an
	// answer (a stopped or hung daemon) end the Conn, with Exited saying why. Negative: never.
	Heartbeat time.Duration
	Log       *slog.Logger
}

// ReadyFDVar names, in the daemon's environment, the descriptor on which it says "ready".
const ReadyFDVar = "SWITCHBOARD_BROKER_READY_FD"

// ReadyFromEnv returns the readiness pipe a starting window passed (nil: none), for
// Options.Ready.
func ReadyFromEnv() *os.File {
	n, err := strconv.Atoi(os.Getenv(ReadyFDVar))
	if err != nil || n < 3 {
		return nil
	}
	return os.NewFile(uintptr(n), "broker-ready")
}

// Timeouts of finding and starting the daemon (design §2.2).
// A daemon's start is the same binary's start plus a socket: tens of milliseconds, but seconds on
// a machine busy enough (TestDaemonStopped saw more than 2 s at load 11 on 2 cores). A window
// that gives up too soon runs its servers itself while the late daemon comes up anyway, so the
// waits are generous: the start runs under the lock, which outlasts it.
var (
	dialTimeout  = time.Second
	lockTimeout  = 20 * time.Second
	readyTimeout = 10 * time.Second
)

// helloTimeout bounds the wait for a daemon's first answer to a hello.
var helloTimeout = 5 * time.Second

// ErrNotRunning: no daemon answers, and this caller does not start one.
var ErrNotRunning = errors.New("broker: no daemon is running")

// ErrNoInstance: the daemon runs, but no window runs this server in it (Config.Existing).
var ErrNoInstance = errors.New("broker: no window runs this server in the daemon")

// Conn is one window's attachment to a shared instance: a stream of newline-delimited JSON-RPC
// (plain MCP, as a stdio server's pipes carry) for the window's MCP client. Read and Write may be
// used from one goroutine each.
type Conn struct {
	c     *net.UnixConn
	rw    rawio.Conn // where frames are written: c, or the up pipe (see connect)
	r     *bufio.Reader
	pipes []io.Closer // the pipes' ends when frames move on them (featurePipes), closed with c
	reply helloReply
	build string
	scope string

	rbuf []byte // the rest of the frame being read

	wmu       sync.Mutex    // whole frames: the window's and the heartbeat's
	deadline  time.Time     // the window's write deadline (SetWriteDeadline), under wmu
	pong      chan struct{} // an answer to the heartbeat arrived
	done      chan struct{} // closed by Close
	closeOnce sync.Once

	exitMu sync.Mutex
	exit   *Exit
	notice string // the daemon's word about itself (it is being replaced), under exitMu
	// onNotice, when set, is called (from Read) when notice changes.
	onNotice func()
	// counts: this window asked to hear the number of windows (featureWindows); windows is it
	// (from the hello's reply, then switchboard/windowsChanged) and windowsSeq the latest news's
	// number, under exitMu; onWindows is called (from Read) when it changes.
	counts     bool
	windows    int
	windowsSeq int64
	onWindows  func()
}

// Exit is why the shared instance ended, as the daemon said (switchboard/instanceExited), or
// why this window gave up on the daemon (Daemon).
type Exit struct {
	Reason     string `json:"reason"`
	StderrTail string `json:"stderrTail"`
	// Reattach: the daemon ended the instance as it exits (a signal, `daemon restart`), not the
	// server: the window attaches again. Read sets Daemon from it.
	Reattach bool `json:"reattach,omitempty"`
	// Stopped: a person stopped the daemon (`switchboard daemon stop`), not a fault: the window
	// shows the server stopped (a Reconnect starts it again), not failed.
	Stopped bool `json:"stopped,omitempty"`
	// Daemon: the daemon, not the server, failed (it stopped answering).
	Daemon bool `json:"-"`
}

// Attach connects to the daemon (starting it when cfg.Start is set and none runs) and attaches
// to the instance of req, which the daemon starts if no window runs it yet. It returns once the
// instance is initialized; the window's client then sends initialize over the Conn as to any
// server. An error means: run the server in the window.
func Attach(ctx context.Context, cfg Config, req Request) (*Conn, error) {
	h := hello{Broker: Major, Minor: Minor, Build: cfg.Build, Features: features, Require: cfg.Require, Instance: &req, Existing: cfg.Existing}
	if !pipesSupported || !offerPipes {
		h.Features = slices.DeleteFunc(slices.Clone(h.Features), func(f string) bool { return f == featurePipes })
	}
	if !offerWindows {
		h.Features = slices.DeleteFunc(slices.Clone(h.Features), func(f string) bool { return f == featureWindows })
	}
	if cfg.Existing {
		cfg.Start = nil
	}
	c, rw, r, reply, err := connect(ctx, cfg, h)
	var pipes []io.Closer
	if err == nil && reply.Pipes {
		if rw, r, pipes, err = takePipes(reply.fds, r); err != nil {
			c.Close() // ignore error: failed
		}
	}
	if reply.NoInstance {
		return nil, ErrNoInstance
	}
	if err != nil {
		return nil, err
	}
	conn := &Conn{c: c, rw: rw, r: r, pipes: pipes, reply: reply, build: cfg.Build, scope: req.Launch.Scope, pong: make(chan struct{}, 1), done: make(chan struct{}),
		counts: slices.Contains(h.Features, featureWindows), windows: reply.Windows}
	hb := cfg.Heartbeat
	if hb == 0 {
		hb = defaultHeartbeat
	}
	if hb > 0 {
		go conn.heartbeat(hb)
	}
	return conn, nil
}

// defaultHeartbeat: two missed pings end an attachment to a stopped daemon within 18 s; with
// the re-attach's 5 s hello timeout, a window runs the server itself within 25 s (the issue's
// bound).
const defaultHeartbeat = 6 * time.Second

// heartbeat pings the daemon, which answers ping itself (never asking the server), and ends the
// Conn when two pings in a row got no answer: a daemon stopped with SIGSTOP, or hung, still
// holds the socket open and would leave the window's calls waiting for their timeouts.
func (c *Conn) heartbeat(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	misses, n := 0, 0
	waiting := false
	for {
		if waiting {
			select {
			case <-c.pong:
				misses = 0
			default:
				if misses++; misses >= 2 {
					c.setExit(&Exit{Reason: "the shared-server daemon stopped answering (pid " + strconv.Itoa(c.reply.Pid) + ")", Daemon: true})
					c.closeIO() // ends the window's reads with an error
					return
				}
			}
		}
		n++
		ping := []byte(`{"jsonrpc":"2.0","id":"` + heartbeatID + strconv.Itoa(n) + `","method":"ping"}` + "\n")
		c.wmu.Lock()
		_ = c.rw.SetWriteDeadline(time.Now().Add(every)) // ignore error: sockets and pipes take deadlines
		_, err := c.rw.Write(ping)
		_ = c.rw.SetWriteDeadline(time.Time{})
		c.wmu.Unlock()
		if err != nil && !isTimeout(err) {
			return
		}
		waiting = true
		select {
		case <-t.C:
		case <-c.done:
			return
		}
	}
}

// heartbeatID prefixes the heartbeat's request ids; the daemon's answers to them start with
// pongPrefix and are kept from the window.
const heartbeatID = "switchboard-heartbeat-"

var pongPrefix = []byte(`{"jsonrpc":"2.0","id":"` + heartbeatID)

// GetStatus asks a running daemon for its state; it never starts one.
func GetStatus(ctx context.Context, cfg Config) (*Status, error) {
	cfg.Start = nil
	c, _, _, reply, err := connect(ctx, cfg, hello{Broker: Major, Minor: Minor, Build: cfg.Build, Op: opStatus})
	if err != nil {
		return nil, err
	}
	c.Close() // ignore error: one answer was all
	if reply.Status == nil {
		return nil, errors.New("broker: status: the daemon sent none")
	}
	return reply.Status, nil
}

// Stop asks a running daemon to stop: its windows' shared servers end (their calls in flight
// get an error) and the windows attach again to a new daemon.
func Stop(ctx context.Context, cfg Config) error {
	cfg.Start = nil
	c, _, _, _, err := connect(ctx, cfg, hello{Broker: Major, Minor: Minor, Build: cfg.Build, Op: opStop})
	if err != nil {
		return err
	}
	c.Close() // ignore error: done
	return nil
}

// Drain asks a running daemon to hand over (`switchboard daemon restart`): it gives up its
// socket at once, so the next window starts a new daemon, and exits once the windows attached
// to it have left; no call in flight fails.
func Drain(ctx context.Context, cfg Config) error {
	cfg.Start = nil
	c, _, _, _, err := connect(ctx, cfg, hello{Broker: Major, Minor: Minor, Build: cfg.Build, Op: opDrain})
	if err != nil {
		return err
	}
	c.Close() // ignore error: done
	return nil
}

// Watch waits until the daemon runs an instance of req's launch again (another window's
// Reconnect after the instance ended) and returns nil then, or an error (no daemon, the daemon
// exiting or lacking the feature, ctx ended). It starts neither a daemon nor an instance.
func Watch(ctx context.Context, cfg Config, req Request) error {
	cfg.Start = nil
	for attempt := 0; ; attempt++ {
		c, _, _, reply, err := connect(ctx, cfg, hello{Broker: Major, Minor: Minor, Build: cfg.Build, Op: opWatch, Instance: &req})
		if err != nil {
			return err
		}
		c.Close() // ignore error: one answer was all
		switch {
		case reply.Started:
			return nil
		case reply.Retry && attempt < 3:
			// The daemon is being replaced (`daemon restart`): watch the new one, which the
			// next window to need it starts.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
			}
		default:
			return errors.New("broker: watch: the daemon ended the watch")
		}
	}
}

// connect finds (or starts) the daemon, sends the hello and reads the reply. rw is the connection
// as read and written (raw system calls where rawio takes the socket: a frame then does not wake
// the runtime's monitor thread, as the window's pipes to its own servers do not), r reads rw.
func connect(ctx context.Context, cfg Config, h hello) (*net.UnixConn, rawio.Conn, *bufio.Reader, helloReply, error) {
	dir := cfg.Dir
	var err error
	if dir == "" {
		if dir, err = DefaultDir(); err != nil {
			return nil, nil, nil, helloReply{}, err
		}
	} else if err := EnsureDir(dir); err != nil {
		return nil, nil, nil, helloReply{}, err
	}
	p := PathsIn(dir)
	line, err := json.Marshal(h)
	if err != nil {
		return nil, nil, nil, helloReply{}, fmt.Errorf("broker: hello: %w", err)
	}
	line = append(line, '\n')
	var last error
	for attempt := range 3 {
		if attempt > 0 {
			// The daemon we reached was exiting: its listener closes in a moment, then a new
			// one is started under the lock.
			select {
			case <-ctx.Done():
				return nil, nil, nil, helloReply{}, ctx.Err()
			case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
			}
		}
		c, err := dial(ctx, p.Sock)
		if err != nil {
			if !notRunning(err) {
				return nil, nil, nil, helloReply{}, err
			}
			if cfg.Start == nil {
				return nil, nil, nil, helloReply{}, ErrNotRunning
			}
			if c, err = start(ctx, cfg, p); err != nil {
				return nil, nil, nil, helloReply{}, err
			}
		}
		rw := rawio.OrConn(c)
		var src io.Reader = rw
		if h.Op == opAttach && pipesSupported && slices.Contains(h.Features, featurePipes) {
			// The final reply may come with the pipes' descriptors, which a plain read drops.
			src = &fdReader{c: c}
		}
		r, reply, err := handshake(ctx, c, rw, src, line)
		if fr, ok := src.(*fdReader); ok {
			if reply.Pipes && err == nil {
				reply.fds = fr.fds
			} else {
				closeFDs(fr.fds) // none are expected
			}
		}
		if err == nil {
			return c, rw, r, reply, nil
		}
		c.Close() // ignore error: failed
		last = err
		// A daemon that is exiting says so (Retry); one that was killed a moment ago may still
		// hold its listening socket while its other descriptors close (exit closes them in
		// order), so a window that saw its attachment end can connect to it and be reset
		// without a word (or have its hello refused with a broken pipe, when the daemon's end of
		// the connection closed before the window wrote): that too is a daemon going away, and
		// the next attempt starts a new one.
		if !reply.Retry && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, io.EOF) {
			return nil, nil, nil, reply, err
		}
	}
	return nil, nil, nil, helloReply{}, last
}

// notRunning: nothing listens on the socket (no file, or a stale one).
func notRunning(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// dial connects and checks that the daemon runs as this user before anything is sent: a hello
// carries resolved values, and a socket planted by another user (at the /tmp fallback) must hear
// none of them. Any failure of the check counts as a stranger.
func dial(ctx context.Context, sock string) (*net.UnixConn, error) {
	d := net.Dialer{Timeout: dialTimeout}
	nc, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, fmt.Errorf("broker: dial: %w", err)
	}
	c := nc.(*net.UnixConn)
	uid, pid, err := peerCred(c)
	if err != nil || uid != os.Geteuid() {
		c.Close() // ignore error: refused
		if err == nil {
			err = fmt.Errorf("it runs as uid %d (pid %d)", uid, pid)
		}
		return nil, fmt.Errorf("broker: refused the daemon at %s: %w", sock, err)
	}
	return c, nil
}

// start starts the daemon under the start lock, so that a start storm of windows gives one
// daemon: whoever waited for the lock dials again first (gopls's race, mcphub.nvim #19).
func start(ctx context.Context, cfg Config, p Paths) (*net.UnixConn, error) {
	lock := flock.New(p.Lock, flock.SetPermissions(0o600))
	defer lock.Close() // ignore error: releases the lock too
	lctx, cancel := context.WithTimeout(ctx, lockTimeout)
	locked, err := lock.TryLockContext(lctx, 10*time.Millisecond)
	cancel()
	if err != nil || !locked {
		return nil, fmt.Errorf("broker: start lock %s: %v", p.Lock, err)
	}
	defer lock.Unlock() // ignore error: Close releases it anyway
	if c, err := dial(ctx, p.Sock); err == nil || !notRunning(err) {
		return c, err
	}
	if err := removeStale(p.Sock); err != nil {
		return nil, fmt.Errorf("broker: start: %w", err)
	}
	cmd := cfg.Start(p.Sock)
	rr, rw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("broker: start: %w", err)
	}
	defer rr.Close() // ignore error: our end
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, rw)
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Env = append(cmd.Env, ReadyFDVar+"="+strconv.Itoa(fd))
	cmd.Stdin, cmd.Stdout = nil, nil
	newSession(cmd) // out of the window's session and process group: it outlives the window
	err = cmd.Start()
	rw.Close() // ignore error: the daemon has its copy
	if err != nil {
		return nil, fmt.Errorf("broker: start daemon: %w", err)
	}
	go cmd.Wait() // ignore error: reaped when it exits, if this window still runs
	_ = rr.SetReadDeadline(time.Now().Add(readyTimeout))
	buf := make([]byte, 16)
	n, _ := io.ReadFull(rr, buf[:6]) // ignore error: judged by what arrived
	if string(buf[:n]) != "ready\n" {
		return nil, fmt.Errorf("broker: the daemon (pid %d) did not get ready within %s", cmd.Process.Pid, readyTimeout)
	}
	if cfg.Log != nil {
		cfg.Log.Info("broker: started the shared-server daemon", "pid", cmd.Process.Pid, "socket", p.Sock)
	}
	return dial(ctx, p.Sock)
}

// takePipes takes the two pipe ends that came with an attach's final reply (featurePipes): the
// window writes its frames to the first and reads the daemon's from the second.
func takePipes(fds []int, r *bufio.Reader) (rawio.Conn, *bufio.Reader, []io.Closer, error) {
	if len(fds) != 2 || r.Buffered() > 0 {
		closeFDs(fds)
		return nil, nil, nil, errors.New("broker: the daemon's reply announced pipes that did not arrive")
	}
	up := rawio.Or(os.NewFile(uintptr(fds[0]), "broker-up"))
	down := rawio.Or(os.NewFile(uintptr(fds[1]), "broker-down"))
	return up, bufio.NewReaderSize(down, 64<<10), []io.Closer{up, down}, nil
}

// handshake sends the hello and reads the reply (waiting, for an attach, while the daemon starts
// the instance).
func handshake(ctx context.Context, c *net.UnixConn, rw rawio.Conn, src io.Reader, hello []byte) (_ *bufio.Reader, _ helloReply, err error) {
	// The context's end closes the connection, which no later step undoes. It set the deadline
	// to now, and the deadlines set and cleared below (a pending reply clears it) could undo that:
	// a watch cancelled just after its pending reply then waited for the daemon for good, and its
	// window's host did not exit when the editor closed it (TestHandshakeCancelledWhilePending).
	stop := context.AfterFunc(ctx, func() { c.Close() }) // ignore error: the caller's close says
	defer func() {
		if !stop() && err == nil { // the context ended: the connection is closed or closing
			err = fmt.Errorf("broker: hello: %w", ctx.Err())
		}
	}()
	if _, err := rw.Write(hello); err != nil {
		return nil, helloReply{}, fmt.Errorf("broker: hello: %w", err)
	}
	size := 64 << 10 // the attachment's reader from here on
	if _, ok := src.(*fdReader); ok {
		size = 4 << 10 // the replies only: the frames come on a pipe (a longer reply is read in parts)
	}
	r := bufio.NewReaderSize(src, size)
	// A daemon answers a hello at once (an attach with a pending reply first): one that does not
	// is stopped or hung, and the window should not wait out its startup timeout on it.
	_ = c.SetReadDeadline(time.Now().Add(helloTimeout)) // ignore error: a socket takes deadlines
	var reply helloReply
	for first := true; ; first = false {
		line, err := readFrame(r, maxHello)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				err = ctx.Err()
			case first && isTimeout(err):
				err = fmt.Errorf("the daemon did not answer within %s", helloTimeout)
			}
			return nil, helloReply{}, fmt.Errorf("broker: hello: %w", err)
		}
		reply = helloReply{}
		if err := json.Unmarshal(line, &reply); err != nil {
			return nil, helloReply{}, fmt.Errorf("broker: hello reply: %w", err)
		}
		if !reply.Pending {
			break
		}
		_ = c.SetReadDeadline(time.Time{}) // the instance may take its time to start (npx)
	}
	_ = c.SetReadDeadline(time.Time{})
	if reply.Error != "" {
		return nil, reply, fmt.Errorf("broker: daemon (pid %d, build %s): %s", reply.Pid, reply.Build, reply.Error)
	}
	if reply.Broker != Major {
		return nil, reply, fmt.Errorf("broker: daemon speaks broker protocol %d, not %d", reply.Broker, Major)
	}
	return r, reply, nil
}

// Scope is the instance's scope (ScopeUser or ScopeWorkspace).
func (c *Conn) Scope() string { return c.scope }

// DaemonPid is the daemon's process id.
func (c *Conn) DaemonPid() int { return c.reply.Pid }

// DaemonBuild is the daemon's version.
func (c *Conn) DaemonBuild() string { return c.reply.Build }

// Skew is the warning to show when the daemon runs another build (empty when it does not).
func (c *Conn) Skew() string { return SkewWarning(c.reply.Build, c.build) }

// Instance is the instance's opaque id (equal for windows that share it).
func (c *Conn) Instance() string { return c.reply.Instance }

// ServerPid is the shared server's process id.
func (c *Conn) ServerPid() int { return c.reply.ServerPid }

// Windows is how many windows are attached to the instance, this one included: as the daemon
// last said (switchboard/windowsChanged), or, from a daemon of an older build that does not say,
// when this one attached.
func (c *Conn) Windows() int {
	c.exitMu.Lock()
	defer c.exitMu.Unlock()
	return c.windows
}

// OnWindows sets f to be called when Windows changes (from the goroutine that reads the Conn).
func (c *Conn) OnWindows(f func()) {
	c.exitMu.Lock()
	defer c.exitMu.Unlock()
	c.onWindows = f
}

// windowsPrefix is the daemon's switchboard/windowsChanged, as it writes it.
var windowsPrefix = []byte(`{"jsonrpc":"2.0","method":"switchboard/windowsChanged"`)

// countNews takes a switchboard/windowsChanged the daemon wrote.
func (c *Conn) countNews(line []byte) {
	var n struct {
		Params struct {
			Windows int   `json:"windows"`
			Seq     int64 `json:"seq"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &n) != nil || n.Params.Windows <= 0 {
		return
	}
	c.exitMu.Lock()
	if n.Params.Seq <= c.windowsSeq {
		c.exitMu.Unlock()
		return // older news than what this window has
	}
	changed := c.windows != n.Params.Windows
	c.windows, c.windowsSeq = n.Params.Windows, n.Params.Seq
	f := c.onWindows
	c.exitMu.Unlock()
	if changed && f != nil {
		f()
	}
}

// Exited returns why the instance ended, once the daemon said so (nil before, or when the daemon
// itself went away without a word).
func (c *Conn) Exited() *Exit {
	c.exitMu.Lock()
	defer c.exitMu.Unlock()
	return c.exit
}

// exitedPrefix is how the daemon writes its own notification; no frame from a server can start
// so (the daemon relays no server frame with a method of this name).
var exitedPrefix = []byte(`{"jsonrpc":"2.0","method":"switchboard/instanceExited"`)

// drainingPrefix is the daemon's switchboard/daemonDraining, as it writes it.
var drainingPrefix = []byte(`{"jsonrpc":"2.0","method":"switchboard/daemonDraining"`)

// Notice is what the daemon said about itself while this window uses it ("" : nothing): that it
// is being replaced by `switchboard daemon restart`.
func (c *Conn) Notice() string {
	c.exitMu.Lock()
	defer c.exitMu.Unlock()
	return c.notice
}

// OnNotice sets f to be called when Notice changes (from the goroutine that reads the Conn).
func (c *Conn) OnNotice(f func()) {
	c.exitMu.Lock()
	defer c.exitMu.Unlock()
	c.onNotice = f
}

// Read reads the daemon's frames, keeping switchboard/instanceExited for Exited and
// switchboard/daemonDraining for Notice.
func (c *Conn) Read(p []byte) (int, error) {
	for len(c.rbuf) == 0 {
		// In place in c.r's buffer (no copy per frame): c.r is read again only once rbuf, the
		// caller's share of this frame, is used up.
		line, err := nextFrame(c.r, maxFrame)
		if err != nil {
			return 0, err
		}
		if bytes.HasPrefix(line, pongPrefix) {
			select {
			case c.pong <- struct{}{}:
			default:
			}
			continue
		}
		if c.counts && bytes.HasPrefix(line, windowsPrefix) {
			c.countNews(line)
			continue
		}
		if bytes.HasPrefix(line, drainingPrefix) {
			var n struct {
				Params struct {
					Message string `json:"message"`
				} `json:"params"`
			}
			if json.Unmarshal(line, &n) == nil {
				c.exitMu.Lock()
				c.notice = n.Params.Message
				f := c.onNotice
				c.exitMu.Unlock()
				if f != nil {
					f()
				}
			}
			continue
		}
		if bytes.HasPrefix(line, exitedPrefix) {
			var n struct {
				Params Exit `json:"params"`
			}
			if json.Unmarshal(line, &n) == nil {
				n.Params.Daemon = n.Params.Reattach
				c.setExit(&n.Params)
			}
			continue
		}
		c.rbuf = line
	}
	n := copy(p, c.rbuf)
	c.rbuf = c.rbuf[n:]
	return n, nil
}

func (c *Conn) setExit(e *Exit) {
	c.exitMu.Lock()
	defer c.exitMu.Unlock()
	if c.exit == nil {
		c.exit = e
	}
}

// Write writes frames to the daemon. p must hold whole newline-terminated lines: the heartbeat
// writes its pings between two Writes.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.rw.SetWriteDeadline(c.deadline) // ignore error: sockets and pipes take deadlines
	return c.rw.Write(p)
}

// SetWriteDeadline bounds the window's Writes (the heartbeat keeps deadlines of its own).
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.deadline = t
	return nil
}

// InstanceExited reports whether the daemon said the server itself ended (then a new attach
// starts it again once: a Reconnect's business). False when the daemon went away or stopped
// answering: then attaching again (to a new daemon) is the fix.
func (c *Conn) InstanceExited() bool {
	e := c.Exited()
	return e != nil && !e.Daemon
}

// StoppedOnPurpose reports whether the daemon said a person stopped it (`switchboard daemon
// stop`): nothing failed.
func (c *Conn) StoppedOnPurpose() bool {
	e := c.Exited()
	return e != nil && e.Stopped && !e.Daemon
}

// ExitInfo is Exited as two strings ("" when the daemon said nothing).
func (c *Conn) ExitInfo() (reason, stderrTail string) {
	if e := c.Exited(); e != nil {
		return e.Reason, e.StderrTail
	}
	return "", ""
}

// Close ends the attachment: the daemon cancels this window's calls in flight upstream.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() { close(c.done) })
	return c.closeIO()
}

// closeIO closes the socket and the pipes.
func (c *Conn) closeIO() error {
	err := c.c.Close()
	for _, p := range c.pipes {
		p.Close() // ignore error: the socket's says
	}
	return err
}

var _ io.ReadWriteCloser = (*Conn)(nil)

// offerPipes: a window asks for pipes (featurePipes) where they exist; tests turn it off to be a
// window of an older build.
var offerPipes = true

// offerWindows: a window asks to hear the number of windows (featureWindows); tests turn it off
// to be a window of an older build.
var offerWindows = true

// usesPipes reports whether the frames move on pipes (featurePipes) rather than the socket.
func (c *Conn) usesPipes() bool { return c.pipes != nil }
