//go:build !unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// Without process groups (Windows) a subject's own process is all that can be ended, whatever
// the signal; what it started may outlive it. sbbench's figures are taken on Linux.

func ownGroup(*exec.Cmd) {}

func signalGroup(pid int, sig syscall.Signal) error { return signalPid(pid, sig) }

func signalPid(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	if sig == 0 {
		return p.Release()
	}
	return p.Kill()
}
