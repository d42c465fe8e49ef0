//go:build !windows

package host

import (
	"io/fs"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// writeFileAtomic: temp file in the same folder, write, fsync, rename (tasks.json, task results).
// Without WithTempDir, renameio probes at every write whether $TMPDIR can hold the temp file, by
// creating and removing a name beside the file; each removed name stays in the kernel's cache of
// the folder, and the state folder's watch (tasksWatch) starts with a walk over every name cached
// for it, at each host's start.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return renameio.WriteFile(path, data, perm, renameio.WithTempDir(filepath.Dir(path)))
}
