//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// The organisation's policy against shared servers, with real `switchboard serve` windows and the
// real daemon they start. A window reads its policy from the platform's place (/etc/switchboard
// here) and nothing else: there is no flag or variable for it. So each window runs in a mount
// namespace of its own (unshare -m) whose /etc is the real one with the test's policy directory
// bound at /etc/switchboard; the daemon a window starts shares that window's view. Needs root.

// nsServe returns a program that runs `switchboard serve` (bin) with policyDir as its
// /etc/switchboard, for startE2E.
func nsServe(t *testing.T, bin, policyDir string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: a mount namespace with a root-owned policy directory at /etc/switchboard")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare(1)")
	}
	scratch := t.TempDir()
	probe := exec.Command("unshare", "-m", "true")
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("cannot make a mount namespace here: %v %s", err, out)
	}
	// The overlay gives /etc a switchboard directory to bind onto without touching the real /etc;
	// its upper layer is per window (two overlays may not share one).
	script := `#!/bin/sh
exec unshare -m --propagation private /bin/sh -c '
set -e
ov=$(mktemp -d "$1/ov.XXXXXX")
mkdir -p "$ov/u/switchboard" "$ov/w"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$ov/u,workdir=$ov/w" /etc
mount --bind "$2" /etc/switchboard
shift 2
exec "$@"' sh ` + shellQ(scratch) + ` ` + shellQ(policyDir) + ` ` + shellQ(bin) + ` "$@"
`
	path := filepath.Join(scratch, "serve-in-ns")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func shellQ(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// rootPolicyDir makes a root-owned 0755 directory holding settings as managed-settings.json
// (0644), and returns the directory and a function that replaces the file as an administrator's
// editor does (a new file renamed over the old).
func rootPolicyDir(t *testing.T, settings string) (dir string, rewrite func(string)) {
	t.Helper()
	base := t.TempDir()
	os.Chmod(base, 0o755)
	dir = filepath.Join(base, "policy")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	rewrite = func(s string) {
		t.Helper()
		tmp := filepath.Join(dir, policy.SettingsFile+".new")
		if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chmod(tmp, 0o644)
		if err := os.Rename(tmp, filepath.Join(dir, policy.SettingsFile)); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(settings)
	return dir, rewrite
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// TestSharedPolicyBlocksInEveryWindow: two real `serve` windows use one shared server in a real
// daemon; the organisation's policy then denies it. Both windows show it blocked with the rule,
// no call from either reaches the server from then on, and the daemon stops the instance (no
// window may run it), while a shared server the policy still allows keeps its process. Allowed
// again, it comes back in both windows by itself, on one new process.
func TestSharedPolicyBlocksInEveryWindow(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	polDir, rewrite := rootPolicyDir(t, "{}\n")
	serve := nsServe(t, bin, polDir)
	_, env := sharedRuntime(t, bin)
	record := filepath.Join(t.TempDir(), "s.record")
	servers := map[string]any{
		"s":    map[string]any{"command": mcptest, "args": []string{"--record", record}, "shared": true},
		"keep": map[string]any{"command": mcptest, "args": []string{"--instructions", "keep"}, "shared": true},
	}
	var wins []*e2eEditor
	for i := range 2 {
		e := startE2E(t, serve, env)
		t.Cleanup(func() { e.stdin.Close(); e.wait() })
		e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
			"initializationOptions": map[string]any{"daemonIdleSeconds": 30, "servers": servers}})
		e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		e.await("s and keep ready, shared", func(ms []e2eMsg) bool {
			s, ok1 := lastStatus(ms, "s")
			k, ok2 := lastStatus(ms, "keep")
			return ok1 && ok2 && s.State == "ready" && k.State == "ready" && s.Shared != nil && s.Shared.Windows == i+1
		})
		wins = append(wins, e)
	}
	for i, e := range wins {
		if r := echo(e, "s", "before-"+strconv.Itoa(i)); !strings.Contains(r, "before-"+strconv.Itoa(i)) || strings.Contains(r, `"isError":true`) {
			t.Fatalf("window %d's call before the change: %s", i, r)
		}
	}
	st := daemonStatus(t, bin, env)
	sPid, keepPid := st.pid("s"), st.pid("keep")
	if sPid == 0 || keepPid == 0 {
		t.Fatalf("daemon status %+v: want s and keep running", st)
	}

	rewrite("{\n  \"deniedMcpServers\": [{\"serverCommand\": [" + jsonQ(mcptest) + ", \"--record\", " + jsonQ(record) + "]}]\n}\n")
	for i, e := range wins {
		e.await("s blocked", func(ms []e2eMsg) bool {
			s, _ := lastStatus(ms, "s")
			return s.State == "blocked"
		})
		msgs, _ := e.lsp.Messages()
		s, _ := lastStatus(msgs, "s")
		if !strings.Contains(s.Error, "deniedMcpServers[0]") {
			t.Errorf("window %d: s blocked with %q, want the rule named", i, s.Error)
		}
		if k, _ := lastStatus(msgs, "keep"); k.State != "ready" {
			t.Errorf("window %d: keep is %s, want ready", i, k.State)
		}
	}
	for i, e := range wins {
		text := "after-" + strconv.Itoa(i)
		if r := echo(e, "s", text); strings.Contains(r, text) && !strings.Contains(r, `"isError":true`) {
			t.Errorf("window %d's call after the policy denied s ran: %s", i, r)
		}
		if r := echo(e, "keep", "still"); !strings.Contains(r, "still") || strings.Contains(r, `"isError":true`) {
			t.Errorf("window %d's call to keep: %s", i, r)
		}
	}
	rec, _ := os.ReadFile(record)
	if strings.Contains(string(rec), "after-") {
		t.Errorf("a call made after the policy denied s reached it:\n%s", rec)
	}
	// No window may run s: the daemon's instance is stopped (its process gone: the daemon reaps
	// its children, so a pid still there is the server), keep's is not. The daemon sees the
	// change through its own watch, not the windows': waited for.
	st = awaitDaemon(t, bin, env, "s stopped in the daemon", func(st daemonStatusJSON) bool { return st.pid("s") == 0 && !alive(sPid) })
	if st.pid("keep") != keepPid {
		t.Errorf("daemon status %+v: want keep still pid %d", st, keepPid)
	}

	// The policy allows it again: both windows start it by themselves, on one new process.
	rewrite("{}\n")
	for _, e := range wins {
		e.await("s ready again, shared", func(ms []e2eMsg) bool {
			s, _ := lastStatus(ms, "s")
			return s.State == "ready" && s.Shared != nil
		})
	}
	for i, e := range wins {
		text := "again-" + strconv.Itoa(i)
		if r := echo(e, "s", text); !strings.Contains(r, text) || strings.Contains(r, `"isError":true`) {
			t.Errorf("window %d's call once allowed again: %s", i, r)
		}
	}
	st = daemonStatus(t, bin, env)
	if len(st.Instances) != 2 || st.pid("s") == 0 || st.pid("s") == sPid {
		t.Errorf("daemon status %+v: want one new s and keep", st)
	}
	for _, in := range st.Instances {
		if in.Windows != 2 {
			t.Errorf("daemon status: %s used by %d windows, want 2", in.Name, in.Windows)
		}
	}
}

type daemonStatusJSON struct {
	Pid       int
	Instances []struct {
		Name      string
		ServerPid int
		Windows   int
	}
}

func (s daemonStatusJSON) pid(name string) int {
	for _, in := range s.Instances {
		if in.Name == name {
			return in.ServerPid
		}
	}
	return 0
}

// awaitDaemon asks the daemon for its status until cond holds (the change is in another process,
// with no event this test can wait on), and fails the test after e2eTimeout.
func awaitDaemon(t *testing.T, bin string, env []string, what string, cond func(daemonStatusJSON) bool) daemonStatusJSON {
	t.Helper()
	deadline := time.Now().Add(e2eTimeout())
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		st := daemonStatus(t, bin, env)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; daemon status %+v", e2eTimeout(), what, st)
		}
		<-tick.C
	}
}

func daemonStatus(t *testing.T, bin string, env []string) daemonStatusJSON {
	t.Helper()
	cmd := exec.Command(bin, "daemon", "status", "--json")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("daemon status: %v %s", err, out)
	}
	var st daemonStatusJSON
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("daemon status: %v %s", err, out)
	}
	return st
}

// TestSharedPolicyOneWindowDenies: the policy is each process's own to read, and the two windows
// here read different ones (as an editor in a sandbox of its own may): window B's, and the
// daemon's (B started it), allow the shared server; window A's comes to deny it. A shows it
// blocked and none of its calls reaches the server; B keeps using the same process, now alone.
// (The window, not only the daemon, enforces its policy: a daemon of an older build, or one whose
// view of the policy lags, cannot run a call the window's policy forbids.)
func TestSharedPolicyOneWindowDenies(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	dirB, _ := rootPolicyDir(t, "{}\n")
	dirA, rewriteA := rootPolicyDir(t, "{}\n")
	_, env := sharedRuntime(t, bin)
	record := filepath.Join(t.TempDir(), "s.record")
	servers := map[string]any{"s": map[string]any{"command": mcptest, "args": []string{"--record", record}, "shared": true}}
	var wins []*e2eEditor
	for i, dir := range []string{dirB, dirA} {
		e := startE2E(t, nsServe(t, bin, dir), env)
		t.Cleanup(func() { e.stdin.Close(); e.wait() })
		e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
			"initializationOptions": map[string]any{"daemonIdleSeconds": 30, "servers": servers}})
		e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		e.await("s ready, shared", func(ms []e2eMsg) bool {
			s, ok := lastStatus(ms, "s")
			return ok && s.State == "ready" && s.Shared != nil && s.Shared.Windows == i+1
		})
		wins = append(wins, e)
	}
	b, a := wins[0], wins[1]
	pid := daemonStatus(t, bin, env).pid("s")
	rewriteA("{\n  \"deniedMcpServers\": [{\"serverName\": \"s\"}]\n}\n")
	a.await("s blocked in A", func(ms []e2eMsg) bool {
		s, _ := lastStatus(ms, "s")
		return s.State == "blocked"
	})
	if r := echo(a, "s", "from-a"); strings.Contains(r, "from-a") && !strings.Contains(r, `"isError":true`) {
		t.Errorf("window A's call after its policy denied s ran: %s", r)
	}
	if r := echo(b, "s", "from-b"); !strings.Contains(r, "from-b") || strings.Contains(r, `"isError":true`) {
		t.Errorf("window B's call: %s", r)
	}
	if rec, _ := os.ReadFile(record); strings.Contains(string(rec), "from-a") || !strings.Contains(string(rec), "from-b") {
		t.Errorf("the server's record: want B's call and not A's:\n%s", rec)
	}
	// A's leaving reaches the daemon when A's connection ends: waited for.
	st := awaitDaemon(t, bin, env, "A detached", func(st daemonStatusJSON) bool { return len(st.Instances) == 1 && st.Instances[0].Windows == 1 })
	if st.pid("s") != pid {
		t.Errorf("daemon status %+v: want s still pid %d", st, pid)
	}
	msgs, _ := b.lsp.Messages()
	if s, _ := lastStatus(msgs, "s"); s.State != "ready" {
		t.Errorf("window B: s is %s, want ready", s.State)
	}
}

// TestSharedServersPolicy: the organisation's "sharedServers": "deny" keeps every server in its
// window: two windows whose user marks a server shared each run it themselves, and no daemon runs
// it. When the policy allows sharing again, both move to one shared process; denied again, both
// run it themselves again.
func TestSharedServersPolicy(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	polDir, rewrite := rootPolicyDir(t, "{\"sharedServers\": \"deny\"}\n")
	serve := nsServe(t, bin, polDir)
	runtime, err := os.MkdirTemp("", "sbr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtime) })
	os.Chmod(runtime, 0o700)
	env := e2eEnv(t, "XDG_RUNTIME_DIR="+runtime)
	t.Cleanup(func() {
		cmd := exec.Command(bin, "daemon", "stop")
		cmd.Env = env
		cmd.Run() // ignore error: the daemon may not have started
	})
	servers := map[string]any{"s": map[string]any{"command": mcptest, "shared": true}}
	inWindow := func(ms []e2eMsg) bool {
		s, _ := lastStatus(ms, "s")
		return s.State == "ready" && s.Shared == nil
	}
	var wins []*e2eEditor
	for range 2 {
		e := startE2E(t, serve, env)
		t.Cleanup(func() { e.stdin.Close(); e.wait() })
		e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
			"initializationOptions": map[string]any{"daemonIdleSeconds": 30, "servers": servers}})
		e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		e.await("s ready in the window", inWindow)
		wins = append(wins, e)
	}
	for i, e := range wins {
		msgs, _ := e.lsp.Messages()
		if s, _ := lastStatus(msgs, "s"); s.Shared != nil {
			t.Fatalf("window %d: s shared (%+v) under sharedServers deny", i, s.Shared)
		}
	}
	cmd := exec.Command(bin, "daemon", "status")
	cmd.Env = env
	if out, _ := cmd.CombinedOutput(); !strings.Contains(string(out), "No shared-server daemon is running") {
		t.Fatalf("under sharedServers deny:\n%s", out)
	}

	rewrite("{}\n")
	for _, e := range wins {
		e.await("s shared once allowed", func(ms []e2eMsg) bool {
			s, _ := lastStatus(ms, "s")
			return s.State == "ready" && s.Shared != nil
		})
	}
	if st := daemonStatus(t, bin, env); len(st.Instances) != 1 || st.Instances[0].Windows != 2 {
		t.Fatalf("daemon status %+v: want s shared by both windows", st)
	}

	rewrite("{\"sharedServers\": \"deny\"}\n")
	for _, e := range wins {
		e.await("s back in the window", inWindow)
	}
	for i, e := range wins {
		if r := echo(e, "s", "mine"); !strings.Contains(r, "mine") || strings.Contains(r, `"isError":true`) {
			t.Errorf("window %d's call: %s", i, r)
		}
	}
}

// TestSharedPolicyDaemonDenies: the daemon reads the policy itself and refuses a launch its
// policy denies, whatever the window says (design §4.2); a window whose own policy allows the
// server then runs it itself, ready and unshared, while its other shared server stays shared.
// Window A, whose policy denies s, starts the daemon (for keep) in its view of the policy.
func TestSharedPolicyDaemonDenies(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	dirA, _ := rootPolicyDir(t, "{\n  \"deniedMcpServers\": [{\"serverName\": \"s\"}]\n}\n")
	dirB, _ := rootPolicyDir(t, "{}\n")
	_, env := sharedRuntime(t, bin)
	servers := map[string]any{
		"s":    map[string]any{"command": mcptest, "shared": true},
		"keep": map[string]any{"command": mcptest, "args": []string{"--instructions", "keep"}, "shared": true},
	}
	start := func(dir string) *e2eEditor {
		e := startE2E(t, nsServe(t, bin, dir), env)
		t.Cleanup(func() { e.stdin.Close(); e.wait() })
		e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
			"initializationOptions": map[string]any{"daemonIdleSeconds": 30, "servers": servers}})
		e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		return e
	}
	a := start(dirA)
	a.await("keep shared, s blocked in A", func(ms []e2eMsg) bool {
		s, _ := lastStatus(ms, "s")
		k, _ := lastStatus(ms, "keep")
		return s.State == "blocked" && k.State == "ready" && k.Shared != nil
	})
	b := start(dirB)
	b.await("keep shared and s ready in B", func(ms []e2eMsg) bool {
		s, _ := lastStatus(ms, "s")
		k, _ := lastStatus(ms, "keep")
		return s.State == "ready" && k.State == "ready" && k.Shared != nil
	})
	msgs, _ := b.lsp.Messages()
	if s, _ := lastStatus(msgs, "s"); s.Shared != nil {
		t.Errorf("B's s is shared (%+v) in a daemon whose policy denies it", s.Shared)
	}
	if r := echo(b, "s", "in-b"); !strings.Contains(r, "in-b") || strings.Contains(r, `"isError":true`) {
		t.Errorf("B's call: %s", r)
	}
	if st := daemonStatus(t, bin, env); st.pid("s") != 0 || st.pid("keep") == 0 {
		t.Errorf("daemon status %+v: want keep and no s", st)
	}
}
