//go:build !unix

package mcpbridge

import "os"

// killPid ends process pid at once, as a crash would; killedError is how that end reads in the
// server's status (Windows: TerminateProcess with exit code 1).
func killPid(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

const killedError = "exit status 1"
