//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSharedServeAndCheck: two real `switchboard serve` windows whose user config marks a server
// "shared" run it once, in a daemon the first of them started; `switchboard check` uses that
// instance warm and says so; `switchboard daemon stop` ends it all.
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
	var pids []int
	for i := range 2 {
		e := startE2E(t, bin, env)
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
		t.Cleanup(func() { e.stdin.Close(); e.wait() })
	}
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
