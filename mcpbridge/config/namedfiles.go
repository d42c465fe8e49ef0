package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// CheckNamedConfigFiles checks config files the user named explicitly (--config FILE, the
// editor's configFiles setting). Unlike the default locations, which may well not exist, each must
// exist and be a readable file: a typo must not silently mean "no servers". It returns one error
// per file that is not, naming it (quoted: the name may come from a workspace's settings).
func CheckNamedConfigFiles(paths []string) []error {
	var errs []error
	for _, p := range paths {
		f, err := os.Open(p)
		if err == nil {
			var st os.FileInfo
			if st, err = f.Stat(); err == nil && st.IsDir() {
				err = errors.New("is a directory")
			}
			f.Close() // ignore error: opened for reading only
		}
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("config file %q does not exist", p))
		case errors.Is(err, fs.ErrPermission):
			errs = append(errs, fmt.Errorf("config file %q cannot be read: permission denied", p))
		default:
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			errs = append(errs, fmt.Errorf("config file %q cannot be read: %v", p, err))
		}
	}
	return errs
}
