//go:build unix && !linux

package stdio

import (
	"os"
	"os/exec"
)

func groupAlive(pgid int) bool { return groupAliveByKill(pgid) }

// Without PR_SET_PDEATHSIG (macOS, BSD) a server outlives a host killed by SIGKILL; a clean exit
// still kills each server's process group.
func startChild(cmd *exec.Cmd) error { return cmd.Start() }

func procStartTime(pid int) uint64 { return 0 }

// The owner marker is set but not swept here: there is no /proc to read other processes'
// environments from.
func killOwned(tag string) {}

// SweepOrphans is a no-op outside Linux.
func SweepOrphans() int { return 0 }

// awaitExit returns at once: Wait blocks (see proc_linux.go).
func awaitExit(*os.Process) {}

// Prewarm does nothing here: children start without a spawner thread or a pidfd check.
func Prewarm() {}
