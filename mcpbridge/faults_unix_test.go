//go:build unix

package mcpbridge

// A stdio server's process group, and what left it, end with the server: process groups and
// setsid are Unix's (the transport ends only the child elsewhere; see stdio's proc_other.go).

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procGone reports whether pid no longer runs (gone or a zombie waiting for init).
func procGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) != nil
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

func TestCloseKillsProcessGroup(t *testing.T) {
	r := NewRegistry(Options{})
	defer r.Close()
	applyAndWait(t, r, stdioCfg("parent", "--spawn-child"))
	tr := stdioOf(t, r, "parent")
	leader := tr.Pid()
	var grandchild int
	for i := 0; grandchild == 0; i++ {
		sc := bufio.NewScanner(strings.NewReader(tr.StderrTail()))
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "mcptest: grandchild pid "); ok {
				grandchild, _ = strconv.Atoi(p)
			}
		}
		if i > 5000 {
			t.Fatalf("no grandchild pid in stderr: %s", tr.StderrTail())
		}
		r.Call(context.Background(), "mcp__parent__echo", json.RawMessage(`{"text":"x"}`))
	}
	if procGone(grandchild) {
		t.Fatal("grandchild not running before Close")
	}
	r.Close()
	if !procGone(leader) || !procGone(grandchild) {
		t.Errorf("after Close: leader gone %v, grandchild gone %v", procGone(leader), procGone(grandchild))
	}
}

// waitGone waits (bounded; polling, not sleeping to synchronise) until every pid is gone.
func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var alive []int
		for _, p := range pids {
			if !procGone(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range alive {
				syscall.Kill(p, syscall.SIGKILL) // ignore error: clean up what the test started
			}
			t.Fatalf("%s: still running: %v", what, alive)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// stderrPids waits for the server's stderr to report every "<what> pid N" of whats.
func stderrPids(t *testing.T, r *Registry, server string, whats ...string) []int {
	t.Helper()
	tr := stdioOf(t, r, server)
	pids := make([]int, len(whats))
	for i := 0; ; i++ {
		found := 0
		for line := range strings.Lines(tr.StderrTail()) {
			for k, w := range whats {
				if p, ok := strings.CutPrefix(strings.TrimSpace(line), "mcptest: "+w+" pid "); ok {
					pids[k], _ = strconv.Atoi(p)
				}
			}
		}
		for _, p := range pids {
			if p != 0 {
				found++
			}
		}
		if found == len(whats) {
			return pids
		}
		if i > 5000 {
			t.Fatalf("no %v pids in stderr: %s", whats, tr.StderrTail())
		}
		r.Call(context.Background(), "mcp__"+server+"__echo", json.RawMessage(`{"text":"x"}`)) // a round trip, not a sleep
	}
}

// A grandchild that left the server's process group (setsid) must not outlive the server: Close
// (and a reconnect, which closes first) ends it too.
func TestCloseKillsSetsidGrandchild(t *testing.T) {
	r := NewRegistry(Options{})
	defer r.Close()
	applyAndWait(t, r, stdioCfg("parent", "--spawn-child", "--spawn-setsid-child"))
	leader := stdioOf(t, r, "parent").Pid()
	pids := stderrPids(t, r, "parent", "grandchild", "setsid grandchild")
	t.Cleanup(func() {
		for _, p := range pids {
			if !procGone(p) {
				syscall.Kill(p, syscall.SIGKILL) // ignore error: clean up what the test started
			}
		}
	})
	r.Close()
	waitGone(t, "after Close", append(pids, leader)...)
}
