//go:build windows

package config

import (
	"io/fs"

	"github.com/google/renameio/v2/maybe"
)

// writeFileAtomic on Windows is a plain write (renameio exports nothing there); writers are
// still serialised by the lock file.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return maybe.WriteFile(path, data, perm)
}
