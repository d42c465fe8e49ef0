//go:build windows

package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

const openFlags = os.O_RDONLY

// linksHaveOwnACL: a reparse point on the way is checked as an object of its own too (who may
// rewrite where it leads), besides the path it resolves to.
const linksHaveOwnACL = true

// owner: Windows owners are SIDs, not uids; check shows -1.
func owner(fs.FileInfo) (int, bool) { return -1, false }

// ownerSID is path's owner, for check ("" when it cannot be read: trustedInfo said why).
func ownerSID(path string) string {
	o, _ := winSecurity(path, roleFile) // ignore error: trustedInfo reported it
	return o.Owner
}

// trustedInfo says why path cannot hold (or lead to) policy, or nil: see winTrusted. It reads
// the security descriptor of path itself, a reparse point's own rather than its target's.
func trustedInfo(path string, _ fs.FileInfo, r trustRole) error {
	o, err := winSecurity(path, r)
	if err != nil {
		return fmt.Errorf("%s: cannot read its owner and access list: %v", path, err)
	}
	return winTrusted(o)
}

func winSecurity(path string, r trustRole) (winObject, error) {
	o := winObject{Path: path, Role: r}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return o, err
	}
	h, err := windows.CreateFile(p, windows.READ_CONTROL|windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return o, err
	}
	defer windows.CloseHandle(h)
	var bi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &bi); err != nil {
		return o, err
	}
	o.Link = bi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return o, err
	}
	if sid, _, err := sd.Owner(); err == nil && sid != nil {
		o.Owner = sid.String()
	}
	dacl, _, err := sd.DACL()
	switch {
	case errors.Is(err, windows.ERROR_OBJECT_NOT_FOUND):
		o.NoDACL = true
		return o, nil
	case err != nil:
		return o, err
	case dacl == nil:
		o.NoDACL = true
		return o, nil
	}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return o, err
		}
		a := winACE{Type: ace.Header.AceType, Flags: ace.Header.AceFlags, Mask: uint32(ace.Mask)}
		switch a.Type {
		case aceAccessAllowed, aceAccessDenied, aceAccessAllowedCallback, aceAccessDeniedCallback:
			// Header, mask, then the SID: the layout of ACCESS_ALLOWED_ACE.
			a.SID = (*windows.SID)(unsafe.Pointer(&ace.SidStart)).String()
		case aceAccessAllowedObject, aceAccessAllowedCbObject:
			// Object entries carry GUIDs before the SID; they belong to directory objects, not
			// files. Left without a SID they count as granted to someone unknown.
		}
		o.ACEs = append(o.ACEs, a)
	}
	return o, nil
}

// GetFinalPathNameByHandle flags (winbase.h; not in x/sys/windows).
const (
	fileNameNormalized = 0x0
	volumeNameDOS      = 0x0
)

// resolvePath is path with every reparse point on it resolved, symbolic links and junctions
// alike (filepath.EvalSymlinks leaves junctions since Go 1.23): the path Windows itself opens.
func resolvePath(path string) (string, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return "", err
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), fileNameNormalized|volumeNameDOS)
	if err != nil {
		return "", err
	}
	if int(n) > len(buf) {
		return "", fmt.Errorf("resolved path of %s is too long", path)
	}
	s := windows.UTF16ToString(buf[:n])
	switch {
	case strings.HasPrefix(s, `\\?\UNC\`):
		s = `\\` + s[len(`\\?\UNC\`):]
	case strings.HasPrefix(s, `\\?\`):
		s = s[len(`\\?\`):]
	}
	return s, nil
}
