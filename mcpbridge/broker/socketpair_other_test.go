//go:build unix && !linux

package broker

import "syscall"

// streamPair is a connected pair of Unix stream sockets, neither inherited by a process the test
// starts. macOS's socketpair takes no SOCK_CLOEXEC, so the flag is set after, under ForkLock as
// package net does, so that no fork in between inherits them.
func streamPair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return fds, nil
}
