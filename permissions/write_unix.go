//go:build !windows

package permissions

import (
	"io/fs"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// writeFileAtomic: temp file in the same folder, write, fsync, chmod to perm (no umask), rename.
// renameio.WriteFile alone would put the temp file in $TMPDIR when that is on the same file
// system, where a crashed writer's leftovers could not be found and cleaned.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return renameio.WriteFile(path, data, perm,
		renameio.WithTempDir(filepath.Dir(path)), renameio.WithStaticPermissions(perm))
}
