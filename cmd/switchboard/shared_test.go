//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
)

// TestSharedServeAndCheck: two real `switchboard serve` windows whose user config marks a server
// "shared" run it once, in a daemon the first of them started; `switchboard check` uses that
// instance warm and says so; each window's status counts the windows as they come and go (the
// first says "2 windows" once the second attached, "1" again once it closed); `switchboard
// daemon stop` ends it all.
func TestSharedServeAndCheck(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	runtime, err := os.MkdirTemp("", "sbr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtime) }) // after daemon stop, which needs the socket
	os.Chmod(runtime, 0o700)
	env := e2eEnv(t, "XDG_RUNTIME_DIR="+runtime)
	var cfgDir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			cfgDir = filepath.Join(v, "switchboard")
		}
	}
	os.MkdirAll(cfgDir, 0o700)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"s":   map[string]any{"command": mcptest, "shared": true},
		"own": map[string]any{"command": mcptest},
	}})
	if err := os.WriteFile(filepath.Join(cfgDir, "mcp.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd := exec.Command(bin, "daemon", "stop")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Stopped") {
			t.Errorf("daemon stop: %v %s", err, out)
		}
	})

	type sharedInfo struct {
		Servers []struct {
			Name   string
			State  string
			Shared *struct {
				Scope     string
				Windows   int
				DaemonPid int
			}
		}
	}
	// windowsOf is the count of s's windows in the latest serversChanged of ms (0: none yet).
	windowsOf := func(ms []e2eMsg) int {
		for j := len(ms) - 1; j >= 0; j-- {
			if ms[j].Method != "switchboard/serversChanged" {
				continue
			}
			var got sharedInfo
			json.Unmarshal(ms[j].Params, &got)
			for _, s := range got.Servers {
				if s.Name == "s" && s.Shared != nil {
					return s.Shared.Windows
				}
			}
			return 0
		}
		return 0
	}
	var pids []int
	var editors []*e2eEditor
	closed := map[*e2eEditor]bool{}
	for i := range 2 {
		e := startE2E(t, bin, env)
		editors = append(editors, e)
		e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
			"initializationOptions": map[string]any{"daemonIdleSeconds": 7}})
		e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		var got sharedInfo
		e.await("both servers ready, s shared", func(ms []e2eMsg) bool {
			for j := len(ms) - 1; j >= 0; j-- {
				if ms[j].Method != "switchboard/serversChanged" {
					continue
				}
				got = sharedInfo{}
				json.Unmarshal(ms[j].Params, &got)
				ready := 0
				for _, s := range got.Servers {
					if s.State == "ready" {
						ready++
					}
				}
				return ready == 2
			}
			return false
		})
		for _, s := range got.Servers {
			switch {
			case s.Name == "s" && (s.Shared == nil || s.Shared.Scope != "user" || s.Shared.Windows != i+1):
				t.Fatalf("window %d: s is %+v, want shared at user scope by %d windows", i, s.Shared, i+1)
			case s.Name == "own" && s.Shared != nil:
				t.Fatalf("window %d: own is shared: %+v", i, s.Shared)
			case s.Name == "s":
				pids = append(pids, s.Shared.DaemonPid)
			}
		}
		t.Cleanup(func() {
			if !closed[e] {
				e.stdin.Close()
				e.wait()
			}
		})
	}
	editors[0].await("the first window counting 2 windows", func(ms []e2eMsg) bool { return windowsOf(ms) == 2 })
	if pids[0] != pids[1] {
		t.Fatalf("two windows reached daemons %v, want one", pids)
	}
	// The window that started it gave it its daemonIdleSeconds.
	if cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pids[0]) + "/cmdline"); err == nil && !strings.Contains(string(cmdline), "--idle\x007s\x00") {
		t.Errorf("daemon command line %q, want --idle 7s", cmdline)
	}
	cmd := exec.Command(bin, "check")
	cmd.Env = env
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "shared:  user scope, in the shared-server daemon (pid ") || !strings.Contains(string(out), "used by 2 other windows") {
		t.Fatalf("check:\n%s", out)
	}
	editors[1].stdin.Close()
	editors[1].wait()
	closed[editors[1]] = true
	editors[0].await("the first window counting 1 window once the second closed", func(ms []e2eMsg) bool { return windowsOf(ms) == 1 })
	var state string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	if log, err := os.ReadFile(filepath.Join(state, "switchboard", "daemon.log")); err != nil || !strings.Contains(string(log), "daemon listening") {
		t.Errorf("the daemon's log is not in the window's state directory: %v %q", err, log)
	}
}

// TestSharedProcessCount (issue 32's first goal, counted, not timed): six real `serve` windows
// with ten shared servers run exactly ten server processes, all children of one daemon, and no
// window runs a server of its own.
func TestSharedProcessCount(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	runtime, err := os.MkdirTemp("", "sbr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtime) })
	os.Chmod(runtime, 0o700)
	env := e2eEnv(t, "XDG_RUNTIME_DIR="+runtime)
	servers := map[string]any{}
	for i := range 10 {
		// Ten different servers: the same program with a different environment is another launch,
		// as ten different servers of a user are.
		servers[fmt.Sprintf("s%d", i)] = map[string]any{"command": mcptest, "shared": true, "env": map[string]string{"SERVER_INDEX": strconv.Itoa(i)}}
	}
	t.Cleanup(func() {
		cmd := exec.Command(bin, "daemon", "stop")
		cmd.Env = env
		cmd.Run() // ignore error: the daemon may have gone with its idle time
	})
	daemons := map[int]bool{}
	var windows []*e2eEditor
	for i := range 6 {
		e := startE2E(t, bin, env)
		windows = append(windows, e)
		t.Cleanup(func() { e.stdin.Close(); e.wait() })
		e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
			"initializationOptions": map[string]any{"daemonIdleSeconds": 5, "servers": servers}})
		e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		e.await("ten shared servers ready", func(ms []e2eMsg) bool {
			for j := len(ms) - 1; j >= 0; j-- {
				if ms[j].Method != "switchboard/serversChanged" {
					continue
				}
				var got struct {
					Servers []struct {
						State  string
						Shared *struct{ DaemonPid int }
					}
				}
				json.Unmarshal(ms[j].Params, &got)
				ready := 0
				for _, s := range got.Servers {
					if s.State == "ready" && s.Shared != nil {
						ready++
						daemons[s.Shared.DaemonPid] = true
					}
				}
				return ready == 10
			}
			return false
		})
		if len(daemons) != 1 {
			t.Fatalf("after window %d: daemons %v, want one", i, daemons)
		}
	}
	var daemon int
	for p := range daemons {
		daemon = p
	}
	children := childrenOf()
	if got := len(children[daemon]); got != 10 {
		t.Errorf("the daemon (pid %d) runs %d server processes, want 10: %v", daemon, got, children[daemon])
	}
	for i, e := range windows {
		for _, kid := range children[e.cmd.Process.Pid] {
			if kid != daemon { // the first window started the daemon (in a session of its own)
				t.Errorf("window %d runs a process of its own: %d", i, kid)
			}
		}
	}
	// Every switchboard process is a window or the one daemon.
	n := 0
	for pid, cmdline := range processesOf(bin) {
		if strings.HasPrefix(cmdline, bin+"\x00daemon") {
			n++
			if pid != daemon {
				t.Errorf("a second daemon runs: pid %d", pid)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d daemon processes, want 1", n)
	}
}

// childrenOf maps every process to its children (from /proc/*/stat).
func childrenOf() map[int][]int {
	out := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // comm may hold spaces
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		out[ppid] = append(out[ppid], pid)
	}
	return out
}

// processesOf maps the pid of every process running the binary bin to its command line.
func processesOf(bin string) map[int]string {
	out := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.HasPrefix(string(b), bin+"\x00") {
			out[pid] = string(b)
		}
	}
	return out
}

// TestDaemonPolicy (issue 33 through the daemon): the shared-server daemon checks the
// organisation's policy itself, from real root-owned files, before it starts anything: a window
// (of an older build, or one that lies) asking for a launch the policy denies is refused with the
// rule named and no process starts; an allowed launch runs; a policy file others could write
// blocks every launch.
func TestDaemonPolicy(t *testing.T) {
	bin := checkBuildMCPTest(t)
	file := withPolicyTree(t, "{\n  \"deniedMcpServers\": [{\"serverCommand\": ["+jsonQ(bin)+", \"--instructions\", \"demo\"]}]\n}")
	dir, err := os.MkdirTemp("", "sbp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	dir += "/d"
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if err := broker.Serve(ctx, broker.Options{Dir: dir, Build: "test", Idle: time.Minute, Ready: readyOnWrite(ready),
			Admit: daemonAdmit(policyPaths)}); err != nil {
			t.Errorf("broker.Serve: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-ready
	cfg := broker.Config{Dir: dir, Build: "test", Heartbeat: -1}
	req := func(name string, args ...string) broker.Request {
		return broker.Request{Name: name, ProtocolVersion: "2025-11-25", Launch: broker.Launch{Command: bin, Args: args,
			Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: "/", Scope: broker.ScopeUser, Source: broker.SourceUser}}
	}
	attach := func(r broker.Request) (*broker.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return broker.Attach(ctx, cfg, r)
	}
	_, err = attach(req("demo", "--instructions", "demo"))
	if err == nil || !strings.Contains(err.Error(), "deniedMcpServers[0]") || !strings.Contains(err.Error(), file+"#/deniedMcpServers/0") {
		t.Fatalf("attach to a denied launch: %v, want it refused naming the rule", err)
	}
	if st, err := broker.GetStatus(context.Background(), cfg); err != nil || len(st.Instances) != 0 {
		t.Fatalf("daemon status %+v %v: want no instance started", st, err)
	}
	c, err := attach(req("ok"))
	if err != nil || c.ServerPid() == 0 {
		t.Fatalf("attach to an allowed launch: %v", err)
	}
	c.Close()
	// A policy file others could write is broken: it blocks every launch.
	if err := os.Chmod(file, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := attach(req("other", "--instructions", "other")); err == nil || !strings.Contains(err.Error(), "Blocked by your organisation") {
		t.Fatalf("attach under a user-writable policy: %v, want it refused", err)
	}
}

type readyOnWrite chan struct{}

func (c readyOnWrite) Write(p []byte) (int, error) { close(c); return len(p), nil }

// TestSharedRestartInEveryWindow: two real `serve` windows share a server that crashes; both show
// it failed, and a Reconnect in one of them brings it back in both: the other window's status
// goes through starting to ready without being asked, and its calls reach the new process.
func TestSharedRestartInEveryWindow(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	_, env := sharedRuntime(t, bin)
	servers := map[string]any{"s": map[string]any{"command": mcptest, "args": []string{"--crash-after", "1"}, "shared": true}}
	type status struct {
		Name, State string
		Shared      *struct{ DaemonPid int }
	}
	states := func(ms []e2eMsg) []string { // the states of s, in order, from serversChanged
		var out []string
		for _, m := range ms {
			if m.Method != "switchboard/serversChanged" {
				continue
			}
			var p struct{ Servers []status }
			json.Unmarshal(m.Params, &p)
			for _, s := range p.Servers {
				if s.Name == "s" && (len(out) == 0 || out[len(out)-1] != s.State) {
					out = append(out, s.State)
				}
			}
		}
		return out
	}
	last := func(ms []e2eMsg) string {
		if st := states(ms); len(st) > 0 {
			return st[len(st)-1]
		}
		return ""
	}
	var wins []*e2eEditor
	for range 2 {
		e := startE2E(t, bin, env)
		t.Cleanup(func() { e.stdin.Close(); e.wait() })
		e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
			"initializationOptions": map[string]any{"daemonIdleSeconds": 5, "servers": servers}})
		e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		e.await("s ready", func(ms []e2eMsg) bool { return last(ms) == "ready" })
		wins = append(wins, e)
	}
	a, b := wins[0], wins[1]
	for _, text := range []string{"one", "two"} { // the second call crashes the server
		a.call("workspace/executeCommand", map[string]any{"command": "switchboard.callTool",
			"arguments": []any{map[string]any{"name": "mcp__s__echo", "arguments": map[string]any{"text": text}, "mode": "always-allow"}}})
	}
	for _, e := range wins {
		e.await("s failed", func(ms []e2eMsg) bool { return last(ms) == "failed" })
		// A crash is an error, said as one (a deliberate stop is not: TestSharedDaemonStopIsNews).
		e.await("the crash told as an error", func(ms []e2eMsg) bool { return shownAt(ms, 1, "MCP server 's' failed") })
	}
	seen, _ := b.lsp.Messages()
	before := len(seen)
	a.call("workspace/executeCommand", map[string]any{"command": "switchboard.reconnect", "arguments": []any{map[string]any{"server": "s"}}})
	b.await("s back in the other window", func(ms []e2eMsg) bool {
		st := states(ms[before:])
		i := slices.Index(st, "starting")
		return i >= 0 && slices.Contains(st[i:], "ready")
	})
	res := b.call("workspace/executeCommand", map[string]any{"command": "switchboard.callTool",
		"arguments": []any{map[string]any{"name": "mcp__s__echo", "arguments": map[string]any{"text": "again"}, "mode": "always-allow"}}})
	if !strings.Contains(string(res.Result), `"text":"again"`) || strings.Contains(string(res.Result), `"isError":true`) {
		t.Fatalf("the other window's call after the restart: %s", res.Result)
	}
}

// TestDaemonPolicyChange: the organisation's policy changes (a root-owned file rewritten) so that
// a running shared server is blocked: the daemon stops it at once and tells its window why,
// naming the rule; a server the policy still allows keeps running.
func TestDaemonPolicyChange(t *testing.T) {
	bin := checkBuildMCPTest(t)
	file := withPolicyTree(t, "{}\n")
	dir, err := os.MkdirTemp("", "sbp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	dir += "/d"
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if err := broker.Serve(ctx, broker.Options{Dir: dir, Build: "test", Idle: time.Minute, Ready: readyOnWrite(ready),
			Admit: daemonAdmit(policyPaths), Recheck: daemonPolicyChanges(ctx, policyPaths(), slog.New(slog.DiscardHandler))}); err != nil {
			t.Errorf("broker.Serve: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-ready
	cfg := broker.Config{Dir: dir, Build: "test", Heartbeat: -1}
	req := func(name string, args ...string) broker.Request {
		return broker.Request{Name: name, ProtocolVersion: "2025-11-25", Launch: broker.Launch{Command: bin, Args: args,
			Env: []string{"PATH=" + os.Getenv("PATH")}, Dir: "/", Scope: broker.ScopeUser, Source: broker.SourceUser}}
	}
	attach := func(r broker.Request) *broker.Conn {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := broker.Attach(ctx, cfg, r)
		if err != nil {
			t.Fatalf("attach %s: %v", r.Name, err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	demo, ok := attach(req("demo", "--instructions", "demo")), attach(req("ok"))
	ended := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, demo); ended <- err }()
	// Rewritten as an administrator's editor does (a new file renamed over the old), root-owned.
	tmp := file + ".new"
	if err := os.WriteFile(tmp, []byte("{\n  \"deniedMcpServers\": [{\"serverCommand\": ["+jsonQ(bin)+", \"--instructions\", \"demo\"]}]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not stop a running server the policy now blocks")
	}
	e := demo.Exited()
	if e == nil || !demo.InstanceExited() || !strings.Contains(e.Reason, "deniedMcpServers[0]") || !strings.Contains(e.Reason, file+"#/deniedMcpServers/0") {
		t.Fatalf("Exited() = %+v, want the server stopped naming the rule", e)
	}
	st, err := broker.GetStatus(context.Background(), cfg)
	if err != nil || len(st.Instances) != 1 || st.Instances[0].Name != "ok" || st.Instances[0].ServerPid != ok.ServerPid() {
		t.Fatalf("daemon status %+v %v: want only the allowed server, still the same process", st, err)
	}
}

// sharedRuntime is a runtime folder of the test's own (a short path: the daemon's socket lives
// in it), and the windows' environment naming it, so that their daemon is the test's alone; the
// daemon is stopped when the test ends.
func sharedRuntime(t *testing.T, bin string) (runtime string, env []string) {
	t.Helper()
	runtime, err := os.MkdirTemp("", "sbr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtime) })
	os.Chmod(runtime, 0o700)
	env = e2eEnv(t, "XDG_RUNTIME_DIR="+runtime)
	t.Cleanup(func() {
		cmd := exec.Command(bin, "daemon", "stop")
		cmd.Env = env
		cmd.Run() // ignore error: the daemon may have gone with its idle time
	})
	return runtime, env
}

// shownAt: ms hold a window/showMessage of type level (1 error, 2 warning, 3 info) containing text.
func shownAt(ms []e2eMsg, level int, text string) bool {
	for _, m := range ms {
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		if m.Method == "window/showMessage" && json.Unmarshal(m.Params, &p) == nil && p.Type == level && strings.Contains(p.Message, text) {
			return true
		}
	}
	return false
}

// TestSharedDaemonStopIsNews: `switchboard daemon stop` while a real `serve` window uses a shared
// server is a person's doing: the window shows the server stopped (not failed) and says so in one
// informational sentence, never as an error; Reconnect starts it again (in a new daemon).
func TestSharedDaemonStopIsNews(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	_, env := sharedRuntime(t, bin)
	servers := map[string]any{"s": map[string]any{"command": mcptest, "shared": true}}
	last := func(ms []e2eMsg) string { // the latest state of s, from serversChanged
		for j := len(ms) - 1; j >= 0; j-- {
			if ms[j].Method != "switchboard/serversChanged" {
				continue
			}
			var p struct {
				Servers []struct{ Name, State string }
			}
			json.Unmarshal(ms[j].Params, &p)
			for _, s := range p.Servers {
				if s.Name == "s" {
					return s.State
				}
			}
		}
		return ""
	}
	e := startE2E(t, bin, env)
	t.Cleanup(func() { e.stdin.Close(); e.wait() })
	e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"daemonIdleSeconds": 5, "servers": servers}})
	e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	e.await("s ready", func(ms []e2eMsg) bool { return last(ms) == "ready" })
	cmd := exec.Command(bin, "daemon", "stop")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Stopped") {
		t.Fatalf("daemon stop: %v %s", err, out)
	}
	ms := e.await("s stopped, and said so", func(ms []e2eMsg) bool {
		return last(ms) == "stopped" && shownAt(ms, 3, "MCP server 's' stopped: the shared-server daemon was stopped with `switchboard daemon stop`; Reconnect starts the server again.")
	})
	for _, level := range []int{1, 2} {
		if shownAt(ms, level, "'s'") {
			t.Errorf("the stop was told as an error or a warning (type %d)", level)
		}
	}
	e.call("workspace/executeCommand", map[string]any{"command": "switchboard.reconnect", "arguments": []any{map[string]any{"server": "s"}}})
	e.await("s ready again", func(ms []e2eMsg) bool { return last(ms) == "ready" })
}

// TestSharedDaemonSignalledMovesOn: the daemon ended from outside in good order (SIGTERM, as at a
// logout or by a service manager) tells its windows to attach again; a window then moves to a new
// daemon by itself. Nothing failed that the person must act on: the shared server is never shown
// failed and no error or warning pops up; the server is back, under a new daemon, and answers.
// (A daemon killed without a word is a fault, and stays one: TestSharedDaemonKilled in mcpbridge.)
func TestSharedDaemonSignalledMovesOn(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	_, env := sharedRuntime(t, bin)
	servers := map[string]any{"s": map[string]any{"command": mcptest, "shared": true}}
	e := startE2E(t, bin, env)
	t.Cleanup(func() { e.stdin.Close(); e.wait() })
	e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"daemonIdleSeconds": 5, "servers": servers}})
	e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	ms := e.await("s ready, shared", func(ms []e2eMsg) bool {
		s, ok := lastStatus(ms, "s")
		return ok && s.State == "ready" && s.Shared != nil && s.Shared.DaemonPid > 0
	})
	first, _ := lastStatus(ms, "s")
	old := first.Shared.DaemonPid
	if err := syscall.Kill(old, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ms = e.await("s ready under a new daemon", func(ms []e2eMsg) bool {
		s, ok := lastStatus(ms, "s")
		return ok && s.State == "ready" && s.Shared != nil && s.Shared.DaemonPid != old
	})
	for _, m := range ms {
		var p struct{ Servers []sharedPolicyStatus }
		if m.Method == "switchboard/serversChanged" && json.Unmarshal(m.Params, &p) == nil {
			for _, s := range p.Servers {
				if s.Name == "s" && s.State == "failed" {
					t.Errorf("s was shown failed while its window moved to a new daemon: %+v", s)
				}
			}
		}
	}
	for _, level := range []int{1, 2} {
		if shownAt(ms, level, "'s'") {
			t.Errorf("the daemon's orderly end was told as an error or a warning (type %d)", level)
		}
	}
	if got := echo(e, "s", "after"); !strings.Contains(got, "after") {
		t.Errorf("a call after the move: %s", got)
	}
}

type sharedPolicyStatus struct {
	Name, State, Error string
	Shared             *struct {
		Windows   int
		DaemonPid int
	}
}

// lastStatus is server name's status in the last serversChanged of ms (ok false: none yet).
func lastStatus(ms []e2eMsg, name string) (sharedPolicyStatus, bool) {
	for j := len(ms) - 1; j >= 0; j-- {
		if ms[j].Method != "switchboard/serversChanged" {
			continue
		}
		var p struct{ Servers []sharedPolicyStatus }
		json.Unmarshal(ms[j].Params, &p)
		for _, s := range p.Servers {
			if s.Name == name {
				return s, true
			}
		}
		return sharedPolicyStatus{}, false
	}
	return sharedPolicyStatus{}, false
}

// echo calls mcp__<server>__echo in window e and returns the result's JSON.
func echo(e *e2eEditor, server, text string) string {
	res := e.call("workspace/executeCommand", map[string]any{"command": "switchboard.callTool",
		"arguments": []any{map[string]any{"name": "mcp__" + server + "__echo", "arguments": map[string]any{"text": text}, "mode": "always-allow"}}})
	return string(res.Result)
}
