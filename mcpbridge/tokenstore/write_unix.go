//go:build !windows

package tokenstore

import (
	"io/fs"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// writeFileAtomic: temp file in the same folder, write, fsync, chmod to perm, rename. renameio's
// default (maybe.WriteFile) puts the temp file in $TMPDIR when that is on the same file system,
// where a writer that crashed would leave the person's tokens behind in a shared folder.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return renameio.WriteFile(path, data, perm,
		renameio.WithTempDir(filepath.Dir(path)), renameio.WithStaticPermissions(perm))
}
