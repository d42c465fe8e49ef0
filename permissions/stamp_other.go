//go:build !(linux || openbsd || dragonfly || solaris || illumos || darwin || freebsd || netbsd)

package permissions

import "os"

// statIdentity has nothing to give where FileInfo carries no change time (Windows keeps its
// ChangeTime and file index behind the handle; a copy that keeps the modification time is common
// there): the trust store then parses the file on every look.
func statIdentity(os.FileInfo) (fileID, bool) { return fileID{}, false }
