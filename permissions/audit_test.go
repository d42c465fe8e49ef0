package permissions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestAuditRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "audit.jsonl")
	l, err := OpenAuditLog(path, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// A second log on the same file (another process) rotates too; both follow the path.
	l2, err := OpenAuditLog(path, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 2 {
		log := []*AuditLog{l, l2}[i]
		wg.Go(func() {
			for range 50 {
				log.Record(Request{Tool: "mcp__gh__x", Server: "gh", Arguments: []byte(`{}`)}, Decision{Allowed: true, By: ByMode}, 0)
			}
		})
	}
	wg.Wait()
	for _, lg := range []*AuditLog{l, l2} {
		if err := lg.Err(); err != nil {
			t.Fatal(err)
		}
		if err := lg.Close(); err != nil {
			t.Fatal(err)
		}
	}
	lines := 0
	for _, p := range []string{path, path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 1000 {
			t.Errorf("%s is %d bytes, over the 1000 byte bound", p, fi.Size())
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", p, fi.Mode().Perm())
		}
		for _, ln := range strings.Split(strings.TrimSpace(readFile(t, p)), "\n") {
			var e AuditEntry
			if err := json.Unmarshal([]byte(ln), &e); err != nil {
				t.Fatalf("%s: torn or bad line %q: %v", p, ln, err)
			}
			lines++
		}
	}
	if lines == 0 || lines >= 100 {
		t.Errorf("%d lines in the two files; want some, and fewer than 100 (older ones rotated away)", lines)
	}
	// Records after Close are reported, not written.
	l.Record(Request{Tool: "x"}, Decision{}, 0)
	if l.Err() == nil {
		t.Error("Record after Close: no error")
	}
	var nilLog *AuditLog
	nilLog.Record(Request{}, Decision{}, 0) // no panic
}
