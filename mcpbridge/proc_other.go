//go:build !unix

package mcpbridge

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
