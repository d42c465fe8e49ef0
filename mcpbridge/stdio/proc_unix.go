//go:build unix

package stdio

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// ownProcessGroup makes the child lead a new process group, so that everything it spawns
// (npx, uvx and their children) can be signalled at once.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the child's whole process group, and to the child itself when it
// moved out of that group (setpgid into another): Close waits for the child's exit, and a child
// that left its group and ignored the end of its stdin was never signalled, so the host never
// exited (TestExitServerLeftItsGroup). The child is signalled through its os.Process, which
// never reaches another process that took its pid after it was reaped. A group that is gone is
// not an error.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	return SignalGroup(p, sig)
}

// SignalGroup is signalGroup for a process started without the stdio transport (the shared-server
// daemon's servers, started in a group of their own the same way).
func SignalGroup(p *os.Process, sig syscall.Signal) error {
	if pg, err := syscall.Getpgid(p.Pid); err == nil && pg != p.Pid {
		_ = p.Signal(sig) // ignore error: reaped already (then it is done)
	}
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

func terminateGroup(p *os.Process) error { return signalGroup(p, syscall.SIGTERM) }
func killGroup(p *os.Process) error      { return signalGroup(p, syscall.SIGKILL) }

// waitGroupGone waits (at most limit) until no process of the child's group is left, so that
// Close returns with the whole tree gone, not merely signalled.
func waitGroupGone(p *os.Process, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if !groupAlive(p.Pid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// groupAliveByKill reports whether any process of group pgid exists (zombies included).
func groupAliveByKill(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}
