//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"os/exec"
)

var errUnsupported = errors.New("sandbox: this system has no sandbox Switchboard can use (Linux with Landlock, or macOS); the server was not started")

func (s *Sandbox) prepare(cmd *exec.Cmd, launcher string) error { return errUnsupported }
func (s *Sandbox) started() error                               { return errUnsupported }

// Main is the launcher entry; there is no launcher on this system.
func Main() {}

// Available reports why this system cannot run a sandboxed server.
func Available() error { return errUnsupported }
