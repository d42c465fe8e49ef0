//go:build unix

package policy

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// openFlags make opening a policy file safe: never block on a FIFO, never follow a final
// symlink (the path opened is already resolved and checked).
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOFOLLOW

// linksHaveOwnACL: a symbolic link's own mode means nothing on Unix; the folder holding it and
// where it leads are what is checked.
const linksHaveOwnACL = false

// resolvePath is path with its symbolic links resolved.
func resolvePath(path string) (string, error) { return filepath.EvalSymlinks(path) }

// ownerSID: Unix owners are uids.
func ownerSID(string) string { return "" }

// owner returns the uid owning fi.
func owner(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// trustedInfo says why fi (of path) cannot hold policy, or nil: it must be owned by root and
// not writable by group or others. A directory that is world-writable with the sticky bit set
// and owned by root (/tmp) is accepted: nobody but root can replace what root put in it.
func trustedInfo(path string, fi fs.FileInfo, _ trustRole) error {
	uid, ok := owner(fi)
	if !ok {
		return fmt.Errorf("%s: cannot tell its owner", path)
	}
	if uid != 0 {
		return fmt.Errorf("%s is owned by uid %d, not root: a policy the user can change is no policy", path, uid)
	}
	if fi.Mode()&0o022 != 0 && !(fi.IsDir() && fi.Mode()&fs.ModeSticky != 0) {
		return fmt.Errorf("%s is writable by group or others (mode %s): a policy the user can change is no policy", path, fi.Mode().Perm())
	}
	return nil
}
