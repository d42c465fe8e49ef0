package broker

import "syscall"

// streamPair is a connected pair of Unix stream sockets, neither inherited by a process the test
// starts.
func streamPair() ([2]int, error) {
	return syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}
