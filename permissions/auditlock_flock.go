//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package permissions

import (
	"os"
	"syscall"
)

// heldLock is a flock(2) on a lock file kept open for the audit log's life: a batch costs the
// lock and unlock calls only, not an open and close of the file around them as well.
type heldLock struct {
	f  *os.File
	fd int
}

func newAuditLock(path string) (auditLock, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &heldLock{f: f, fd: int(f.Fd())}, nil
}

func (l *heldLock) flock(how int) error {
	for {
		if err := syscall.Flock(l.fd, how); err != syscall.EINTR {
			return err
		}
	}
}

func (l *heldLock) Lock() error   { return l.flock(syscall.LOCK_EX) }
func (l *heldLock) Unlock() error { return l.flock(syscall.LOCK_UN) }
func (l *heldLock) Close() error  { return l.f.Close() }
