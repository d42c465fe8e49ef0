//go:build !linux

package broker

import "os/exec"

// spawn starts cmd. There is no parent-death signal here: a killed daemon's children are left to
// the owner-tag sweep and to noticing that their stdin closed.
func spawn(cmd *exec.Cmd) error { return cmd.Start() }
