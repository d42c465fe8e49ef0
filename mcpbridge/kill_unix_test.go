//go:build unix

package mcpbridge

import "syscall"

// killPid ends process pid at once, as a crash would; killedError is how that end reads in the
// server's status.
func killPid(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

const killedError = "signal: killed"
