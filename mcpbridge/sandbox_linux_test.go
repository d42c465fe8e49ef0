package mcpbridge

import (
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
)

// sandboxProcs returns the host pids of the live processes in PID namespace ns (a sandbox's:
// its launcher is that namespace's init).
func sandboxProcs(t *testing.T, ns string) []int {
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
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err == nil && l == ns && !procGone(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestSandboxedServerLeavesNoProcess: a sandboxed server with a grandchild in its process group
// and one in a session of its own (setsid) leaves nothing running, whether the registry closes
// it or its launcher is killed outright.
func TestSandboxedServerLeavesNoProcess(t *testing.T) {
	sandboxHome(t)
	for _, how := range []string{"Close", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			cfg := stdioCfg("parent", "--spawn-child", "--spawn-setsid-child")
			cfg.Sandbox = &sandbox.Profile{}
			r := newTestRegistry(t, Options{})
			if st := applyAndWait(t, r, cfg)["parent"]; st.State != StateReady {
				t.Fatalf("status %+v", st)
			}
			stderrPids(t, r, "parent", "grandchild", "setsid grandchild") // both started
			leader := stdioOf(t, r, "parent").Pid()
			ns, err := os.Readlink("/proc/" + strconv.Itoa(leader) + "/ns/pid")
			if err != nil {
				t.Fatal(err)
			}
			if self, _ := os.Readlink("/proc/self/ns/pid"); self == ns {
				t.Fatal("the sandboxed server shares the host's PID namespace")
			}
			procs := sandboxProcs(t, ns)
			if len(procs) < 4 {
				t.Fatalf("processes in the sandbox: %v, want the launcher, the server and two grandchildren", procs)
			}
			t.Cleanup(func() {
				for _, p := range sandboxProcs(t, ns) {
					syscall.Kill(p, syscall.SIGKILL) // ignore error: clean up what the test started
				}
			})
			if how == "Close" {
				r.Close()
			} else if err := syscall.Kill(leader, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitGone(t, "after "+how, procs...)
		})
	}
}
