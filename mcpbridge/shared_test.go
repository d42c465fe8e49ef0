//go:build unix

package mcpbridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// sharedDaemon runs a broker daemon in this process until the test ends.
func sharedDaemon(t *testing.T) string {
	t.Helper()
	dir, _ := sharedDaemonEnds(t)
	return dir
}

// sharedDaemonEnds is sharedDaemon with what ends the daemon from outside, as a signal does
// `switchboard daemon` (its windows are told to attach again), and returns once it has ended.
func sharedDaemonEnds(t *testing.T) (dir string, end func()) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sbm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	dir += "/d"
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if err := broker.Serve(ctx, broker.Options{Dir: dir, Build: "test", Idle: time.Minute, Ready: closeOnWrite(ready)}); err != nil {
			t.Errorf("broker.Serve: %v", err)
		}
	}()
	end = func() { cancel(); <-done }
	t.Cleanup(end)
	<-ready
	return dir, end
}

type closeOnWrite chan struct{}

func (c closeOnWrite) Write(p []byte) (int, error) { close(c); return len(p), nil }

// TestSharedServer: two registries (two windows) with the same "shared" entry run one server
// process in the daemon, and each calls it as its own; an entry not marked shared runs in each
// window.
func TestSharedServer(t *testing.T) {
	dir := sharedDaemon(t)
	cfg := stdioCfg("s")
	cfg.Shared = config.SharedUser
	own := stdioCfg("own")
	var regs []*Registry
	for range 2 {
		r := newTestRegistry(t, Options{Broker: &broker.Config{Dir: dir, Build: "test"}})
		st := applyAndWait(t, r, cfg, own)
		if st["s"].State != StateReady || st["own"].State != StateReady {
			t.Fatalf("statuses %+v", st)
		}
		regs = append(regs, r)
	}
	for i, r := range regs {
		res, err := r.Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"w`+string(rune('0'+i))+`"}`))
		if err != nil || res.Text != "w"+string(rune('0'+i)) {
			t.Fatalf("window %d: %+v %v", i, res, err)
		}
	}
	st, err := broker.GetStatus(context.Background(), broker.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Instances) != 1 || st.Instances[0].Windows != 2 || st.Instances[0].Name != "s" {
		t.Fatalf("daemon status %+v: want one instance of s with 2 windows (own runs in each window)", st)
	}
	for i, r := range regs {
		var ss, own *SharedStatus
		for _, s := range r.Servers() {
			switch s.Name {
			case "s":
				ss = s.Shared
			case "own":
				own = s.Shared
			}
		}
		// Both count 2: the first window heard of the second's attach before its call's result
		// (the daemon told it before the second's attach was answered).
		if ss == nil || ss.Scope != "user" || ss.DaemonPid != st.Pid || ss.Windows != 2 || ss.Warning != "" || own != nil {
			t.Errorf("window %d: shared status %+v (own: %+v)", i, ss, own)
		}
	}
	regs[0].Close()
	res, err := regs[1].Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"still"}`))
	if err != nil || res.Text != "still" {
		t.Fatalf("after the other window closed: %+v %v", res, err)
	}
}

// TestSharedFallsBack: with no usable daemon the shared server runs in the window, and the
// reason is logged once.
func TestSharedFallsBack(t *testing.T) {
	bad := t.TempDir() // a directory of mode 0755: refused as a socket directory
	os.Chmod(bad, 0o755)
	lb := &lockedBuilder{b: &strings.Builder{}}
	r := newTestRegistry(t, Options{Logger: slog.New(slog.NewTextHandler(lb, nil)),
		Broker: &broker.Config{Dir: bad, Build: "test"}})
	cfg := stdioCfg("s")
	cfg.Shared = config.SharedUser
	if st := applyAndWait(t, r, cfg); st["s"].State != StateReady {
		t.Fatalf("status %+v", st["s"])
	}
	if res, err := r.Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"here"}`)); err != nil || res.Text != "here" {
		t.Fatalf("%+v %v", res, err)
	}
	if got := lb.String(); strings.Count(got, "shared server unavailable; running it in this window") != 1 || !strings.Contains(got, "mode 0755") {
		t.Fatalf("log: %s", got)
	}
}

// lockedBuilder is a strings.Builder written from several goroutines.
type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSharedDaemonKilled: kill -9 of the daemon fails the shared server in every window with the
// reason, and each window attaches again by itself: one new daemon, one new server, calls work.
func TestSharedDaemonKilled(t *testing.T) {
	dir, err := os.MkdirTemp("", "sbk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	dir += "/d"
	var starts atomic.Int32
	bcfg := &broker.Config{Dir: dir, Build: "test", Start: func(string) *exec.Cmd {
		starts.Add(1)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = []string{brokerDirVar + "=" + dir}
		return cmd
	}}
	t.Cleanup(func() { broker.Stop(context.Background(), broker.Config{Dir: dir}) })
	cfg := stdioCfg("s")
	cfg.Shared = config.SharedUser
	var regs []*Registry
	for range 2 {
		r := newTestRegistry(t, Options{Broker: bcfg})
		if st := applyAndWait(t, r, cfg); st["s"].State != StateReady || st["s"].Shared == nil {
			t.Fatalf("status %+v", st["s"])
		}
		regs = append(regs, r)
	}
	old := statusMap(regs[0])["s"].Shared.DaemonPid
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i, r := range regs {
		deadline := time.After(20 * time.Second)
		for {
			st := statusMap(r)["s"]
			if st.State == StateReady && st.Shared != nil && st.Shared.DaemonPid != old {
				break
			}
			select {
			case <-deadline:
				t.Fatalf("window %d: %+v, want ready again under a new daemon", i, st)
			case <-time.After(20 * time.Millisecond): // poll: the re-attach runs on its own goroutine
			}
		}
		res, err := r.Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"back"}`))
		if err != nil || res.Text != "back" {
			t.Fatalf("window %d after the re-attach: %+v %v", i, res, err)
		}
	}
	if a, b := statusMap(regs[0])["s"].Shared.DaemonPid, statusMap(regs[1])["s"].Shared.DaemonPid; a != b || starts.Load() != 2 {
		t.Fatalf("after the kill: daemons %d and %d, %d starts in all; want one new daemon", a, b, starts.Load())
	}
}

// TestSharedCrash: a shared server that dies shows failed with its stderr tail in every window;
// a Reconnect starts it again (once, for the window that asks; another window's Reconnect
// attaches to that new copy).
func TestSharedCrash(t *testing.T) {
	dir := sharedDaemon(t)
	cfg := stdioCfg("s", "--crash-after", "1")
	cfg.Shared = config.SharedUser
	var regs []*Registry
	for range 2 {
		r := newTestRegistry(t, Options{Broker: &broker.Config{Dir: dir, Build: "test"}})
		applyAndWait(t, r, cfg)
		regs = append(regs, r)
	}
	for _, text := range []string{"one", "two"} {
		regs[0].Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"`+text+`"}`))
	}
	for i, r := range regs {
		waitState(t, r, "s", StateFailed)
		if st := statusMap(r)["s"]; !strings.Contains(st.StderrTail, "crashing in call 2") || !strings.Contains(st.Error, "shared server") {
			t.Errorf("window %d: %+v, want failed with the stderr tail", i, st)
		}
	}
	var pids []int
	for i, r := range regs {
		st, err := r.ReconnectServer(context.Background(), "s")
		if err != nil || st.State != StateReady || st.Shared == nil {
			t.Fatalf("window %d: Reconnect: %+v %v", i, st, err)
		}
		bst, _ := broker.GetStatus(context.Background(), broker.Config{Dir: dir})
		if len(bst.Instances) != 1 {
			t.Fatalf("after window %d's Reconnect: %+v, want one instance", i, bst)
		}
		pids = append(pids, bst.Instances[0].ServerPid)
	}
	if pids[0] != pids[1] {
		t.Errorf("the second Reconnect started the server again: pids %v", pids)
	}
}

// TestSharedRestartSeenEverywhere: a shared server that crashed is failed in both windows; one
// window's Reconnect restarts it, and the other window follows by itself: its status goes
// through starting to ready, its tools are listed again, and both use the one new process.
func TestSharedRestartSeenEverywhere(t *testing.T) {
	dir := sharedDaemon(t)
	cfg := stdioCfg("s", "--crash-after", "1")
	cfg.Shared = config.SharedUser
	var mu sync.Mutex
	var seen []string // window 1's states of s, in order
	changed := make(chan struct{}, 1)
	var regs []*Registry
	for i := range 2 {
		opts := Options{Broker: &broker.Config{Dir: dir, Build: "test"}}
		if i == 1 {
			opts.OnChange = func(ss []ServerStatus) {
				mu.Lock()
				defer mu.Unlock()
				for _, st := range ss {
					if st.Name == "s" && (len(seen) == 0 || seen[len(seen)-1] != st.State) {
						seen = append(seen, st.State)
					}
				}
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}
		r := newTestRegistry(t, opts)
		applyAndWait(t, r, cfg)
		regs = append(regs, r)
	}
	for _, text := range []string{"one", "two"} {
		regs[0].Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"`+text+`"}`))
	}
	for _, r := range regs {
		waitState(t, r, "s", StateFailed)
	}
	mu.Lock()
	seen = nil
	mu.Unlock()
	st, err := regs[0].ReconnectServer(context.Background(), "s")
	if err != nil || st.State != StateReady {
		t.Fatalf("window 0: Reconnect: %+v %v", st, err)
	}
	waitState(t, regs[1], "s", StateReady)
	other := statusMap(regs[1])["s"]
	if other.Tools == 0 || other.Shared == nil {
		t.Fatalf("window 1 after window 0's Reconnect: %+v, want ready, shared, with its tools", other)
	}
	// OnChange runs after the state changed (debounced): wait for it to have told ready.
	for deadline := time.After(10 * time.Second); ; {
		mu.Lock()
		states := slices.Clone(seen)
		mu.Unlock()
		i := slices.Index(states, StateStarting)
		if i >= 0 && slices.Contains(states[i:], StateReady) {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("window 1's states of s after the crash: %v, want starting then ready", states)
		}
	}
	bst, err := broker.GetStatus(context.Background(), broker.Config{Dir: dir})
	if err != nil || len(bst.Instances) != 1 || bst.Instances[0].Windows != 2 {
		t.Fatalf("daemon status %+v %v: want one instance with both windows", bst, err)
	}
	if res, err := regs[1].Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"again"}`)); err != nil || res.Text != "again" {
		t.Fatalf("window 1's call after the restart: %+v %v", res, err)
	}
}

// TestNoSharedNoDaemon: with no server marked shared, no daemon is started.
func TestNoSharedNoDaemon(t *testing.T) {
	dir := t.TempDir() + "/d"
	var starts atomic.Int32
	r := newTestRegistry(t, Options{Broker: &broker.Config{Dir: dir, Build: "test", Start: func(string) *exec.Cmd {
		starts.Add(1)
		return exec.Command("false")
	}}})
	if st := applyAndWait(t, r, stdioCfg("own")); st["own"].State != StateReady || st["own"].Shared != nil {
		t.Fatalf("%+v", st["own"])
	}
	if starts.Load() != 0 {
		t.Fatal("a daemon was started for a server not marked shared")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the socket directory was touched: %v", err)
	}
}

// TestSharedRelativeCommand (attack): a shared server's relative command is the file under its
// cwd, as in the window (exec runs a relative path from Dir) and as the policy matched it; never
// a file of the same name under the editor's own working folder (the opened repository).
func TestSharedRelativeCommand(t *testing.T) {
	mk := func(dir string) string {
		t.Helper()
		p := filepath.Join(dir, "bin", "srv")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	root := t.TempDir()
	want := mk(filepath.Join(root, "opt"))
	mk(filepath.Join(root, "repo")) // the repository's own bin/srv
	t.Chdir(filepath.Join(root, "repo"))
	r := NewRegistry(Options{})
	defer r.Close()
	req, err := r.sharedRequest(config.ServerConfig{Name: "s", Transport: config.TransportStdio, Command: "./bin/srv",
		Cwd: filepath.Join(root, "opt"), Shared: config.SharedUser}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Launch.Command != want {
		t.Errorf("the daemon would run %s, want %s (under the entry's cwd)", req.Launch.Command, want)
	}
}

// TestSharedCommandFromTheCurrentFolder: a command found only through a PATH entry that names the
// current folder ("." or an empty entry) is refused, as exec refuses it for the window's own child:
// the daemon must not run the repository's executable of that name.
func TestSharedCommandFromTheCurrentFolder(t *testing.T) {
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "mytool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	t.Setenv("PATH", t.TempDir()+":") // the empty entry is the current folder
	r := NewRegistry(Options{})
	defer r.Close()
	req, err := r.sharedRequest(config.ServerConfig{Name: "s", Transport: config.TransportStdio, Command: "mytool", Shared: config.SharedUser}, nil)
	if err == nil {
		t.Fatalf("the daemon would run %s", req.Launch.Command)
	}
	if !strings.Contains(err.Error(), "current directory") {
		t.Errorf("error %q; want it to say the command was found only in the current folder", err)
	}
}

// TestSharedRelativeArgument: a shared server without a "cwd" runs from / in the daemon, so a
// relative path among its arguments or environment ("." meant as the open folder) would name the
// whole disk: it is refused before it runs, saying what to write, as for a package runner.
func TestSharedRelativeArgument(t *testing.T) {
	dir := sharedDaemon(t)
	r := newTestRegistry(t, Options{Broker: &broker.Config{Dir: dir, Build: "test"}})
	arg := stdioCfg("a", "--instructions", ".")
	arg.Shared = config.SharedUser
	env := stdioCfg("e")
	env.Shared, env.Env = config.SharedUser, map[string]string{"ALLOWED_DIR": "."}
	withCwd := stdioCfg("c", "--instructions", ".")
	withCwd.Shared, withCwd.Cwd = config.SharedUser, t.TempDir()
	fails := config.ServerConfig{Name: "f", Transport: config.TransportStdio, Command: "/bin/false", Shared: config.SharedUser,
		StartupTimeout: 20 * time.Second, CallTimeout: 30 * time.Second, Source: "test"}
	st := applyAndWait(t, r, arg, env, withCwd, fails)
	if st["f"].State != StateFailed || !strings.Contains(st["f"].Error, "it ran from /, not the open folder, as a shared server does") {
		t.Errorf("f: %s %q; want its failure to say why it ran from /", st["f"].State, st["f"].Error)
	}
	for _, name := range []string{"a", "e"} {
		if st[name].State != StateFailed || !strings.Contains(st[name].Error, "relative path") || !strings.Contains(st[name].Error, "shared") {
			t.Errorf("%s: %s %q; want it refused, saying a shared server runs from /", name, st[name].State, st[name].Error)
		}
	}
	if st["c"].State != StateReady {
		t.Errorf("c (with a cwd): %s %q", st["c"].State, st["c"].Error)
	}
	// Without a daemon (none answers, or `switchboard check`) it runs from / all the same: what
	// "." names does not depend on where it happened to start.
	alone := newTestRegistry(t, Options{})
	if st := applyAndWait(t, alone, arg); st["a"].State != StateFailed || !strings.Contains(st["a"].Error, "relative path") {
		t.Errorf("a without a daemon: %s %q; want it refused", st["a"].State, st["a"].Error)
	}
	// A relative command (./bin/server) would be another program from / than in the folder the
	// person was in: refused, saying what to write.
	rel := config.ServerConfig{Name: "r", Transport: config.TransportStdio, Command: "./bin/srv", Shared: config.SharedUser,
		StartupTimeout: 20 * time.Second, CallTimeout: 30 * time.Second, Source: "test"}
	if st := applyAndWait(t, r, rel); st["r"].State != StateFailed || !strings.Contains(st["r"].Error, `command "./bin/srv" is a relative path`) {
		t.Errorf("r: %s %q; want it refused", st["r"].State, st["r"].Error)
	}
	stat, err := broker.GetStatus(context.Background(), broker.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if n := slices.IndexFunc(stat.Instances, func(i broker.InstanceStatus) bool { return i.Name != "c" && i.Name != "f" }); n >= 0 {
		t.Errorf("daemon instances %+v; want only c", stat.Instances)
	}
}

// TestSharedDrainWarning: `switchboard daemon restart` (a drain) is shown beside the window's
// shared server at once (ServerStatus.shared.warning), while the server keeps running there.
func TestSharedDrainWarning(t *testing.T) {
	dir := sharedDaemon(t)
	cfg := stdioCfg("s")
	cfg.Shared = config.SharedUser
	changed := make(chan struct{}, 1)
	r := newTestRegistry(t, Options{Broker: &broker.Config{Dir: dir, Build: "test"}, OnChange: func([]ServerStatus) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	applyAndWait(t, r, cfg)
	if err := broker.Drain(context.Background(), broker.Config{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.After(20 * time.Second); ; {
		st := statusMap(r)["s"]
		if st.Shared != nil && strings.Contains(st.Shared.Warning, "`switchboard daemon restart`") {
			if st.State != StateReady {
				t.Fatalf("the server during the drain: %+v, want still ready", st)
			}
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("status %+v: want the drain in shared.warning", st)
		}
	}
}

// TestSharedWatchOutlivesDaemon: a window whose shared server crashed waits for another window's
// Reconnect to restart it (watchRestart). When the daemon itself is killed meanwhile, the other
// window's Reconnect starts a new daemon and the server in it; the waiting window follows that
// one by itself instead of staying failed until its own Reconnect.
func TestSharedWatchOutlivesDaemon(t *testing.T) {
	bcfg := startedDaemon(t)
	cfg := stdioCfg("s", "--crash-after", "1")
	cfg.Shared = config.SharedUser
	var regs []*Registry
	for range 2 {
		r := newTestRegistry(t, Options{Broker: bcfg})
		applyAndWait(t, r, cfg)
		regs = append(regs, r)
	}
	old := statusMap(regs[0])["s"].Shared.DaemonPid
	for _, text := range []string{"one", "two"} {
		regs[0].Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"`+text+`"}`))
	}
	for _, r := range regs {
		waitState(t, r, "s", StateFailed)
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st, err := regs[0].ReconnectServer(context.Background(), "s")
	if err != nil || st.State != StateReady || st.Shared == nil || st.Shared.DaemonPid == old {
		t.Fatalf("window 0: Reconnect: %+v %v, want ready under a new daemon", st, err)
	}
	deadline := time.After(20 * time.Second)
	for {
		st := statusMap(regs[1])["s"]
		if st.State == StateReady && st.Shared != nil && st.Shared.DaemonPid != old {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("window 1 after the daemon was killed and window 0 reconnected: %+v, want ready under the new daemon", st)
		case <-time.After(20 * time.Millisecond): // poll: the watch runs on its own goroutine
		}
	}
	if res, err := regs[1].Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"again"}`)); err != nil || res.Text != "again" {
		t.Fatalf("window 1's call after following the new daemon: %+v %v", res, err)
	}
}

// TestSharedDaemonStopped: `switchboard daemon stop` is a person's doing, not a fault: the window
// shows its shared server stopped, with the daemon's sentence saying how to start it again, not
// failed (a crash stays failed: TestSharedCrash).
func TestSharedDaemonStopped(t *testing.T) {
	dir := sharedDaemon(t)
	cfg := stdioCfg("s")
	cfg.Shared = config.SharedUser
	r := newTestRegistry(t, Options{Broker: &broker.Config{Dir: dir, Build: "test"}})
	applyAndWait(t, r, cfg)
	if err := broker.Stop(context.Background(), broker.Config{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	waitState(t, r, "s", StateStopped)
	if st := statusMap(r)["s"]; !strings.Contains(st.Error, "stopped with `switchboard daemon stop`; Reconnect starts the server again") {
		t.Errorf("after daemon stop: %+v, want stopped, saying why and what to do", st)
	}
}

// TestSharedTask: a tool call that runs as an MCP task on a shared server is followed to its end
// through the daemon (tools/call with a task, tasks/get, tasks/result: the daemon keeps the task
// to this window and lets its own requests through), and a second window cannot take it.
func TestSharedTask(t *testing.T) {
	dir := sharedDaemon(t)
	cfg := stdioCfg("s", "--tasks", "--task-poll-ms", "1")
	cfg.Shared = config.SharedUser
	var regs []*Registry
	for range 2 {
		r := newTestRegistry(t, Options{Broker: &broker.Config{Dir: dir, Build: "test"}})
		applyAndWait(t, r, cfg)
		regs = append(regs, r)
	}
	var ids []string
	ctx := WithTaskUpdates(context.Background(), func(u TaskUpdate) {
		if len(ids) == 0 || ids[len(ids)-1] != u.TaskID {
			ids = append(ids, u.TaskID)
		}
	})
	res, err := regs[0].Call(ctx, "mcp__s__task_slow", json.RawMessage(`{"polls":2}`))
	if err != nil || res.IsError || len(ids) != 1 {
		t.Fatalf("a task through the daemon: %+v %v (tasks %v)", res, err, ids)
	}
	// The other window names it: refused by the daemon, never followed.
	res, err = regs[1].ResumeTask(context.Background(), "mcp__s__task_slow", ids[0], "")
	if err != nil || !res.IsError || !strings.Contains(res.Text, "another window") {
		t.Fatalf("the other window following the first one's task: %+v %v, want refused", res, err)
	}
}

// TestSharedTaskQuestionToItsWindow: a shared server's task asks its question (2025-11-25: an
// elicitation naming the task, while tasks/result is open) while another window also waits on a
// call: the question is put to the task's window, whose answer completes the task, and never to
// the other window. Before, the daemon could not tell whose it was and answered it cancel.
func TestSharedTaskQuestionToItsWindow(t *testing.T) {
	dir := sharedDaemon(t)
	cfg := stdioCfg("s", "--tasks", "--elicit", "--task-poll-ms", "1")
	cfg.Shared = config.SharedUser
	var mu sync.Mutex
	asked := map[int][]string{} // window -> the questions put to it
	inB := make(chan struct{})  // B is being asked its own question: its call is in flight
	release := make(chan struct{})
	var once sync.Once
	var regs []*Registry
	for i := range 2 {
		r := newTestRegistry(t, Options{Broker: &broker.Config{Dir: dir, Build: "test"},
			Elicit: func(ctx context.Context, el Elicitation) ElicitResult {
				mu.Lock()
				asked[i] = append(asked[i], el.Message)
				mu.Unlock()
				if i == 1 {
					once.Do(func() { close(inB); <-release })
				}
				return ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "agree": true}}
			}})
		applyAndWait(t, r, cfg)
		regs = append(regs, r)
	}
	done := make(chan error, 1)
	go func() {
		_, err := regs[1].Call(context.Background(), "mcp__s__ask", json.RawMessage(`{}`))
		done <- err
	}()
	<-inB
	res, err := regs[0].Call(context.Background(), "mcp__s__task_ask", json.RawMessage(`{"message":"Which Go, for window A?"}`))
	close(release)
	if err != nil || res.IsError || !strings.Contains(res.Text, "Ada") {
		t.Errorf("A's task while B waits too: %+v %v, want A's answer", res, err)
	}
	if err := <-done; err != nil {
		t.Errorf("B's own question: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked[0], []string{"Which Go, for window A?"}) {
		t.Errorf("A was asked %q, want its task's question", asked[0])
	}
	if slices.ContainsFunc(asked[1], func(s string) bool { return strings.Contains(s, "window A") }) {
		t.Errorf("B was asked A's task's question: %q", asked[1])
	}
}

// TestSharedDaemonEndedMovesOn: a daemon ended from outside in good order (its context ends, as
// `switchboard daemon` does on SIGTERM) tells its windows to attach again. The window shows the
// server starting, never failed, while it moves; while it shows starting, a caller waiting for the
// start (WaitStarted, WaitIdle, as calls and the host do) finds the start not over (the old
// attempt's channel was closed: they would spin until the new attach), and the server answers
// under the new daemon.
func TestSharedDaemonEndedMovesOn(t *testing.T) {
	dir, end := sharedDaemonEnds(t)
	bcfg := daemonStarter(t, dir)
	var mu sync.Mutex
	var states []string
	cfg := stdioCfg("s")
	cfg.Shared = config.SharedUser
	r := newTestRegistry(t, Options{Broker: bcfg, OnChange: func(ss []ServerStatus) {
		for _, s := range ss {
			mu.Lock()
			if s.Name == "s" && (len(states) == 0 || states[len(states)-1] != s.State) {
				states = append(states, s.State)
			}
			mu.Unlock()
		}
	}})
	old := applyAndWait(t, r, cfg)["s"].Shared.DaemonPid
	end()
	deadline := time.Now().Add(30 * time.Second)
	for spun := false; ; {
		r.mu.Lock()
		e := r.servers["s"]
		state, over := e.state, e.doneClosed
		r.mu.Unlock()
		if state == StateStarting && over && !spun {
			spun = true
			t.Errorf("the server shows starting while its start is over: WaitStarted and WaitIdle spin")
		}
		if st := statusMap(r)["s"]; st.State == StateReady && st.Shared != nil && st.Shared.DaemonPid != old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the daemon ended: %+v, want ready under a new daemon", statusMap(r)["s"])
		}
		runtime.Gosched() // poll: the window moves on its own goroutines
	}
	res, err := r.Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"moved"}`))
	if err != nil || res.Text != "moved" {
		t.Fatalf("a call after the move: %+v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(states, StateFailed) || !slices.Contains(states, StateStarting) {
		t.Errorf("states while moving: %v, want starting and never failed", states)
	}
}
