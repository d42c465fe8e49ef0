//go:build !unix

package main

import (
	"errors"
	"os/exec"
)

func detach(cmd *exec.Cmd) {}

func leaveGroup() error { return errors.New("no process groups here") }
