//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that signalGroup reaches what it starts
// too (a server's children, mcp-hub's servers).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the process group that pid leads.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// signalPid sends sig to pid alone (0: only whether it exists).
func signalPid(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
