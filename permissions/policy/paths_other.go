//go:build !windows

package policy

// programFiles is only asked on Windows.
func programFiles() string { return `C:\Program Files` }
