//go:build unix

package broker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestIdleExit: once its last window left and the idle time passed, the daemon exits, leaving
// no socket, no info file and no server process.
func TestIdleExit(t *testing.T) {
	dir, done := serveInProcess(t, 50*time.Millisecond)
	w := attachWin(t, "A", Config{Dir: dir, Build: "test"}, request(launch()))
	w.initialize()
	pid := w.c.ServerPid()
	if _, err := os.Stat(PathsIn(dir).Info); err != nil {
		t.Errorf("no daemon info file while it runs: %v", err)
	}
	select {
	case <-done:
		t.Fatal("the daemon exited while a window was attached")
	default:
	}
	w.c.Close()
	<-done
	for _, p := range []string{PathsIn(dir).Sock, PathsIn(dir).Info} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
	waitFor(t, "the server to be gone", func() bool { return gone(pid) })
}

// TestIdleNone: with no idle time (a negative Idle: daemonIdleSeconds 0) the daemon still waits
// for the window that started it, and exits as soon as its last window left, its server with it.
// Before, no idle time meant the default of a minute.
func TestIdleNone(t *testing.T) {
	dir, done := serveInProcess(t, -1)
	w := attachWin(t, "A", Config{Dir: dir, Build: "test"}, request(launch()))
	w.initialize()
	pid := w.c.ServerPid()
	w.c.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // a third of the default minute: a hang guard, not a timing
		t.Fatal("the daemon did not exit after its last window left")
	}
	waitFor(t, "the server to be gone", func() bool { return gone(pid) })
}

// TestInstanceLinger: an instance whose last window left stops after the idle time while the
// daemon keeps serving another window; the next attach starts it again.
func TestInstanceLinger(t *testing.T) {
	dir, _ := serveInProcess(t, 50*time.Millisecond)
	cfg := Config{Dir: dir, Build: "test"}
	keep := attachWin(t, "keep", cfg, request(launch("--instructions", "other")))
	keep.initialize()
	w := attachWin(t, "A", cfg, request(launch()))
	pid := w.c.ServerPid()
	w.c.Close()
	waitFor(t, "the unused instance to stop", func() bool { return gone(pid) })
	if gone(keep.c.ServerPid()) {
		t.Fatal("the instance still in use was stopped")
	}
	w2 := attachWin(t, "A2", cfg, request(launch()))
	if w2.c.ServerPid() == pid {
		t.Fatal("attach after the linger reused a stopped instance")
	}
	w2.initialize()
}

// TestStartStorm: eight windows that find no daemon at once start exactly one, and it starts
// the shared server once.
func TestStartStorm(t *testing.T) {
	dir := testDir(t)
	var starts atomic.Int32
	start := daemonCmd(dir, time.Minute)
	cfg := Config{Dir: dir, Build: "test", Start: func(sock string) *exec.Cmd {
		starts.Add(1)
		return start(sock)
	}}
	req := request(launch())
	const n = 8
	conns := make([]*Conn, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := Attach(context.Background(), cfg, req)
			if err != nil {
				t.Errorf("window %d: %v", i, err)
				return
			}
			conns[i] = c
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	t.Cleanup(func() {
		Stop(context.Background(), Config{Dir: dir})
		waitFor(t, "the daemon to exit", func() bool { return gone(conns[0].DaemonPid()) })
	})
	if got := starts.Load(); got != 1 {
		t.Errorf("%d windows started %d daemons, want 1", n, got)
	}
	for i, c := range conns {
		defer c.Close()
		if c.DaemonPid() != conns[0].DaemonPid() || c.ServerPid() != conns[0].ServerPid() {
			t.Errorf("window %d: daemon %d server %d; window 0: daemon %d server %d",
				i, c.DaemonPid(), c.ServerPid(), conns[0].DaemonPid(), conns[0].ServerPid())
		}
	}
	st, err := GetStatus(context.Background(), Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Instances) != 1 || st.Instances[0].Windows != n {
		t.Errorf("status %+v: want one instance with %d windows", st, n)
	}
}

// TestDaemonKilled: kill -9 of the daemon while two windows have a call in flight: both
// connections end at once (never at a call timeout), the server dies with the daemon, and the
// next attach starts a new daemon with a new server.
func TestDaemonKilled(t *testing.T) {
	dir := testDir(t)
	cfg := Config{Dir: dir, Build: "test", Start: daemonCmd(dir, time.Minute)}
	// --linger: a server that ignores its closed stdin; --spawn-child: with a child of its own in
	// its process group, which no signal reaches when the daemon dies: the next daemon's start
	// sweeps it by its owner tag.
	req := request(launch("--linger", "--spawn-child"))
	wins := []*win{attachWin(t, "A", cfg, req), attachWin(t, "B", cfg, req)}
	for _, w := range wins {
		w.initialize()
		// No progress token: a server writing progress to a dead daemon would die of SIGPIPE,
		// and this test is about the parent-death signal.
		w.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":300}}}`)
		w.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	}
	for _, w := range wins {
		w.until("8") // the server has read the slow call before this one
	}
	daemon, server := wins[0].c.DaemonPid(), wins[0].c.ServerPid()
	if err := syscall.Kill(daemon, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, w := range wins {
		select {
		case <-w.ended: // EOF or reset: the window's transport fails its calls at once
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the connection did not end after the daemon was killed", w.name)
		}
	}
	waitFor(t, "the server to die with the daemon", func() bool { return gone(server) })
	w := attachWin(t, "C", cfg, req)
	if left := tagged(daemon); len(left) > 0 {
		t.Errorf("processes of the killed daemon still run after a new one started: %v", left)
	}
	if w.c.DaemonPid() == daemon || w.c.ServerPid() == server {
		t.Fatalf("after the kill: daemon %d server %d, the dead ones were %d %d", w.c.DaemonPid(), w.c.ServerPid(), daemon, server)
	}
	w.initialize()
	w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"back"}}}`)
	if fs := w.until("1"); text(fs[len(fs)-1]) != "back" {
		t.Fatalf("call under the new daemon: %s", fs[len(fs)-1].raw)
	}
	Stop(context.Background(), Config{Dir: dir})
}

// TestWindowKilledCancelsUpstream: a window process killed mid-call has its call cancelled
// upstream, by the id the daemon gave it, while another window's call on the same instance
// completes.
func TestWindowKilledCancelsUpstream(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	record := dir + "/record"
	req := request(launch("--record", record))
	b := attachWin(t, "B", Config{Dir: dir, Build: "test"}, req)
	b.initialize()
	js, _ := json.Marshal(req)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), modeVar+"=window", dirVar+"="+dir, launchVar+"="+string(js))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "running\n" {
		t.Fatalf("window process: %q %v", line, err)
	}
	b.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0.5}}}`)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	var slowID string
	waitFor(t, "notifications/cancelled upstream for the killed window's call", func() bool {
		data, _ := os.ReadFile(record)
		for _, l := range strings.Split(string(data), "\n") {
			l, ok := strings.CutPrefix(l, "> ")
			if !ok {
				continue
			}
			var m struct {
				ID     json.RawMessage
				Method string
				Params struct {
					Name      string
					RequestID json.RawMessage `json:"requestId"`
				}
			}
			json.Unmarshal([]byte(l), &m)
			if m.Method == "tools/call" && m.Params.Name == "slow" && slowID == "" {
				slowID = string(m.ID) // the killed window's call came first
			}
			if m.Method == "notifications/cancelled" {
				if string(m.Params.RequestID) != slowID {
					t.Fatalf("cancelled %s upstream, the killed window's call was %s", m.Params.RequestID, slowID)
				}
				return true
			}
		}
		return false
	})
	fs := b.until("2")
	if got := text(fs[len(fs)-1]); !strings.HasPrefix(got, "slept") {
		t.Fatalf("B's call after A was killed: %s", fs[len(fs)-1].raw)
	}
}

// TestInstanceCrash: a shared server that dies mid-call ends the call with an error, tells every
// window why with its stderr tail, and the next attach starts it again.
func TestInstanceCrash(t *testing.T) {
	w := twoWindows(t, "--crash-after", "1")
	a, b, cfg, req := w.a, w.b, w.cfg, w.req
	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"one"}}}`)
	a.until("1")
	a.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"two"}}}`)
	fs := a.until("2")
	if last := fs[len(fs)-1]; last.Error == nil {
		t.Errorf("the call the server died in: %s, want an error", last.raw)
	}
	for _, w := range []*win{a, b} {
		<-w.ended
		e := w.c.Exited()
		if e == nil || !strings.Contains(e.StderrTail, "crashing in call 2") || e.Reason == "" || !w.c.InstanceExited() || w.c.StoppedOnPurpose() {
			t.Errorf("%s: Exited() = %+v, want the reason and the stderr tail (a crash, not a stop)", w.name, e)
		}
	}
	c := attachWin(t, "C", cfg, req)
	if c.c.ServerPid() == a.c.ServerPid() {
		t.Error("attach after the crash got the dead server")
	}
	c.initialize()
}

// TestStartFailure: a server that cannot start fails the attach with its stderr, and the window
// runs it itself.
func TestStartFailure(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	_, err := Attach(context.Background(), Config{Dir: dir, Build: "test"}, request(launch("--exit-at-start")))
	if err == nil || !strings.Contains(err.Error(), "exiting at start as asked") {
		t.Fatalf("Attach = %v, want the server's stderr", err)
	}
}

// TestCallNeverStartsDaemon: without Start (switchboard call, check) no daemon is started.
func TestCallNeverStartsDaemon(t *testing.T) {
	dir := testDir(t)
	_, err := Attach(context.Background(), Config{Dir: dir, Build: "test"}, request(launch()))
	if !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Attach = %v, want ErrNotRunning", err)
	}
	if _, err := os.Lstat(PathsIn(dir).Sock); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a socket appeared: %v", err)
	}
}

// TestDrain: `daemon restart` hands over without failing a call: the old daemon gives up its
// socket, a new window starts a new daemon, the old one finishes its window's call and exits
// when that window leaves, and never unlinks its successor's socket.
func TestDrain(t *testing.T) {
	dir := testDir(t)
	cfg := Config{Dir: dir, Build: "test", Start: daemonCmd(dir, time.Minute)}
	a := attachWin(t, "A", cfg, request(launch()))
	a.initialize()
	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0.5}}}`)
	noticed := make(chan struct{})
	var once sync.Once
	a.c.OnNotice(func() { once.Do(func() { close(noticed) }) })
	if err := Drain(context.Background(), Config{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	// The window is told at once why its server is still on the old daemon.
	select {
	case <-noticed:
	case <-time.After(20 * time.Second):
		t.Fatal("the window was not told of the drain")
	}
	if n := a.c.Notice(); !strings.Contains(n, "is being replaced (`switchboard daemon restart`)") {
		t.Fatalf("Notice() = %q", n)
	}
	b := attachWin(t, "B", cfg, request(launch()))
	if b.c.DaemonPid() == a.c.DaemonPid() {
		t.Fatal("a window after the drain reached the draining daemon")
	}
	t.Cleanup(func() { Stop(context.Background(), Config{Dir: dir}) })
	if fs := a.until("1"); !strings.HasPrefix(text(fs[len(fs)-1]), "slept") {
		t.Fatalf("the call in flight during the drain: %s", fs[len(fs)-1].raw)
	}
	old := a.c.DaemonPid()
	a.c.Close()
	waitFor(t, "the drained daemon to exit", func() bool { return gone(old) })
	c := attachWin(t, "C", Config{Dir: dir, Build: "test"}, request(launch()))
	if c.c.DaemonPid() != b.c.DaemonPid() {
		t.Fatalf("after the old daemon exited, C reached daemon %d, want %d", c.c.DaemonPid(), b.c.DaemonPid())
	}
}

// TestDaemonStopped: a daemon stopped with SIGSTOP keeps its socket open but answers nothing;
// the window's heartbeat ends the attachment and says why, so the window can fall back.
func TestDaemonStopped(t *testing.T) {
	dir := testDir(t)
	// A second between pings: short enough to see the stop soon, long enough that a live daemon on
	// a loaded machine is not taken for a stopped one before initialize is answered.
	cfg := Config{Dir: dir, Build: "test", Start: daemonCmd(dir, time.Minute), Heartbeat: time.Second}
	w := attachWin(t, "A", cfg, request(launch()))
	w.initialize()
	daemon := w.c.DaemonPid()
	t.Cleanup(func() { syscall.Kill(daemon, syscall.SIGKILL) })
	if err := syscall.Kill(daemon, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the attachment to a stopped daemon did not end")
	}
	if e := w.c.Exited(); e == nil || !strings.Contains(e.Reason, "stopped answering") || w.c.InstanceExited() {
		t.Fatalf("Exited() = %+v, want the daemon named as not answering", e)
	}
	// A new attach does not wait out its own timeout on the stopped daemon.
	defer func(d time.Duration) { helloTimeout = d }(helloTimeout)
	helloTimeout = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := Attach(ctx, cfg, request(launch())); err == nil || !strings.Contains(err.Error(), "did not answer within") {
		t.Fatalf("Attach to a stopped daemon: %v", err)
	}
}

// TestExistingOnly: switchboard call and check attach to an instance a window runs, and start
// neither a daemon nor an instance.
func TestExistingOnly(t *testing.T) {
	dir := testDir(t)
	one := Config{Dir: dir, Build: "test", Existing: true, Start: daemonCmd(dir, time.Minute)}
	if _, err := Attach(context.Background(), one, request(launch())); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("with no daemon: %v, want ErrNotRunning (and no daemon started)", err)
	}
	w := attachWin(t, "window", Config{Dir: dir, Build: "test", Start: daemonCmd(dir, time.Minute)}, request(launch()))
	t.Cleanup(func() { Stop(context.Background(), Config{Dir: dir}) })
	if _, err := Attach(context.Background(), one, request(launch("--instructions", "other"))); !errors.Is(err, ErrNoInstance) {
		t.Fatalf("for a server no window runs: %v, want ErrNoInstance", err)
	}
	warm := attachWin(t, "call", one, request(launch()))
	if warm.c.ServerPid() != w.c.ServerPid() {
		t.Fatalf("call got server %d, the window runs %d", warm.c.ServerPid(), w.c.ServerPid())
	}
	st, err := GetStatus(context.Background(), Config{Dir: dir})
	if err != nil || len(st.Instances) != 1 {
		t.Fatalf("status %+v %v: want the one instance", st, err)
	}
}

// TestDaemonEndsSaysWhy: a daemon that ends with windows attached tells each one why in one
// sentence: stopped by `switchboard daemon stop` (the server shows failed until a Reconnect), or
// ended from outside, by a signal (the window attaches again), never just a closed connection.
func TestDaemonEndsSaysWhy(t *testing.T) {
	t.Run("stop", func(t *testing.T) {
		dir, done := serveInProcess(t, time.Minute)
		w := attachWin(t, "A", Config{Dir: dir, Build: "test"}, request(launch()))
		w.initialize()
		if err := Stop(context.Background(), Config{Dir: dir}); err != nil {
			t.Fatal(err)
		}
		<-w.ended
		<-done
		e := w.c.Exited()
		if e == nil || !strings.Contains(e.Reason, "stopped with `switchboard daemon stop`") || !w.c.InstanceExited() {
			t.Fatalf("Exited() = %+v, want the stop named, and the server ended for good", e)
		}
		// A person's stop is no failure: the window says it stopped, not failed.
		if !w.c.StoppedOnPurpose() {
			t.Errorf("Exited() = %+v, want it said to be a person's stop", e)
		}
	})
	t.Run("signal", func(t *testing.T) {
		dir := testDir(t)
		ctx, end := context.WithCancelCause(context.Background())
		ready, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			if err := Serve(ctx, Options{Dir: dir, Build: "test", Idle: time.Minute, Ready: closeOnWrite(ready)}); err != nil {
				t.Errorf("Serve: %v", err)
			}
		}()
		t.Cleanup(func() { end(nil); <-done })
		<-ready
		w := attachWin(t, "A", Config{Dir: dir, Build: "test"}, request(launch()))
		w.initialize()
		end(errors.New("by terminated"))
		<-w.ended
		<-done
		e := w.c.Exited()
		if e == nil || !strings.Contains(e.Reason, "daemon was ended (by terminated)") || w.c.InstanceExited() || w.c.StoppedOnPurpose() {
			t.Fatalf("Exited() = %+v, want the signal named, and the window to attach again", e)
		}
	})
}

// TestServerStopsReading: a server that answers initialize and then reads nothing more leaves the
// daemon's write of a frame larger than the pipe unfinished; after stall the daemon stops it and
// the window hears why. (The daemon writes a frame the pipe takes at once without a deadline, and
// finishes one it does not under the deadline: without it this write would wait for good.)
func TestServerStopsReading(t *testing.T) {
	saved := stall
	t.Cleanup(func() { stall = saved }) // after the daemon's end (cleanups run last first)
	stall = 300 * time.Millisecond
	dir, _ := serveInProcess(t, time.Minute)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	deaf := `read l; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"deaf","version":"1"}}}'; exec sleep 600`
	l := Launch{Command: sh, Args: []string{"-c", deaf}, Env: []string{"PATH=" + os.Getenv("PATH")}, Scope: ScopeUser, Source: SourceUser}
	w := attachWin(t, "A", Config{Dir: dir, Build: "test", Heartbeat: -1}, request(l))
	w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"text":"%s"}}}`, strings.Repeat("x", 1<<20))
	select {
	case <-w.ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the window's attachment never ended: the daemon still waits on a server that reads nothing")
	}
	if e := w.c.Exited(); e == nil || !strings.Contains(e.Reason, "stopped reading its input") {
		t.Fatalf("the window was told %+v; want the server stopped reading its input", e)
	}
	var f frame
	for len(w.frames) > 0 {
		if f = <-w.frames; string(f.ID) == "1" {
			break
		}
	}
	if string(f.ID) != "1" || f.Error == nil {
		t.Errorf("the call in flight ended with %s; want an error response", f.raw)
	}
}

// TestWatchKeepsDaemon: a window whose shared server crashed watches for its restart; it keeps the
// daemon from idling out, so that another window's Reconnect, however late, restarts the server
// in the daemon it watches (before, the daemon exited after Idle and each window then needed a
// Reconnect of its own). Once no window attaches or watches, the daemon idles out as before.
func TestWatchKeepsDaemon(t *testing.T) {
	const idle = 100 * time.Millisecond
	dir, done := serveInProcess(t, idle)
	cfg := Config{Dir: dir, Build: "test"}
	req := request(launch("--crash-after", "1"))
	a := attachWin(t, "A", cfg, req)
	a.initialize()
	for _, id := range []string{"1", "2"} {
		a.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
		a.until(id)
	}
	<-a.ended
	if !a.c.InstanceExited() {
		t.Fatalf("A: Exited() = %+v, want the server's crash", a.c.Exited())
	}
	a.c.Close()
	watched := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { watched <- Watch(ctx, cfg, req) }()
	// Many times the idle time with only A watching: the daemon must still run. (A broken daemon
	// may also survive a slow machine's short wait; a working one never fails here.)
	select {
	case <-done:
		t.Fatal("the daemon idled out while a window watched its crashed server")
	case err := <-watched:
		t.Fatalf("Watch returned %v before any window restarted the server", err)
	case <-time.After(20 * idle):
	}
	b := attachWin(t, "B", cfg, req) // B's Reconnect
	b.initialize()
	if err := <-watched; err != nil {
		t.Fatalf("A's watch after B restarted the server: %v", err)
	}
	b.c.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not idle out once no window attached or watched")
	}
}

// TestTinyFramesBoundTheQueues: a server that never reads its input and asks the daemon
// something small without end (a ping flood) gets an answer queued for each; a window that stops
// reading while its server floods it with small notifications gets each queued. maxQueue counts
// bytes, and a queued frame costs several times its bytes (its own allocation, its slice
// header): a flood of tiny frames grew the daemon past 700 MB before the byte bound stopped the
// server (measured with `yes` writing pings). The queues are bounded in frames too.
func TestTinyFramesBoundTheQueues(t *testing.T) {
	d := &daemon{log: slog.New(slog.DiscardHandler)}
	tiny := response([]byte("1"), "{}")
	const flood = 1 << 20 // 41 MB of answers: under maxQueue's bytes

	t.Run("to a server", func(t *testing.T) {
		deaf := Launch{Command: "/bin/sh", Args: []string{"-c", "exec sleep 600"}, Scope: ScopeUser, Source: SourceUser}
		c, err := startChild(deaf)
		if err != nil {
			t.Skip(err)
		}
		in := newInstance(d, "k", request(deaf))
		in.child = c
		defer c.stop()
		most := 0
		for range flood {
			in.writeUp(tiny)
			in.upMu.Lock()
			most = max(most, len(in.upQ))
			dead := in.upDead
			in.upMu.Unlock()
			if dead {
				break
			}
		}
		in.upMu.Lock()
		dead := in.upDead
		in.upMu.Unlock()
		if !dead || most > maxQueueFrames {
			t.Errorf("after %d tiny frames to a server that reads nothing: stopped %v, at most %d queued (want stopped, at most %d)", flood, dead, most, maxQueueFrames)
		}
	})
	t.Run("to a window", func(t *testing.T) {
		fds, err := streamPair()
		if err != nil {
			t.Fatal(err)
		}
		f := os.NewFile(uintptr(fds[0]), "s")
		fc, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fds[1]) // the window: reads nothing
		in := newInstance(d, "k", request(launch()))
		conn := fc.(*net.UnixConn)
		a := newAttachment(in, conn, conn, nil, -1)
		defer a.kill()
		most := 0
		for range flood {
			a.send(tiny)
			a.qmu.Lock()
			most = max(most, len(a.q))
			closed := a.closed
			a.qmu.Unlock()
			if closed {
				break
			}
		}
		a.qmu.Lock()
		closed := a.closed
		a.qmu.Unlock()
		if !closed || most > maxQueueFrames {
			t.Errorf("after %d tiny frames to a window that reads nothing: cut off %v, at most %d queued (want cut off, at most %d)", flood, closed, most, maxQueueFrames)
		}
	})
}

// countWriter counts the log lines that contain what.
type countWriter struct {
	what string
	n    atomic.Int64
}

func (w *countWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(strings.Count(string(p), w.what)))
	return len(p), nil
}

// TestQuestionFloodLogsOnce: a server that asks questions no window can be named for, without
// end, gets each refused; the daemon's log (a file of the user's) says so once per instance, not
// once per question: a server asking in a loop filled the disk a line at a time, each written on
// the relay loop's thread.
func TestQuestionFloodLogsOnce(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := testDir(t)
	logged := &countWriter{what: "refused a question"}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if err := Serve(ctx, Options{Dir: dir, Build: "test", Idle: time.Minute, Ready: closeOnWrite(ready), Log: slog.New(slog.NewTextHandler(logged, nil))}); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-ready
	const asks = 5000
	asker := `read l; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"asker","version":"1"}}}'; ` +
		`cat >/dev/null & yes '{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"x","requestedSchema":{"type":"object"}}}' | head -n ` + strconv.Itoa(asks) + `; ` +
		`echo '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'; exec sleep 600`
	l := Launch{Command: sh, Args: []string{"-c", asker}, Env: []string{"PATH=" + os.Getenv("PATH")}, Scope: ScopeUser, Source: SourceUser}
	w := attachWin(t, "A", Config{Dir: dir, Build: "test", Heartbeat: -1}, request(l))
	for f := w.next(); f.Method != "notifications/tools/list_changed"; f = w.next() {
	}
	if n := logged.n.Load(); n > 1 {
		t.Errorf("%d questions refused: %d log lines, want one", asks, n)
	}
}
