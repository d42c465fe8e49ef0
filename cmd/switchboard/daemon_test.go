//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
)

// TestDaemonCommand: a window starts the real binary as `switchboard daemon`; `daemon status`
// shows its server and windows; `daemon stop` stops it, leaving no socket and no server.
func TestDaemonCommand(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	dir, err := os.MkdirTemp("", "sbd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o700)
	state := t.TempDir()
	cfg := broker.Config{Dir: dir, Build: version, Start: func(sock string) *exec.Cmd {
		cmd := daemonStart(time.Minute)(sock)
		cmd.Path, cmd.Args[0] = bin, bin // the built binary, not this test
		for i, a := range cmd.Args {
			if a == "--log" { // this test's state directory, not the user's
				cmd.Args[i+1] = filepath.Join(state, "switchboard", "daemon.log")
			}
		}
		return cmd
	}}
	req := broker.Request{Name: "demo", Display: "mcptest", ProtocolVersion: "2025-11-25",
		Launch: broker.Launch{Command: mcptest, Env: []string{"PATH=/usr/bin:/bin"}, Scope: broker.ScopeUser, Source: broker.SourceUser}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := broker.Attach(ctx, cfg, req)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := exec.Command(bin, "daemon", "status", "--dir", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "demo  user scope, 1 window") || !strings.Contains(string(out), "pid "+strconv.Itoa(c.DaemonPid())) {
		t.Fatalf("daemon status: %v\n%s", err, out)
	}
	if log, _ := os.ReadFile(state + "/switchboard/daemon.log"); !strings.Contains(string(log), "daemon listening") {
		t.Errorf("daemon.log: %q", log)
	}
	out, err = exec.Command(bin, "daemon", "stop", "--dir", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Stopped") {
		t.Fatalf("daemon stop: %v\n%s", err, out)
	}
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond) // other processes' exits: looked at, not waited on
	defer tick.Stop()
	for !(gonePid(c.DaemonPid()) && gonePid(c.ServerPid())) {
		select {
		case <-deadline:
			t.Fatal("daemon or server still running after daemon stop")
		case <-tick.C:
		}
	}
	if _, err := os.Lstat(broker.PathsIn(dir).Sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket left after stop: %v", err)
	}
	out, _ = exec.Command(bin, "daemon", "status", "--dir", dir).CombinedOutput()
	if !strings.Contains(string(out), "No shared-server daemon is running") {
		t.Errorf("status after stop: %s", out)
	}
	out, _ = exec.Command(bin, "daemon", "status", "--json", "--dir", dir).Output()
	var none any = "unset"
	if err := json.Unmarshal(out, &none); err != nil || none != nil {
		t.Errorf("status --json after stop = %q (%v), want JSON null", out, err)
	}
}

// gonePid: exited, or a zombie waiting to be reaped.
func gonePid(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && (b[i+2] == 'Z' || b[i+2] == 'X')
}

// TestDaemonVerbs: the daemon's verbs are a listed command (switchboard help daemon answered
// "unknown command"), and bare `switchboard daemon` or a mistyped verb is a usage error: it ran
// a daemon in the foreground that printed nothing, or said only "unexpected argument".
func TestDaemonVerbs(t *testing.T) {
	needFaultBinaries(t)
	var out, errb strings.Builder
	usage(&out)
	if !strings.Contains(out.String(), "daemon status|stop|restart") {
		t.Errorf("usage does not list daemon:\n%s", out.String())
	}
	out.Reset()
	if code := run([]string{"help", "daemon"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "usage: switchboard daemon status|stop|restart") {
		t.Errorf("help daemon = %d\nstdout %s\nstderr %s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"daemon", "satus"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown command "satus" (want status, stop or restart)`) {
		t.Errorf("daemon satus = %d\nstderr %s", code, errb.String())
	}

	// Bare: the real binary, its runtime folder a temporary one, so that a daemon it started
	// would be a socket there (and would be this test's to kill, by the context).
	rt, err := os.MkdirTemp("", "sbd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(rt)
	os.Chmod(rt, 0o700)
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout())
	defer cancel()
	cmd := exec.CommandContext(ctx, fBins.switchboard, "daemon")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "XDG_RUNTIME_DIR=" + rt, "XDG_STATE_HOME=" + home}
	b, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.HasPrefix(string(b), "usage: switchboard daemon status|stop|restart") {
		t.Errorf("switchboard daemon: %v\n%s", err, b)
	}
	if ents, _ := os.ReadDir(filepath.Join(rt, "switchboard")); len(ents) != 0 {
		t.Errorf("switchboard daemon started a daemon: %v", ents)
	}
}
