package permissions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// lockTimeout bounds how long a writer waits for another process's lock.
const lockTimeout = 30 * time.Second

// lockPath takes the cross-process lock that serialises writers of path. The lock lives in a
// separate file (path + ".lock"): an atomic rename replaces the data file's inode, so a lock on
// the data file itself would protect nothing.
func lockPath(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	l := flock.New(path+".lock", flock.SetPermissions(0o600))
	ctx, cancel := context.WithTimeout(context.Background(), lockTimeout)
	defer cancel()
	ok, err := l.TryLockContext(ctx, 2*time.Millisecond)
	if err != nil || !ok {
		l.Close()
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("another process holds %s.lock for more than %s", path, lockTimeout)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { l.Unlock(); l.Close() }, nil
}

// fileMode returns the permission bits of the existing file at path, or def when it does not exist.
func fileMode(path string, def fs.FileMode) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return def
}

// writeAtomic replaces path with data atomically (see writeFileAtomic). The existing file's mode
// is kept exactly; a new file gets 0600. Temp files left by a writer that crashed (SIGKILL between
// creating and renaming its temp file) are removed first; the caller holds the lock, so no live
// writer of ours owns them.
func writeAtomic(path string, data []byte) error {
	perm := fileMode(path, 0o600)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	removeStaleTemps(path)
	return writeFileAtomic(path, data, perm)
}

// removeStaleTemps removes renameio temp files of path: "." + base + decimal digits, in the same
// folder (a vim swap file ".allow_tool.swp" does not match).
func removeStaleTemps(path string) {
	dir, base := filepath.Dir(path), "."+filepath.Base(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), base)
		if ok && rest != "" && strings.Trim(rest, "0123456789") == "" && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
