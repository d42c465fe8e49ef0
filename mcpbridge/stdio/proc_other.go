//go:build !unix

package stdio

import (
	"os"
	"os/exec"
	"time"
)

// Without process groups only the child itself can be ended (Windows: TODO(mcpbridge) job objects).
func ownProcessGroup(cmd *exec.Cmd) {}

func terminateGroup(p *os.Process) error { return p.Kill() }
func killGroup(p *os.Process) error      { return p.Kill() }

func waitGroupGone(p *os.Process, limit time.Duration) {}

// Windows: the child alone is started and killed (no parent-death signal, no sweep; TODO(mcpbridge):
// a job object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE would give both).
func startChild(cmd *exec.Cmd) error { return cmd.Start() }

func procStartTime(pid int) uint64 { return 0 }

func killOwned(tag string) {}

// SweepOrphans is a no-op outside Linux.
func SweepOrphans() int { return 0 }

// awaitExit returns at once: Wait blocks (see proc_linux.go).
func awaitExit(*os.Process) {}

// Prewarm does nothing here: children start without a spawner thread or a pidfd check.
func Prewarm() {}
