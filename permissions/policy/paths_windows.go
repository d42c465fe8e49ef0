//go:build windows

package policy

import "golang.org/x/sys/windows"

// programFiles is the Program Files folder as the system knows it (the known folder, which the
// registry's HKLM keeps), never %ProgramFiles%: the user sets their own environment, and one that
// names a folder without a Switchboard policy in it would make the policy disappear.
func programFiles() string {
	if p, err := windows.KnownFolderPath(windows.FOLDERID_ProgramFiles, 0); err == nil && p != "" {
		return p
	}
	return `C:\Program Files`
}
