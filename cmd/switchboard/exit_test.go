//go:build linux

package main

// The host always exits when its editor goes away (issue 35, hardening): whatever a server, the
// daemon or the editor itself does or fails to do, closing the editor's end ends the host, and
// nothing the host started is left running. Each test makes one peer misbehave the way an
// attacker or bad luck would, then closes stdin; waitExit fails (with the host's goroutines) when
// the host does not exit within the fault bound.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fPgrp is the process group of pid, from /proc (0 when unreadable).
func fPgrp(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 3 {
		return 0
	}
	n, _ := strconv.Atoi(f[2]) // state ppid pgrp
	return n
}

// A server that moves out of the process group the host made for it, into the host's own, and
// ignores both the end of its stdin and SIGTERM: the host signalled only the group, which no
// longer holds the server, and then waited for the server's exit for good.
func TestExitServerLeftItsGroup(t *testing.T) {
	e := startFaultHost(t, fHostOpts{servers: map[string]fServer{
		"sly": fMcptest("--name", "sly", "--leave-group", "--linger"),
	}})
	e.waitServers("sly ready", fStateIs("sly", "ready"))
	pid := e.pidOf("sly")
	if g := fPgrp(pid); g == pid || g == 0 {
		t.Fatalf("the server did not leave its process group (pgrp %d, pid %d)", g, pid)
	}
	e.stdin.Close() // the editor goes away
	e.waitExit("the editor closed stdin")
	if fProcessAlive(pid) {
		t.Errorf("the server (pid %d) outlived the host", pid)
	}
}

// fGate is an editor's reading of the host's stdout that the test can stop (an editor that hangs
// and stops reading: the pipe fills up and the host's writes wait) and start again.
type fGate struct {
	r    io.Reader
	mu   sync.Mutex
	open chan struct{} // closed while reading goes on
}

func newGate(r io.Reader) *fGate {
	g := &fGate{r: r, open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *fGate) Read(p []byte) (int, error) {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	<-open
	return g.r.Read(p)
}

// stop stops reading after the read in progress, if any.
func (g *fGate) stop() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *fGate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// smallPipe makes the pipe f hold a single page, so that one large frame fills it.
func smallPipe(t *testing.T, f *os.File) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { _, serr = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 4096) }); err != nil || serr != nil {
		t.Fatalf("F_SETPIPE_SZ: %v %v", err, serr)
	}
}

// fAwaitExit waits, at most bound, for the process pid (a child or not) to exit; false: it did not.
func fAwaitExit(t *testing.T, pid int, bound time.Duration) bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(bound)
	for {
		n, err := unix.Poll(fds, int(max(time.Until(deadline).Milliseconds(), 0)))
		switch {
		case err == unix.EINTR:
		case err != nil:
			t.Fatalf("poll pidfd: %v", err)
		case n > 0:
			return true
		case !time.Now().Before(deadline):
			return false
		}
	}
}

// awaitHostExit waits (bounded) for the host process to exit without reading its stdout (it
// stays a zombie until the harness reaps it), and fails with its goroutines when it does not.
func (e *fEditor) awaitHostExit(what string, g *fGate) {
	e.t.Helper()
	if fAwaitExit(e.t, e.cmd.Process.Pid, faultBound()) {
		return
	}
	syscall.Kill(e.cmd.Process.Pid, syscall.SIGQUIT) // ignore error: it may have exited just now
	g.resume()                                       // the dump goes to stderr; the harness reaps the host once stdout ends
	select {
	case <-e.exited:
	case <-time.After(10 * time.Second):
	}
	b, _ := os.ReadFile(e.errLog) // ignore error: the dump is a help, not the verdict
	e.t.Fatalf("%s: the host did not exit within %v; its goroutines at SIGQUIT:\n%s", what, faultBound(), b)
}

// countIn counts the lines of the file path that contain sub.
func countIn(path, sub string) int {
	b, _ := os.ReadFile(path) // ignore error: none yet
	return strings.Count(string(b), sub)
}

// An editor that stops reading the host's stdout (hung, or busy for good) and then leaves: it
// closes stdin, sends exit, or ends the host with SIGTERM. The host's writes to it waited for
// good, among them the registry's own (a server's death said as window/logMessage), and closing
// the registry waited for them, so the host never exited.
func TestExitEditorStoppedReading(t *testing.T) {
	for _, tc := range []struct {
		name   string
		leave  func(e *fEditor)
		merged bool // stdout and stderr are one pipe, which the host does not poll
	}{
		{name: "stdin closed", leave: func(e *fEditor) { e.stdin.Close() }}, // ignore error: the editor's end
		{name: "exit sent", leave: func(e *fEditor) { e.notify("exit", nil) }},
		{name: "SIGTERM", leave: func(e *fEditor) { syscall.Kill(e.cmd.Process.Pid, syscall.SIGTERM) }}, // ignore error: the host's pid
		{name: "stdin closed, stderr merged", leave: func(e *fEditor) { e.stdin.Close() }, merged: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gate *fGate
			var left atomic.Bool // the editor left
			// The server's command line is what every status carries: one serversChanged, or one
			// reply to switchboard.servers, is larger than the pipe holds.
			big := strings.Repeat("x", 20000)
			e := startFaultHost(t, fHostOpts{
				servers:        map[string]fServer{"big": fMcptest("--name", "big", "--", big)},
				stderrIsStdout: tc.merged,
				stdout: func(f *os.File) io.Reader {
					smallPipe(t, f)
					gate = newGate(f)
					return gate
				},
				// The reply the host was writing when it left is cut off: the editor that stopped
				// reading it is gone. Anything else is not an LSP frame.
				badOutput: func(err error) {
					if !left.Load() || !(errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) {
						t.Errorf("reading the host's stdout: %v", err)
					}
				},
			})
			e.waitServers("big ready", fStateIs("big", "ready"))
			pid := e.pidOf("--name big")
			e.noteChildren()

			gate.stop()
			// A reply the host cannot finish writing: every later frame waits behind it.
			before := countIn(e.events, `"command":"switchboard.servers"`)
			e.send("workspace/executeCommand", map[string]any{"command": "switchboard.servers"})
			fWaitFile(t, e.events, "the host took the request", func(s string) bool {
				return strings.Count(s, `"command":"switchboard.servers"`) > before
			})
			// The server dies: the registry says so to the editor, and waits for the write.
			syscall.Kill(pid, syscall.SIGKILL) // ignore error: the test's own child's child
			fWaitFile(t, e.events, "the server's death told", fContains("mcp server died"))

			left.Store(true)
			tc.leave(e) // never having read on
			e.awaitHostExit("the editor stopped reading, then left ("+tc.name+")", gate)
			gate.resume()
			e.waitExit("the editor stopped reading, then left (" + tc.name + ")")
		})
	}
}

// awaitRequest waits (bounded) for a request of method from the host.
func (e *fEditor) awaitRequest(method string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), faultBound())
	defer cancel()
	if _, err := e.lsp.Await(ctx, func(ms []fMsg) bool {
		return slices.ContainsFunc(ms, func(m fMsg) bool { return m.Method == method && m.IsRequest() })
	}); err != nil {
		e.t.Fatalf("waiting for %s: %v", method, err)
	}
}

// The editor goes away (stdin closed, SIGTERM, SIGHUP) while a peer cannot or does not answer:
// a server frozen (SIGSTOP: its pipes stay open, it reads nothing and takes no SIGTERM), one
// frozen in the middle of a call, one that never answers initialize, and a question the person
// never answers. The host exits every time, and no server process is left.
func TestExitWhilePeersDoNotAnswer(t *testing.T) {
	closeStdin := func(e *fEditor) { e.stdin.Close() } // ignore error: the editor's end
	signal := func(sig syscall.Signal) func(e *fEditor) {
		return func(e *fEditor) { syscall.Kill(e.cmd.Process.Pid, sig) } // ignore error: the host's own pid
	}
	freeze := func(e *fEditor, marker string) {
		e.t.Helper()
		if err := syscall.Kill(e.pidOf(marker), syscall.SIGSTOP); err != nil {
			e.t.Fatal(err)
		}
	}
	// slowCallFrozen starts a call of an hour on the wired server s and freezes s once the call
	// reached it.
	slowCallFrozen := func(e *fEditor, in string) {
		e.t.Helper()
		e.waitServers("s ready", fStateIs("s", "ready"))
		e.send("workspace/executeCommand", fCallToolParams("mcp__s__slow", map[string]any{"seconds": 3600}, "always-allow"))
		fWaitFile(e.t, in, "the slow call reaching the server", func(s string) bool {
			return strings.Contains(s, `"tools/call"`) && strings.Contains(s, `"slow"`)
		})
		freeze(e, "--name s")
	}
	// unanswered leaves every showMessageRequest unanswered: the person is away.
	unanswered := func(e *fEditor) {
		e.mu.Lock()
		e.answer = func(m fMsg) (any, bool) { return nil, m.Method != "window/showMessageRequest" }
		e.mu.Unlock()
	}
	// elicitation asks a one-question form of s through the editor, which never answers.
	elicitation := func(e *fEditor) {
		e.t.Helper()
		unanswered(e)
		e.waitServers("s ready", fStateIs("s", "ready"))
		e.send("workspace/executeCommand", fCallToolParams("mcp__s__ask", map[string]any{
			"message": "Go on?", "schema": `{"type":"object","properties":{"go":{"type":"boolean"}},"required":["go"]}`,
		}, "always-allow"))
		e.awaitRequest("window/showMessageRequest")
	}

	for _, tc := range []struct {
		name  string
		args  []string // the server s's flags (after --name s)
		wired bool     // s's stdin teed to a file (slowCallFrozen)
		setup func(e *fEditor, in string)
		end   func(e *fEditor)
	}{
		{name: "frozen server, stdin closed", setup: func(e *fEditor, _ string) {
			e.waitServers("s ready", fStateIs("s", "ready"))
			freeze(e, "--name s")
		}, end: closeStdin},
		{name: "server frozen mid-call, stdin closed", wired: true, setup: slowCallFrozen, end: closeStdin},
		{name: "server mid-initialize, stdin closed", args: []string{"--hang-initialize"}, setup: func(e *fEditor, _ string) {
			e.waitServers("s starting", fStateIs("s", "starting"))
		}, end: closeStdin},
		{name: "elicitation unanswered, stdin closed", args: []string{"--elicit"}, setup: func(e *fEditor, _ string) { elicitation(e) }, end: closeStdin},
		{name: "elicitation unanswered, SIGTERM", args: []string{"--elicit"}, setup: func(e *fEditor, _ string) { elicitation(e) }, end: signal(syscall.SIGTERM)},
		{name: "server frozen mid-call, SIGHUP", wired: true, setup: slowCallFrozen, end: signal(syscall.SIGHUP)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fMcptest(append([]string{"--name", "s"}, tc.args...)...)
			in := filepath.Join(t.TempDir(), "s.in")
			if tc.wired {
				s = fWired(in, filepath.Join(t.TempDir(), "s.err"), append([]string{"--name", "s"}, tc.args...)...)
			}
			e := startFaultHost(t, fHostOpts{servers: map[string]fServer{"s": s}})
			tc.setup(e, in)
			e.noteChildren()
			tc.end(e)
			e.waitExit(tc.name)
		})
	}
}

// openWindow starts a `serve` window with servers and sends initialize and initialized.
func openWindow(t *testing.T, bin string, env []string, servers map[string]any, idle int) *e2eEditor {
	t.Helper()
	e := startE2E(t, bin, env)
	e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"daemonIdleSeconds": idle, "servers": servers}})
	e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	return e
}

// The shared-server daemon is frozen (SIGSTOP: its socket stays open, it answers nothing) while
// one window uses a shared server through it and a second window is attaching to it (its hello
// unanswered): both windows' editors close them, and both exit.
func TestExitSharedDaemonFrozen(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	_, env := sharedRuntime(t, bin)
	servers := map[string]any{"s": map[string]any{"command": mcptest, "args": []string{"--name", "s"}, "shared": true}}
	a := openWindow(t, bin, env, servers, 5)
	msgs := a.await("s ready, shared", func(ms []e2eMsg) bool {
		s, ok := lastStatus(ms, "s")
		return ok && s.State == "ready" && s.Shared != nil
	})
	st, _ := lastStatus(msgs, "s")
	daemon := st.Shared.DaemonPid
	if err := syscall.Kill(daemon, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Registered after sharedRuntime's: runs first, so that `daemon stop` finds it answering.
	t.Cleanup(func() { syscall.Kill(daemon, syscall.SIGCONT) }) // ignore error: gone already

	b := openWindow(t, bin, env, servers, 5)
	b.await("s starting in the second window", func(ms []e2eMsg) bool {
		s, ok := lastStatus(ms, "s")
		return ok && s.State == "starting"
	})
	b.stdin.Close() // the second window closes while its hello waits for the frozen daemon
	b.wait()
	a.stdin.Close()
	a.wait()
}

// A shared server that moves out of the process group the daemon made for it, into the daemon's
// own, and ignores the end of its stdin and SIGTERM: when its last window closed, the daemon
// signalled only the group, waited for the server's exit for good, and never exited itself.
func TestExitSharedServerLeftItsGroup(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	_, env := sharedRuntime(t, bin)
	servers := map[string]any{"sly": map[string]any{"command": mcptest, "args": []string{"--name", "sly", "--leave-group", "--linger"}, "shared": true}}
	w := openWindow(t, bin, env, servers, 1) // the server and the daemon end a second after the window
	msgs := w.await("sly ready, shared", func(ms []e2eMsg) bool {
		s, ok := lastStatus(ms, "sly")
		return ok && s.State == "ready" && s.Shared != nil
	})
	st, _ := lastStatus(msgs, "sly")
	daemon := st.Shared.DaemonPid
	kids := childrenOf()[daemon]
	if len(kids) != 1 {
		t.Fatalf("the daemon (pid %d) runs %v, want the one server", daemon, kids)
	}
	server := kids[0]
	t.Cleanup(func() { syscall.Kill(server, syscall.SIGKILL) }) // ignore error: gone, as it should be
	if g := fPgrp(server); g == server || g == 0 {
		t.Fatalf("the server did not leave its process group (pgrp %d, pid %d)", g, server)
	}
	w.stdin.Close()
	w.wait()
	if !fAwaitExit(t, daemon, faultBound()) {
		var log []byte
		for _, kv := range env {
			if dir, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
				log, _ = os.ReadFile(filepath.Join(dir, "switchboard", "daemon.log")) // ignore error: a help
			}
		}
		syscall.Kill(daemon, syscall.SIGKILL) // ignore error: the test's to end
		t.Fatalf("the daemon (pid %d) did not exit within %v after its last window closed; its log:\n%s", daemon, faultBound(), log)
	}
	if !fAwaitExit(t, server, faultBound()) {
		t.Errorf("the shared server (pid %d) outlived its daemon", server)
	}
}
