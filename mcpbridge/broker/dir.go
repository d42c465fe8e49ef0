package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// Major is the broker protocol's major version. It names the socket (d1.sock), so daemons of
// two majors never meet: each keeps its own windows and neither is killed (mcphub.nvim #220).
// Minor differences are negotiated in the hello.
const (
	Major = 1
	Minor = 0
)

// Paths are the files of one daemon generation in its directory.
type Paths struct {
	Dir  string
	Sock string // the listening socket
	Lock string // flock taken to start the daemon and to retire its socket
	Info string // pid, start time, build: for `daemon status` and sweeping
}

// PathsIn returns the paths of the daemon of protocol Major in dir.
func PathsIn(dir string) Paths {
	base := filepath.Join(dir, "d"+strconv.Itoa(Major))
	return Paths{Dir: dir, Sock: base + ".sock", Lock: base + ".lock", Info: base + ".json"}
}

// DefaultDir returns the socket directory, created 0700 if missing and checked:
//
//   - Linux and other Unix: $XDG_RUNTIME_DIR/switchboard; XDG_RUNTIME_DIR itself must be an
//     absolute directory of ours that no one else can enter. When it is unset (containers, no
//     logind): /tmp/switchboard-<uid>.
//   - macOS: $TMPDIR/switchboard (TMPDIR is per user there), else /tmp/switchboard-<uid>.
//
// A runtime directory that is set but fails the check is an error, not a reason to fall back:
// the caller then runs its shared servers in the window (never fail open).
func DefaultDir() (string, error) {
	env := "XDG_RUNTIME_DIR"
	switch runtime.GOOS {
	case "darwin":
		env = "TMPDIR"
	case "windows":
		// TODO(broker): a named pipe whose DACL grants only the user (design §4.1, phase 2).
		return "", errors.New("broker: shared servers are not available on Windows yet")
	}
	return dirFrom(env, os.Getenv(env), os.Geteuid())
}

func dirFrom(envName, base string, uid int) (string, error) {
	var dir string
	if base == "" {
		dir = filepath.Join("/tmp", "switchboard-"+strconv.Itoa(uid))
	} else {
		if !filepath.IsAbs(base) {
			return "", fmt.Errorf("broker: %s %q is not an absolute path", envName, base)
		}
		if err := checkPrivateDir(base, uid); err != nil {
			return "", fmt.Errorf("broker: %s: %w", envName, err)
		}
		dir = filepath.Join(base, "switchboard")
	}
	if err := EnsureDir(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// EnsureDir creates dir (0700) if it is missing and checks it: a directory, not a symlink, owned
// by this user, with no permission for group or others. A directory that fails is refused, not
// repaired: at the /tmp fallback it may be another user's plant.
func EnsureDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("broker: create socket directory: %w", err)
	}
	if err := checkPrivateDir(dir, os.Geteuid()); err != nil {
		return fmt.Errorf("broker: socket directory: %w", err)
	}
	return nil
}

// checkPrivateDir checks dir with lstat: a real directory owned by uid, mode & 077 == 0 (what
// the XDG base directory spec requires of the runtime directory, and what chg checks).
func checkPrivateDir(dir string, uid int) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	owner, ok := fileOwner(fi)
	if !ok {
		return fmt.Errorf("%s: owner unknown", dir)
	}
	if owner != uid {
		return fmt.Errorf("%s belongs to uid %d, not %d", dir, owner, uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o: others may enter it (want 0700)", dir, fi.Mode().Perm())
	}
	return nil
}
