//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package permissions

import "github.com/gofrs/flock"

// On other systems (Windows) the audit log locks through gofrs/flock, which opens the lock file
// for each lock.
type gofrsLock struct{ *flock.Flock }

func newAuditLock(path string) (auditLock, error) {
	return gofrsLock{flock.New(path, flock.SetPermissions(0o600))}, nil
}
