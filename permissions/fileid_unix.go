//go:build !windows

package permissions

import (
	"os"
	"syscall"
)

// fileID is a file's device and inode: a file renamed over another (an atomic write) has a new one.
type fileID struct{ dev, ino uint64 }

func fileIDOf(fi os.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)} //nolint:unconvert // Dev is int32 on some systems
	}
	return fileID{}
}
