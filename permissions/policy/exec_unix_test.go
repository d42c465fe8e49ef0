//go:build unix

package policy

import (
	"os/exec"
	"syscall"
)

func execAs(exe string, uid int, args ...string) *exec.Cmd {
	cmd := exec.Command(exe, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	return cmd
}
