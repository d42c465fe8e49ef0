package permissions

import (
	"context"
	"os"
	"path/filepath"
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

// later makes ts read as if an hour had passed since the file's last change (a change time
// cannot be set back, so the file cannot be made old).
func later(ts *TrustStore) {
	ts.wall = func() time.Time { return time.Now().Add(time.Hour) }
}

// A grant is looked up on every call of a workspace-defined server: an unchanged trust file is
// parsed once, not per call; one changed within the racy window is parsed on every look.
func TestTrustStoreParsesOnlyChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trust.json")
	ts, _ := OpenTrustStore(path)
	if err := ts.AddGrant("ws", "fp1", "mcp__ws__query"); err != nil {
		t.Fatal(err)
	}
	looks := func() int {
		t.Helper()
		before := ts.parses
		for range 100 {
			if !ts.Granted("fp1", "mcp__ws__query") || ts.Get("ws", "fp1") != TrustUnknown {
				t.Fatal("lost the grant")
			}
		}
		return ts.parses - before
	}
	if n := looks(); n != 200 {
		t.Errorf("200 looks at a file just written parsed it %d times, want 200 (racy window)", n)
	}
	later(ts)
	if n := looks(); n != 1 {
		t.Errorf("200 looks at an unchanged file parsed it %d times, want 1", n)
	}
}

// What a revocation by another process (a second editor window, the user editing or restoring
// the file) must never do: leave a grant standing because the store kept an old parse.
func TestTrustStoreSeesEveryChange(t *testing.T) {
	const entry = "mcp__ws__query"
	// setup gives a store that has parsed and kept a file granting entry; at is the file's
	// modification time.
	setup := func(t *testing.T) (path string, ts *TrustStore, at time.Time) {
		path = filepath.Join(t.TempDir(), "trust.json")
		ts, _ = OpenTrustStore(path)
		if err := ts.AddGrant("ws", "fp1", entry); err != nil {
			t.Fatal(err)
		}
		later(ts)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := stampOf(fi); !ok {
			t.Skip("no change time on this system: nothing is kept, every look reads the file")
		}
		if !ts.Granted("fp1", entry) {
			t.Fatal("grant not seen")
		}
		before := ts.parses
		if !ts.Granted("fp1", entry) || ts.parses != before {
			t.Fatal("test setup: the parse was not kept")
		}
		return path, ts, fi.ModTime()
	}
	// revokedBytes is the file with the grant replaced by one of the same length.
	revokedBytes := func(t *testing.T, path string) []byte {
		t.Helper()
		data := readFile(t, path)
		gone := strings.Replace(data, entry, strings.Repeat("x", len(entry)), 1)
		if len(gone) != len(data) || gone == data {
			t.Fatal("test setup: the rewrite must keep the size and change the grant")
		}
		return []byte(gone)
	}
	chtimes := func(t *testing.T, path string, at time.Time) {
		t.Helper()
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		revoke func(t *testing.T, path string, at time.Time)
	}{
		{"another store revokes (atomic rename), old time", func(t *testing.T, path string, at time.Time) {
			other, _ := OpenTrustStore(path)
			if err := other.modify(func(f *trustFile) bool {
				f.Grants["fp1"] = grantRecord{Server: "ws", Entries: []string{strings.Repeat("x", len(entry))}}
				return true
			}); err != nil {
				t.Fatal(err)
			}
			chtimes(t, path, at)
		}},
		{"rewritten in place, same size", func(t *testing.T, path string, at time.Time) {
			writeFile(t, path, string(revokedBytes(t, path)))
		}},
		{"rewritten in place, same size, old time (cp -p, rsync -t, touch -r)", func(t *testing.T, path string, at time.Time) {
			writeFile(t, path, string(revokedBytes(t, path)))
			chtimes(t, path, at)
		}},
		{"deleted and written again, same size, old time (tar x: the inode can come back)", func(t *testing.T, path string, at time.Time) {
			data := revokedBytes(t, path)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, string(data))
			chtimes(t, path, at)
		}},
		{"broken", func(t *testing.T, path string, at time.Time) {
			writeFile(t, path, "{not json")
		}},
		{"deleted", func(t *testing.T, path string, at time.Time) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, ts, at := setup(t)
			tc.revoke(t, path, at)
			if ts.Granted("fp1", entry) {
				t.Error("a revoked grant still counts")
			}
		})
	}
	// A broken file is reported, and left as it is.
	path, ts, _ := setup(t)
	writeFile(t, path, "{not json")
	if ts.Granted("fp1", entry) || ts.Err() == nil || !strings.HasPrefix(ts.Err().Error(), path+":") {
		t.Errorf("broken file: Err() = %v, want the file and line", ts.Err())
	}
	if got := readFile(t, path); got != "{not json" {
		t.Errorf("malformed file overwritten: %q", got)
	}
}

// LastTrusted's bytes are the caller's: changing them changes nothing the store keeps.
func TestTrustStoreLastTrustedIsACopy(t *testing.T) {
	ts, _ := OpenTrustStore(filepath.Join(t.TempDir(), "trust.json"))
	if err := ts.SetDefinition("ws", "fp1", true, []byte(`{"command":"a"}`)); err != nil {
		t.Fatal(err)
	}
	later(ts)
	want := string(ts.LastTrusted("ws"))
	if !strings.Contains(want, `"a"`) {
		t.Fatalf("LastTrusted = %s", want)
	}
	copy(ts.LastTrusted("ws"), "XXXXXXXX")
	if got := string(ts.LastTrusted("ws")); got != want {
		t.Errorf("LastTrusted after a caller wrote into its result = %s, want %s", got, want)
	}
}

// Watch tells of a decision another process wrote, and of the file breaking.
func TestTrustWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trust.json")
	mine, err := OpenTrustStore(path)
	if err != nil {
		t.Fatal(err)
	}
	changes, ready := make(chan struct{}, 8), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	since := mine.Snapshot()
	// A decision made after the caller's snapshot but before the watch is armed (another window,
	// while this one starts its servers) is reported once it is armed.
	other, err := OpenTrustStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Set("early", strings.Repeat("b", 64), false); err != nil {
		t.Fatal(err)
	}
	go func() { done <- mine.Watch(ctx, since, func() { changes <- struct{}{} }, func() { close(ready) }) }()
	<-ready
	<-changes
	if err := other.Set("w", strings.Repeat("a", 64), false); err != nil {
		t.Fatal(err)
	}
	<-changes
	if got := mine.Get("w", strings.Repeat("a", 64)); got != Denied {
		t.Errorf("after the other's decision: %v", got)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	<-changes
	if mine.Err() == nil {
		t.Error("a broken file: no error")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch = %v", err)
	}
}
