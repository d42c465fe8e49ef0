//go:build !linux

package main

import "os"

// pollableStdin returns stdin as it is: the host's framer reads it through a goroutine of its
// own (see stdin_linux.go; on macOS kqueue reports no end of file for a FIFO, golang/go#24164).
func pollableStdin() (in *os.File, restore func()) { return os.Stdin, func() {} }

// pollableStdout returns stdout as it is (see stdin_linux.go).
func pollableStdout(cur *os.File) (out *os.File, restore func()) { return cur, func() {} }
