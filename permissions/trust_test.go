package permissions

import (
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
