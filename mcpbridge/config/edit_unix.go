//go:build !windows

package config

import (
	"io/fs"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// writeFileAtomic: temp file in the same folder, write, fsync, chmod to perm, rename.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return renameio.WriteFile(path, data, perm,
		renameio.WithTempDir(filepath.Dir(path)), renameio.WithStaticPermissions(perm))
}
