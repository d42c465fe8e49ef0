//go:build linux

package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The sandbox's PID namespace: what a server can see and reach of other processes in /proc,
// and that its tree ends with it. Linux only, like the Landlock launcher that makes it.

// secretWord is a fresh secret, so no other process on the machine can hold it by chance.
func secretWord(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "SECRET-" + hex.EncodeToString(b)
}

// holdWith starts "escaper _hold args..." unconfined (a sibling process: say another, unsandboxed
// server started with --token) and stops it when the test ends.
func holdWith(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(escaperPath(t), append([]string{"_hold"}, args...)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait() // ignore error: it exits when stdin closes
	})
	return cmd
}

// TestPIDProcHidesOtherProcesses: a sandboxed server hunting another process's secret argument
// in /proc (an unsandboxed server started with --token SECRET) finds nothing, by scanning /proc
// or by naming the pid, itself or from a setsid grandchild; every process it can see is of its
// own sandbox.
func TestPIDProcHidesOtherProcesses(t *testing.T) {
	requireLandlock(t)
	w := newWorld(t)
	secret := secretWord(t)
	sib := holdWith(t, "--token", secret)
	cmdline := "/proc/" + strconv.Itoa(sib.Process.Pid) + "/cmdline"
	actions := []string{"procscan:" + secret, "read:" + cmdline, "fork", "procscan:" + secret, "read:" + cmdline}

	// The control: unconfined, the secret is there to find.
	u := runUnconfined(t, w, actions[:2]...)
	for _, a := range actions[:2] {
		if !u[a].OK {
			t.Fatalf("control: unconfined %s failed (%+v): the test proves nothing", a, u[a])
		}
	}

	got := runConfined(t, w, Profile{}, Options{}, actions...)
	esc := escaperPath(t)
	for _, prefix := range []string{"", "grandchild "} {
		for _, a := range actions[:2] {
			r, ok := got[prefix+a]
			if !ok {
				t.Errorf("%s%s: no result", prefix, a)
			} else if r.OK || strings.Contains(r.Body, secret) {
				t.Errorf("%s%s: found the secret (%+v)", prefix, a, r)
			}
		}
		r := got[prefix+"procscan:"+secret]
		if r.Body == "" {
			t.Errorf("%sprocscan: saw no process at all (not even itself): %+v", prefix, r)
		}
		for _, line := range strings.Split(r.Body, "\n") {
			pid, argv0, _ := strings.Cut(line, " ")
			if argv0 != esc {
				t.Errorf("%sprocscan: sees process %s (%q), not of its own sandbox", prefix, pid, argv0)
			}
		}
	}
}

// startHolding starts the escaper confined with actions (the last one "wait"), reads results
// until the one for last arrives, and returns the command and that result.
func startHolding(t *testing.T, w world, setpgid bool, last string, actions ...string) (*exec.Cmd, tryResult, io.Closer) {
	t.Helper()
	esc := escaperPath(t)
	plan, err := Resolve(Profile{}, w.env(esc))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(esc, actions...)
	cmd.Dir = w.project
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: setpgid}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Wrap(cmd, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := sb.Started(); err != nil {
		cmd.Wait()
		t.Fatalf("Started: %v", err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var r tryResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("escaper printed %q: %v", sc.Text(), err)
		}
		if r.Action == last {
			return cmd, r, in
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatalf("no result for %s", last)
	return nil, tryResult{}, nil
}

// pidsHolding returns the host pids of processes that have word as an argument.
func pidsHolding(t *testing.T, word string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), word) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && !strings.HasPrefix(string(b[i+1:]), " Z")
}

// TestPIDKillEndsTree: a sandboxed server leaves a setsid grandchild behind (a double fork, out
// of its process group and session); when the host ends the server, however it does (SIGKILL or
// SIGTERM to the one process it started, or SIGTERM to its group as mcpbridge/stdio does), the
// whole sandboxed tree is gone by the time the host has reaped that process: no orphan runs on.
func TestPIDKillEndsTree(t *testing.T) {
	requireLandlock(t)
	for _, tc := range []struct {
		name  string
		group bool
		sig   syscall.Signal
	}{
		{"SIGKILL", false, syscall.SIGKILL},
		{"SIGTERM", false, syscall.SIGTERM},
		{"group SIGTERM", true, syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			marker := secretWord(t)
			cmd, r, in := startHolding(t, w, tc.group, "spawn:"+marker, "spawn:"+marker, "wait")
			defer in.Close()
			if !r.OK {
				t.Fatalf("spawn: %+v", r)
			}
			left := pidsHolding(t, marker)
			if len(left) != 1 {
				t.Fatalf("processes holding the marker: %v, want the one grandchild", left)
			}
			t.Cleanup(func() {
				for _, pid := range pidsHolding(t, marker) {
					syscall.Kill(pid, syscall.SIGKILL) // the test's own leftover, if it failed
				}
			})
			pid := cmd.Process.Pid
			if tc.group {
				pid = -pid
			}
			if err := syscall.Kill(pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("server exit = %v, want it ended by %v", err, tc.sig)
			}
			if ws := exit.Sys().(syscall.WaitStatus); !(ws.Signaled() && ws.Signal() == tc.sig) && ws.ExitStatus() != 128+int(tc.sig) {
				t.Errorf("server exit = %v, want it ended by %v", err, tc.sig)
			}
			if alive(left[0]) {
				t.Errorf("the setsid grandchild %d runs on after the server ended", left[0])
			}
		})
	}
}

// TestPIDOrphanReaped: an orphan inside the sandbox (a double-forked grandchild that exits) is
// reaped there, not left a zombie for the server's life.
func TestPIDOrphanReaped(t *testing.T) {
	requireLandlock(t)
	w := newWorld(t)
	got := runConfined(t, w, Profile{}, Options{}, "orphan")
	if r := got["orphan"]; !r.OK {
		t.Errorf("orphan: %+v", r)
	}
}
