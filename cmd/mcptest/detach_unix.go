//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// detach starts cmd in a new session (setsid), out of the server's process group.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// leaveGroup moves this process into its parent's process group: a signal to the group its
// client started it in no longer reaches it.
func leaveGroup() error {
	pg, err := syscall.Getpgid(os.Getppid())
	if err != nil {
		return err
	}
	return syscall.Setpgid(0, pg)
}
