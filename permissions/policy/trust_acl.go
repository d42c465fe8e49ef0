package policy

import (
	"fmt"
	"strings"
)

// This file holds the Windows trust decision as a pure function of an object's owner and DACL,
// so that it compiles, and is tested, on every system. trust_windows.go reads the security
// descriptors and calls it.

// A trustRole says what a checked path is to the policy file: the rights that let someone
// change the policy differ for each.
type trustRole int

const (
	roleFile     trustRole = iota // the policy file itself
	roleHolder                    // the folder that holds policy files (adding one matters)
	roleAncestor                  // a folder above the holder
)

// Security identifiers that may own or write policy on Windows.
const (
	sidSystem         = "S-1-5-18"
	sidAdministrators = "S-1-5-32-544"
	sidTrustedInstall = "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464"
	sidCreatorOwner   = "S-1-3-0"
)

// winAdmins are the only owners and writers a policy path may have: what nobody but an
// administrator (or Windows itself) can act as.
var winAdmins = map[string]bool{sidSystem: true, sidAdministrators: true, sidTrustedInstall: true}

// Access mask bits and ACE values from winnt.h, spelt out so that this file needs no
// golang.org/x/sys/windows.
const (
	accFileWriteData   = 0x00000002 // FILE_WRITE_DATA; FILE_ADD_FILE on a folder
	accFileAppendData  = 0x00000004 // FILE_APPEND_DATA; FILE_ADD_SUBDIRECTORY on a folder
	accFileWriteEA     = 0x00000010 // FILE_WRITE_EA
	accFileDeleteChild = 0x00000040 // FILE_DELETE_CHILD (folders)
	accFileWriteAttrs  = 0x00000100 // FILE_WRITE_ATTRIBUTES
	accDelete          = 0x00010000 // DELETE
	accWriteDAC        = 0x00040000 // WRITE_DAC
	accWriteOwner      = 0x00080000 // WRITE_OWNER
	accMaximumAllowed  = 0x02000000 // MAXIMUM_ALLOWED
	accGenericAll      = 0x10000000 // GENERIC_ALL
	accGenericWrite    = 0x40000000 // GENERIC_WRITE

	aceAccessAllowed         = 0x0 // ACCESS_ALLOWED_ACE_TYPE
	aceAccessDenied          = 0x1 // ACCESS_DENIED_ACE_TYPE
	aceAccessAllowedObject   = 0x5 // ACCESS_ALLOWED_OBJECT_ACE_TYPE
	aceAccessDeniedObject    = 0x6 // ACCESS_DENIED_OBJECT_ACE_TYPE
	aceAccessAllowedCallback = 0x9 // ACCESS_ALLOWED_CALLBACK_ACE_TYPE
	aceAccessDeniedCallback  = 0xA // ACCESS_DENIED_CALLBACK_ACE_TYPE
	aceAccessAllowedCbObject = 0xB // ACCESS_ALLOWED_CALLBACK_OBJECT_ACE_TYPE
	aceAccessDeniedCbObject  = 0xC // ACCESS_DENIED_CALLBACK_OBJECT_ACE_TYPE
	aceSystemMandatoryLabel  = 0x11

	aceInheritOnly = 0x08 // INHERIT_ONLY_ACE
)

// winACE is one access control entry of a DACL, reduced to what the decision needs.
type winACE struct {
	Type  uint8
	Flags uint8
	Mask  uint32
	SID   string // string form, S-1-...
}

// winObject is one file, folder or reparse point as its security descriptor describes it.
type winObject struct {
	Path  string
	Role  trustRole
	Link  bool   // a reparse point (symbolic link, junction): its own descriptor, not its target's
	Owner string // string SID
	// NoDACL is a NULL (or absent) DACL: everyone has every right.
	NoDACL bool
	ACEs   []winACE
}

// writeRights are the rights on an object of role r (and link-ness) that let their holder
// change what the policy says: its content, its name, its permissions or owner, or (for a
// holder folder) which files are in it. On folders above the holder, adding new names is
// harmless (like /tmp's sticky bit on Unix): it cannot replace an existing folder on the way,
// and the C:\ root lets every user create folders. Removing or renaming a child is not.
func writeRights(r trustRole, link bool) uint32 {
	m := uint32(accDelete | accWriteDAC | accWriteOwner | accGenericAll | accGenericWrite | accMaximumAllowed)
	switch r {
	case roleFile:
		m |= accFileWriteData | accFileAppendData
	case roleHolder:
		m |= accFileWriteData | accFileAppendData | accFileDeleteChild
	case roleAncestor:
		m |= accFileDeleteChild
	}
	if link {
		// Rewriting a reparse point's target in place takes write-data or write-attributes
		// on the link itself.
		m |= accFileWriteData | accFileWriteAttrs | accFileWriteEA
	}
	return m
}

// winTrusted says why o cannot hold (or lead to) policy, or nil. Its owner must be SYSTEM,
// Administrators or TrustedInstaller, and its DACL must grant no write right of writeRights
// to anyone else.
//
// Inherit-only entries are skipped: they grant nothing on the object itself, only on
// children created later, and each child on the way is checked with the entries it has.
// (CREATOR OWNER with full control, and C:\'s Authenticated Users "modify" for new folders,
// are such entries on every Windows installation.)
//
// Deny entries are not counted in the user's favour: whether a deny stops a given person
// depends on entry order and on group memberships that cannot be known from the file (a deny
// for Users does not stop a person who is also in a group with an allow), so a write right
// granted to anyone but the administrators is untrusted whatever denies surround it. An
// administrator who wants to shut writers out removes their allow entries.
//
// An entry of a type this code does not know is untrusted: it cannot tell what it grants.
func winTrusted(o winObject) error {
	if !winAdmins[o.Owner] {
		return fmt.Errorf("%s is owned by %s, not SYSTEM, Administrators or TrustedInstaller: a policy the user can change is no policy", o.Path, sidName(o.Owner))
	}
	if o.NoDACL {
		return fmt.Errorf("%s has no access list (everyone may change it): a policy the user can change is no policy", o.Path)
	}
	bad := writeRights(o.Role, o.Link)
	for _, a := range o.ACEs {
		switch a.Type {
		case aceAccessDenied, aceAccessDeniedObject, aceAccessDeniedCallback, aceAccessDeniedCbObject, aceSystemMandatoryLabel:
			continue
		case aceAccessAllowed, aceAccessAllowedObject, aceAccessAllowedCallback, aceAccessAllowedCbObject:
		default:
			return fmt.Errorf("%s has an access entry of unknown type %#x: a policy the user can change is no policy", o.Path, a.Type)
		}
		if a.Flags&aceInheritOnly != 0 || winAdmins[a.SID] {
			continue
		}
		if m := a.Mask & bad; m != 0 {
			return fmt.Errorf("%s lets %s change it (%s): a policy the user can change is no policy", o.Path, sidName(a.SID), rightNames(m, o.Role))
		}
	}
	return nil
}

// wellKnownSIDs name the SIDs an error is likely to show.
var wellKnownSIDs = map[string]string{
	"S-1-1-0":         "Everyone",
	"S-1-3-0":         "CREATOR OWNER",
	"S-1-5-4":         "INTERACTIVE",
	"S-1-5-11":        "Authenticated Users",
	"S-1-5-32-545":    "Users",
	"S-1-5-32-547":    "Power Users",
	"S-1-15-2-1":      "ALL APPLICATION PACKAGES",
	sidSystem:         "SYSTEM",
	sidAdministrators: "Administrators",
	sidTrustedInstall: "TrustedInstaller",
}

func sidName(sid string) string {
	if sid == "" {
		return "an account it cannot read"
	}
	if n, ok := wellKnownSIDs[sid]; ok {
		return n + " (" + sid + ")"
	}
	return sid
}

// rightNames spells m as winnt.h names, with the folder names for folders.
func rightNames(m uint32, r trustRole) string {
	type bit struct {
		v          uint32
		file, fold string
	}
	bits := []bit{
		{accFileWriteData, "FILE_WRITE_DATA", "FILE_ADD_FILE"},
		{accFileAppendData, "FILE_APPEND_DATA", "FILE_ADD_SUBDIRECTORY"},
		{accFileWriteEA, "FILE_WRITE_EA", "FILE_WRITE_EA"},
		{accFileDeleteChild, "FILE_DELETE_CHILD", "FILE_DELETE_CHILD"},
		{accFileWriteAttrs, "FILE_WRITE_ATTRIBUTES", "FILE_WRITE_ATTRIBUTES"},
		{accDelete, "DELETE", "DELETE"},
		{accWriteDAC, "WRITE_DAC", "WRITE_DAC"},
		{accWriteOwner, "WRITE_OWNER", "WRITE_OWNER"},
		{accMaximumAllowed, "MAXIMUM_ALLOWED", "MAXIMUM_ALLOWED"},
		{accGenericAll, "GENERIC_ALL", "GENERIC_ALL"},
		{accGenericWrite, "GENERIC_WRITE", "GENERIC_WRITE"},
	}
	var out []string
	for _, b := range bits {
		if m&b.v != 0 {
			if r == roleFile {
				out = append(out, b.file)
			} else {
				out = append(out, b.fold)
			}
		}
	}
	return strings.Join(out, "|")
}
