//go:build unix

package main

import (
	"os"
	"syscall"
)

// pollableStdin returns stdin as a file the Go runtime polls when it is a pipe or a socket (how
// editors start `switchboard serve`): the host's framer then reads it on its own goroutine with
// read deadlines, instead of through a second goroutine blocked in read(2) that hands every chunk
// over (one goroutine wake-up per message, cmd/sbbench). restore puts the descriptor back in
// blocking mode for whoever shares it after the host. A terminal or a file is returned as it is:
// making a terminal non-blocking would leave the shell reading it in that mode.
func pollableStdin() (in *os.File, restore func()) {
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil {
		return os.Stdin, func() {}
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO, syscall.S_IFSOCK:
	default:
		return os.Stdin, func() {}
	}
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin, func() {}
	}
	// A descriptor that is non-blocking when wrapped is registered with the runtime's poller.
	in = os.NewFile(0, "/dev/stdin")
	return in, func() { _ = syscall.SetNonblock(0, false) } // ignore error: best effort at exit
}
