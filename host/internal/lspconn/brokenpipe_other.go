//go:build !windows

package lspconn

import (
	"errors"
	"syscall"
)

// brokenPipe reports whether err says the peer no longer reads what is written.
func brokenPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}
