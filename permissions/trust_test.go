package permissions

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestTrustStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "trust.json")
	ts, err := OpenTrustStore(path)
	if err != nil || ts.Err() != nil {
		t.Fatalf("OpenTrustStore on a missing file: %v, %v", err, ts.Err())
	}
	ts.now = func() time.Time { return time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC) }
	if got := ts.Get("fs", "fp1"); got != TrustUnknown {
		t.Errorf("Get on empty store = %v", got)
	}
	if err := ts.Set("fs", "fp1", true); err != nil {
		t.Fatal(err)
	}
	if err := ts.Set("shell", "fp2", false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		server, fp string
		want       Trust
	}{
		{"fs", "fp1", Trusted},
		{"shell", "fp2", Denied},
		{"fs", "fp-changed", TrustUnknown}, // a changed config asks again
		{"fs", "", TrustUnknown},
	} {
		if got := ts.Get(tc.server, tc.fp); got != tc.want {
			t.Errorf("Get(%q, %q) = %v, want %v", tc.server, tc.fp, got, tc.want)
		}
	}
	// Another process (a second store on the same file) sees the decisions and adds its own.
	other, _ := OpenTrustStore(path)
	if other.Get("fs", "fp1") != Trusted {
		t.Error("second store does not see the first's decision")
	}
	if err := other.Set("fs", "fp3", true); err != nil {
		t.Fatal(err)
	}
	if ts.Get("fs", "fp3") != Trusted || ts.Get("shell", "fp2") != Denied {
		t.Error("decisions lost across stores")
	}
	want := `"fp1": {
      "server": "fs",
      "trusted": true,
      "at": "2026-11-30T09:00:00Z"
    }`
	if data := readFile(t, path); !strings.Contains(data, want) {
		t.Errorf("file:\n%s\nwant it to contain:\n%s", data, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if err := ts.Set("fs", "", true); err == nil {
		t.Error("Set with an empty fingerprint succeeded")
	}
}

func TestTrustStoreMalformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trust.json")
	const content = "{\n  \"fingerprints\": {\n    \"fp1\": {\"server\": \"fs\", \"trusted\": true,}\n  }\n}\n"
	writeFile(t, path, content)
	ts, err := OpenTrustStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Err() == nil || !strings.HasPrefix(ts.Err().Error(), path+":3:") {
		t.Errorf("Err() = %v, want %s:3: ...", ts.Err(), path)
	}
	if got := ts.Get("fs", "fp1"); got != TrustUnknown {
		t.Errorf("malformed store answered %v", got)
	}
	if err := ts.Set("fs", "fp2", true); err == nil || !strings.Contains(err.Error(), path+":3:") {
		t.Errorf("Set on malformed file: %v", err)
	}
	if got := readFile(t, path); got != content {
		t.Errorf("malformed trust file overwritten:\n%s", got)
	}
}

// age sets path's modification time to d ago (a file written a while before it is read).
func age(t *testing.T, path string, d time.Duration) time.Time {
	t.Helper()
	at := time.Now().Add(-d)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
	return at
}

// A grant is looked up on every call of a workspace-defined server: an unchanged trust file is
// parsed once, not per call.
func TestTrustStoreParsesOnlyChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trust.json")
	ts, _ := OpenTrustStore(path)
	if err := ts.AddGrant("ws", "fp1", "mcp__ws__query"); err != nil {
		t.Fatal(err)
	}
	age(t, path, time.Hour)
	before := ts.parses
	for range 100 {
		if !ts.Granted("fp1", "mcp__ws__query") || ts.Get("ws", "fp1") != TrustUnknown {
			t.Fatal("lost the grant")
		}
	}
	if n := ts.parses - before; n != 1 {
		t.Errorf("200 looks at an unchanged file parsed it %d times, want 1", n)
	}
}

// What a revocation by another process (a second editor window, the user editing the file) must
// never do: leave a grant standing because the store kept an old parse.
func TestTrustStoreSeesEveryChange(t *testing.T) {
	const entry = "mcp__ws__query"
	setup := func(t *testing.T) (string, *TrustStore) {
		path := filepath.Join(t.TempDir(), "trust.json")
		ts, _ := OpenTrustStore(path)
		if err := ts.AddGrant("ws", "fp1", entry); err != nil {
			t.Fatal(err)
		}
		return path, ts
	}
	// revoked rewrites the file in place (no rename: same inode) with the grant gone and the size
	// kept, the way an editor that overwrites files would.
	revoked := func(t *testing.T, path string) {
		t.Helper()
		data := readFile(t, path)
		gone := strings.Replace(data, entry, strings.Repeat("x", len(entry)), 1)
		if len(gone) != len(data) || gone == data {
			t.Fatal("test setup: the rewrite must keep the size and change the grant")
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte(gone), 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}

	t.Run("another store revokes (atomic rename)", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("no inode in Windows' FileInfo: size and time decide there")
		}
		path, ts := setup(t)
		at := age(t, path, time.Hour)
		if !ts.Granted("fp1", entry) {
			t.Fatal("grant not seen")
		}
		other, _ := OpenTrustStore(path)
		size := len(readFile(t, path))
		if err := other.modify(func(f *trustFile) bool {
			f.Grants["fp1"] = grantRecord{Server: "ws", Entries: []string{strings.Repeat("x", len(entry))}}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		// The same size and time as the file read: only the inode tells the new file apart.
		if len(readFile(t, path)) != size {
			t.Fatal("test setup: the rewrite must keep the size")
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
		if ts.Granted("fp1", entry) {
			t.Error("a grant revoked by another store still counts")
		}
	})
	t.Run("rewritten in place, same size", func(t *testing.T) {
		path, ts := setup(t)
		age(t, path, time.Hour)
		if !ts.Granted("fp1", entry) {
			t.Fatal("grant not seen")
		}
		revoked(t, path) // a fresh modification time
		if ts.Granted("fp1", entry) {
			t.Error("a grant removed in place still counts")
		}
	})
	t.Run("rewritten in place within the timestamp's granularity", func(t *testing.T) {
		// A file system with coarse timestamps can give the rewrite the time the file had when it
		// was read: size, time and inode all as before. The store must not have kept that read.
		path, ts := setup(t)
		at := age(t, path, racyWindow/4)
		if !ts.Granted("fp1", entry) {
			t.Fatal("grant not seen")
		}
		revoked(t, path)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
		if ts.Granted("fp1", entry) {
			t.Error("a grant removed within the racy window still counts")
		}
	})
	t.Run("broken after a good read", func(t *testing.T) {
		path, ts := setup(t)
		age(t, path, time.Hour)
		if !ts.Granted("fp1", entry) {
			t.Fatal("grant not seen")
		}
		writeFile(t, path, "{not json")
		age(t, path, time.Hour)
		if ts.Granted("fp1", entry) {
			t.Error("a malformed file still grants")
		}
		if ts.Err() == nil || !strings.HasPrefix(ts.Err().Error(), path+":") {
			t.Errorf("Err() = %v, want the file and line", ts.Err())
		}
		if got := readFile(t, path); got != "{not json" {
			t.Errorf("malformed file overwritten: %q", got)
		}
	})
	t.Run("deleted", func(t *testing.T) {
		path, ts := setup(t)
		age(t, path, time.Hour)
		if !ts.Granted("fp1", entry) {
			t.Fatal("grant not seen")
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if ts.Granted("fp1", entry) {
			t.Error("a deleted file still grants")
		}
	})
}
