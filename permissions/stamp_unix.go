//go:build linux || openbsd || dragonfly || solaris || illumos || darwin || freebsd || netbsd

package permissions

import (
	"os"
	"syscall"
)

// statIdentity is a file's device, inode and change time (ctime), and whether the system gave
// them (see fileStamp).
func statIdentity(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), ctime: changeTime(st)}, true //nolint:unconvert // Dev's type differs by system
}
