package lspconn

import (
	"errors"
	"syscall"
)

// What a write to a pipe whose reader is gone returns on Windows besides ERROR_BROKEN_PIPE:
// ERROR_NO_DATA ("the pipe is being closed") and ERROR_PIPE_NOT_CONNECTED.
const (
	errNoData           = syscall.Errno(232)
	errPipeNotConnected = syscall.Errno(233)
)

// brokenPipe reports whether err says the peer no longer reads what is written.
func brokenPipe(err error) bool {
	return errors.Is(err, syscall.ERROR_BROKEN_PIPE) || errors.Is(err, errNoData) || errors.Is(err, errPipeNotConnected) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}
