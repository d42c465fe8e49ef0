//go:build windows

package tokenstore

import (
	"io/fs"

	"github.com/google/renameio/v2/maybe"
)

// writeFileAtomic on Windows is a plain write (renameio exports nothing there).
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return maybe.WriteFile(path, data, perm)
}
