package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// maxFileSize bounds a policy file; a bigger one is broken, not half read.
const maxFileSize = 1 << 20

// fileInfo is what check shows about a source it read.
type fileInfo struct {
	Owner    int
	OwnerSID string // Windows
	Mode     fs.FileMode
	Digest   string // sha256 of the content, hex
}

// readTrusted reads a policy file after checking that nobody but root (on Windows: SYSTEM,
// Administrators, TrustedInstaller) could have written it or anything on its way: every
// directory from the root down to it, both on the path as named and on the path it resolves to
// through symlinks (and junctions), and the file itself, which must be a regular file. A missing file is not an error (exists false). Anything else that stops the read is.
func readTrusted(path string) (data []byte, info fileInfo, exists bool, err error) {
	if _, err := os.Lstat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, info, false, nil
		}
		return nil, info, true, &FileError{File: path, Msg: "cannot read: " + err.Error()}
	}
	fail := func(format string, args ...any) ([]byte, fileInfo, bool, error) {
		return nil, info, true, &FileError{File: path, Msg: fmt.Sprintf(format, args...)}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fail("cannot read: %v", err)
	}
	real, err := resolvePath(abs)
	if err != nil {
		return fail("cannot resolve: %v", err)
	}
	for _, p := range []string{filepath.Dir(abs), filepath.Dir(real)} {
		if err := trustedDirs(p); err != nil {
			return fail("not trusted: %v", err)
		}
	}
	if linksHaveOwnACL && real != abs {
		// The file as named may be a link whose own access list lets someone point it
		// elsewhere.
		if err := trustedInfo(abs, nil, roleFile); err != nil {
			return fail("not trusted: %v", err)
		}
	}
	f, err := os.OpenFile(real, openFlags, 0)
	if err != nil {
		return fail("cannot read: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fail("cannot read: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return fail("not a regular file (%s)", fi.Mode().Type())
	}
	if err := trustedInfo(real, fi, roleFile); err != nil {
		return fail("not trusted: %v", err)
	}
	data, err = io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return fail("cannot read: %v", err)
	}
	if len(data) > maxFileSize {
		return fail("larger than %d bytes", maxFileSize)
	}
	sum := sha256.Sum256(data)
	info.Owner, _ = owner(fi)
	info.OwnerSID = ownerSID(real)
	info.Mode = fi.Mode()
	info.Digest = hex.EncodeToString(sum[:])
	return data, info, true, nil
}

// trustedDirs checks dir, the folder holding policy files, and each folder above it (Lstat: a
// symlinked folder on the way is checked as the link's own folder and again where it leads, by
// the caller's resolved path; on Windows the link itself is checked too).
func trustedDirs(dir string) error {
	role := roleHolder
	for {
		fi, err := os.Lstat(dir)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink == 0 || linksHaveOwnACL {
			if err := trustedInfo(dir, fi, role); err != nil {
				return err
			}
		}
		role = roleAncestor
		up := filepath.Dir(dir)
		if up == dir {
			return nil
		}
		dir = up
	}
}

// dropIns lists the *.json files of a managed-settings.d directory in name order, skipping
// hidden files (editor backups) and other names. A missing directory has none; a directory
// that cannot be read or trusted is an error.
func dropIns(dir string) ([]string, error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err == nil {
		real, rerr := resolvePath(dir)
		switch {
		case rerr != nil:
			err = rerr
		default:
			if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
				err = errors.New("not a directory")
			}
			if err == nil {
				err = trustedDirs(real)
			}
		}
	}
	if err != nil {
		return nil, &FileError{File: dir, Msg: "not trusted: " + err.Error()}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &FileError{File: dir, Msg: "cannot read: " + err.Error()}
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	slices.Sort(out)
	return out, nil
}
