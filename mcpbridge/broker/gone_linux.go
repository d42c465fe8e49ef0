package broker

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// processGone reports whether the process pid has exited (a zombie counts: its descriptors are
// closed, it follows nothing any more). 0 or any doubt: not gone.
func processGone(pid int) bool {
	if pid <= 0 {
		return false
	}
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && (b[i+2] == 'Z' || b[i+2] == 'X')
}
