//go:build !unix

package main

import "os"

// pollableStdin returns stdin as it is: where there is no non-blocking mode to set, the host's
// framer reads it through a goroutine of its own (see stdin_unix.go).
func pollableStdin() (in *os.File, restore func()) { return os.Stdin, func() {} }
