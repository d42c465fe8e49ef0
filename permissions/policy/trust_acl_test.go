package policy

import (
	"strings"
	"testing"
)

// TestWinTrusted is the Windows decision on owners and access lists, as an attacker would try
// to slip a user-writable policy past it. It runs on every system: the decision is pure.
func TestWinTrusted(t *testing.T) {
	const (
		user      = "S-1-5-21-1004336348-1177238915-682003330-1001"
		users     = "S-1-5-32-545"
		authUsers = "S-1-5-11"
		everyone  = "S-1-1-0"
		full      = 0x001F01FF // FILE_ALL_ACCESS
		readExec  = 0x001200A9 // FILE_GENERIC_READ | FILE_GENERIC_EXECUTE
		modify    = 0x001301BF // "Modify" in the Explorer dialog
		oici      = 0x01 | 0x02
		io        = aceInheritOnly
	)
	allow := func(sid string, mask uint32) winACE {
		return winACE{Type: aceAccessAllowed, Mask: mask, SID: sid}
	}
	// What C:\Program Files has on a fresh installation (icacls).
	programFiles := []winACE{
		allow(sidTrustedInstall, full),
		{Type: aceAccessAllowed, Flags: 0x02 | io, Mask: accGenericAll, SID: sidTrustedInstall},
		allow(sidSystem, modify),
		{Type: aceAccessAllowed, Flags: oici | io, Mask: accGenericAll, SID: sidSystem},
		allow(sidAdministrators, modify),
		{Type: aceAccessAllowed, Flags: oici | io, Mask: accGenericAll, SID: sidAdministrators},
		allow(users, readExec),
		{Type: aceAccessAllowed, Flags: oici | io, Mask: 0xA0000000, SID: users},
		{Type: aceAccessAllowed, Flags: oici | io, Mask: accGenericAll, SID: sidCreatorOwner},
		allow("S-1-15-2-1", readExec),
	}
	// What C:\ has: users may create folders in it, and own what they create.
	driveRoot := []winACE{
		allow(sidAdministrators, full),
		allow(sidSystem, full),
		allow(users, readExec),
		{Type: aceAccessAllowed, Flags: oici | io, Mask: modify, SID: authUsers},
		allow(authUsers, accFileAppendData),
	}
	tests := []struct {
		name string
		o    winObject
		want string // "" trusted, else a part of the error
	}{
		{"admins full control", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{allow(sidAdministrators, full), allow(sidSystem, full), allow(users, readExec)}}, ""},
		{"program files folder", winObject{Role: roleAncestor, Owner: sidTrustedInstall, ACEs: programFiles}, ""},
		{"program files as holder", winObject{Role: roleHolder, Owner: sidTrustedInstall, ACEs: programFiles}, ""},
		{"inherit-only creator owner", winObject{Role: roleHolder, Owner: sidSystem, ACEs: []winACE{{Type: aceAccessAllowed, Flags: oici | io, Mask: accGenericAll, SID: sidCreatorOwner}}}, ""},
		{"drive root above", winObject{Role: roleAncestor, Owner: sidTrustedInstall, ACEs: driveRoot}, ""},
		{"drive root holds the file", winObject{Role: roleHolder, Owner: sidTrustedInstall, ACEs: driveRoot}, "Authenticated Users (S-1-5-11) change it (FILE_ADD_SUBDIRECTORY)"},
		{"owner user", winObject{Role: roleFile, Owner: user, ACEs: []winACE{allow(sidAdministrators, full)}}, "owned by " + user + ", not SYSTEM"},
		{"no owner", winObject{Role: roleFile, ACEs: []winACE{allow(sidAdministrators, full)}}, "owned by an account it cannot read"},
		{"null dacl", winObject{Role: roleFile, Owner: sidSystem, NoDACL: true}, "no access list"},
		{"users write data", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{allow(sidAdministrators, full), allow(users, readExec|accFileWriteData)}}, "lets Users (S-1-5-32-545) change it (FILE_WRITE_DATA)"},
		{"users append", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{allow(users, accFileAppendData)}}, "(FILE_APPEND_DATA)"},
		{"authenticated users generic all", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{allow(authUsers, accGenericAll)}}, "Authenticated Users (S-1-5-11) change it (GENERIC_ALL)"},
		{"everyone generic write on folder", winObject{Role: roleAncestor, Owner: sidSystem, ACEs: []winACE{allow(everyone, accGenericWrite)}}, "Everyone (S-1-1-0) change it (GENERIC_WRITE)"},
		{"user may delete the file", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{allow(user, readExec|accDelete)}}, "(DELETE)"},
		{"user may rewrite the acl", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{allow(user, accWriteDAC)}}, "(WRITE_DAC)"},
		{"user may take ownership", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{allow(user, accWriteOwner)}}, "(WRITE_OWNER)"},
		{"users add drop-ins", winObject{Role: roleHolder, Owner: sidAdministrators, ACEs: []winACE{allow(users, accFileWriteData)}}, "(FILE_ADD_FILE)"},
		{"users delete children above", winObject{Role: roleAncestor, Owner: sidAdministrators, ACEs: []winACE{allow(users, accFileDeleteChild)}}, "(FILE_DELETE_CHILD)"},
		{"users rename a folder above", winObject{Role: roleAncestor, Owner: sidAdministrators, ACEs: []winACE{allow(users, accDelete)}}, "(DELETE)"},
		{"users add folders above", winObject{Role: roleAncestor, Owner: sidAdministrators, ACEs: []winACE{allow(users, accFileAppendData|accFileWriteData)}}, ""},
		{"write attributes on a file", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{allow(users, accFileWriteAttrs)}}, ""},
		{"write attributes on a link", winObject{Role: roleAncestor, Link: true, Owner: sidAdministrators, ACEs: []winACE{allow(users, accFileWriteAttrs)}}, "(FILE_WRITE_ATTRIBUTES)"},
		{"inherit-only user modify", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{{Type: aceAccessAllowed, Flags: oici | io, Mask: modify, SID: user}}}, ""},
		// A deny does not save an allow: the person may be in another group the deny misses.
		{"deny before allow", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{{Type: aceAccessDenied, Mask: accFileWriteData, SID: user}, allow(users, accFileWriteData)}}, "lets Users"},
		{"deny alone", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{{Type: aceAccessDenied, Mask: full, SID: everyone}}}, ""},
		{"callback allow", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{{Type: aceAccessAllowedCallback, Mask: accFileWriteData, SID: users}}}, "lets Users"},
		{"object allow without sid", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{{Type: aceAccessAllowedObject, Mask: accGenericAll}}}, "lets an account it cannot read"},
		{"unknown entry type", winObject{Role: roleFile, Owner: sidAdministrators, ACEs: []winACE{{Type: 0x7F, Mask: 0, SID: users}}}, "unknown type 0x7f"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Path = `C:\Program Files\Switchboard\managed-settings.json`
			err := winTrusted(tc.o)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("untrusted: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("trusted, want an error with %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			case err != nil && !strings.HasPrefix(err.Error(), tc.o.Path) || err != nil && !strings.HasSuffix(err.Error(), "a policy the user can change is no policy"):
				t.Fatalf("error %q does not say where and why like the Unix ones", err)
			}
		})
	}
}
