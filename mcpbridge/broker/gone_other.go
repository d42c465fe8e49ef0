//go:build !linux

package broker

// processGone reports whether the process pid has exited. 0 or any doubt: not gone (a window's
// task stays refused to others until its attachment is detached).
func processGone(pid int) bool {
	return pid > 0 && processMissing(pid)
}
