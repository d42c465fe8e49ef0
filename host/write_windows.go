//go:build windows

package host

import (
	"io/fs"

	"github.com/google/renameio/v2/maybe"
)

// writeFileAtomic on Windows is a plain write (renameio exports nothing there; maybe.WriteFile is
// os.WriteFile). Writers of tasks.json are still serialised by its lock file.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return maybe.WriteFile(path, data, perm)
}
