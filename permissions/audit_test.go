package permissions

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gofrs/flock"
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

// auditLines reads path's lines and checks each is a whole JSON entry.
func auditLines(t *testing.T, path string) []AuditEntry {
	t.Helper()
	data := readFile(t, path)
	if data == "" {
		return nil
	}
	if !strings.HasSuffix(data, "\n") {
		t.Fatalf("%s does not end with a newline: %q", path, data)
	}
	var es []AuditEntry
	for _, ln := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		var e AuditEntry
		if err := json.Unmarshal([]byte(ln), &e); err != nil {
			t.Fatalf("%s: torn or bad line %q: %v", path, ln, err)
		}
		es = append(es, e)
	}
	return es
}

func turns(es []AuditEntry) []string {
	var ts []string
	for _, e := range es {
		ts = append(ts, e.Turn)
	}
	return ts
}

// fixedAuditLog is a log with a fixed clock, so that every line has the same length.
func fixedAuditLog(t *testing.T, path string, max int64) *AuditLog {
	t.Helper()
	l, err := OpenAuditLog(path, max)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return at }
	return l
}

var auditReq = Request{Tool: "mcp__gh__x", Server: "gh", Arguments: []byte(`{}`)}

func TestAuditFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := fixedAuditLog(t, path, 0)
	for i := range 3 {
		l.Record(Request{Tool: "t", Turn: fmt.Sprint(i)}, Decision{Allowed: true, By: ByMode}, time.Millisecond)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := turns(auditLines(t, path)), []string{"0", "1", "2"}; !slices.Equal(got, want) {
		t.Errorf("after Flush: turns %q, want %q", got, want)
	}
	l.Record(Request{Tool: "t", Turn: "3"}, Decision{}, 0)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := turns(auditLines(t, path)), []string{"0", "1", "2", "3"}; !slices.Equal(got, want) {
		t.Errorf("after Close: turns %q, want %q", got, want)
	}
	if err := l.Flush(); err != nil { // after Close: returns at once
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if n := l.Dropped(); n != 0 {
		t.Errorf("Dropped() = %d", n)
	}
}

// TestAuditRotateBatch checks that a batch of lines rotates exactly where single lines would:
// before the line that would take a non-empty file past max.
func TestAuditRotateBatch(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprint("batch=", batch), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			// What Record writes for Request{Tool: "mcp__gh__x", Turn: i} at the fixed clock.
			entry := func(i int) []byte {
				b, _ := json.Marshal(AuditEntry{Time: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), Tool: "mcp__gh__x",
					ArgsSha256: ArgsSha256(nil), Mode: "single-confirm", Decision: "deny", Turn: fmt.Sprint(i)})
				return append(b, '\n')
			}
			line := entry(0)
			size := int64(len(line)) * 35 / 10 // 3.5 lines: 3 fit
			var l *AuditLog
			if batch {
				// A log without its writer: append gets all ten lines in one call.
				lock, err := newAuditLock(path + ".lock")
				if err != nil {
					t.Fatal(err)
				}
				l = &AuditLog{path: path, max: size, lock: lock}
				if l.f, err = l.open(); err != nil {
					t.Fatal(err)
				}
				var data []byte
				var ends []int
				for i := range 10 {
					data = append(data, entry(i)...)
					ends = append(ends, len(data))
				}
				if err := l.append(data, ends); err != nil {
					t.Fatal(err)
				}
				l.f.Close()
				l.lock.Close()
			} else {
				l = fixedAuditLog(t, path, size)
				for i := range 10 {
					l.Record(Request{Tool: "mcp__gh__x", Turn: fmt.Sprint(i)}, Decision{}, 0)
					if err := l.Flush(); err != nil { // one line per write
						t.Fatal(err)
					}
				}
			}
			// 0-2, 3-5, 6-8 filled a file each; 9 started a new one.
			if got, want := readFile(t, path), string(entry(9)); got != want {
				t.Errorf("log:\n%s\nwant (the on-disk format):\n%s", got, want)
			}
			if got, want := turns(auditLines(t, path+".1")), []string{"6", "7", "8"}; !slices.Equal(got, want) {
				t.Errorf(".1 has turns %q, want %q", got, want)
			}
			if got, want := turns(auditLines(t, path)), []string{"9"}; !slices.Equal(got, want) {
				t.Errorf("log has turns %q, want %q", got, want)
			}
		})
	}
}

// TestAuditDrop blocks the writer (another process holds the lock) and floods the log: Record
// must not wait, the overflow is dropped and counted, one warning is logged, and the rest is
// written once the lock is free.
func TestAuditDrop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	other := flock.New(path + ".lock")
	if err := other.Lock(); err != nil {
		t.Fatal(err)
	}
	l := fixedAuditLog(t, path, 0)
	var logged strings.Builder
	var logMu sync.Mutex
	l.SetLogger(slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logged}, nil)))
	// The writer holds at most one batch while it waits for the lock; the queue the rest.
	const n = auditQueue + auditBatch + 10
	for range n {
		l.Record(auditReq, Decision{}, 0)
	}
	dropped := l.Dropped()
	if dropped < 10 {
		t.Errorf("Dropped() = %d after %d records with the writer blocked, want at least 10", dropped, n)
	}
	if err := other.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := int64(len(auditLines(t, path))); got+dropped != n {
		t.Errorf("%d lines written + %d dropped != %d recorded", got, dropped, n)
	}
	logMu.Lock()
	out := logged.String()
	logMu.Unlock()
	if c := strings.Count(out, "dropping lines"); c != 1 {
		t.Errorf("%d drop warnings, want 1:\n%s", c, out)
	}
	if l.Err() != nil {
		t.Errorf("Err() = %v", l.Err())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// TestAuditCloseRace records from several goroutines while the log closes: no panic, no race,
// no torn line; every record is written, dropped, or reported by Err() as after Close.
func TestAuditCloseRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := fixedAuditLog(t, path, 0)
	l.SetLogger(slog.New(slog.DiscardHandler))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				l.Record(auditReq, Decision{}, 0)
			}
		})
	}
	wg.Go(func() { l.Flush() })
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if got := int64(len(auditLines(t, path))); got+l.Dropped() > 800 {
		t.Errorf("%d lines + %d dropped > 800 records", got, l.Dropped())
	}
}

// fdsTo counts this process's open file descriptors on path (Linux: /proc/self/fd).
func fdsTo(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}

// The writer keeps the lock file open between batches (one lock and unlock per batch, not an open
// and close around them as well), and closes it with the log.
func TestAuditHoldsLockFileOpen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/fd")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.jsonl")
	l := fixedAuditLog(t, path, 0)
	for i := range 3 {
		l.Record(Request{Tool: "t", Turn: fmt.Sprint(i)}, Decision{Allowed: true, By: ByMode}, 0)
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		if n := fdsTo(t, path+".lock"); n != 1 {
			t.Fatalf("after batch %d: %d open descriptors on the lock file, want 1 (held open)", i, n)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := fdsTo(t, path+".lock"); n != 0 {
		t.Fatalf("after Close: %d open descriptors on the lock file", n)
	}
}

// In a burst (lines within the linger time of the last write), lines recorded one after another
// share one write; a line with nothing after it is written once the linger time has passed,
// without a Flush.
func TestAuditBatchesByTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, path := openAuditLog(t)
		defer l.Close()
		l.Record(Request{Tool: "t", Turn: "first"}, Decision{}, 0) // written at once (quiet before)
		synctest.Wait()
		l.Record(Request{Tool: "t", Turn: "0"}, Decision{}, 0)
		synctest.Wait()
		time.Sleep(auditLinger / 2) // fake clock: the writer is still lingering
		l.Record(Request{Tool: "t", Turn: "1"}, Decision{}, 0)
		synctest.Wait()
		if got, want := turns(auditLines(t, path)), []string{"first"}; !slices.Equal(got, want) {
			t.Fatalf("before the linger time passed: turns %q, want %q", got, want)
		}
		time.Sleep(auditLinger)
		synctest.Wait()
		if got, want := turns(auditLines(t, path)), []string{"first", "0", "1"}; !slices.Equal(got, want) {
			t.Fatalf("after the linger time: turns %q, want %q", got, want)
		}
	})
}

// The first line after a quiet spell (longer than the linger time since the last write) is
// written at once: a host killed right after a lone call has its decision on disk.
func TestAuditWritesAtOnceAfterQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, path := openAuditLog(t)
		defer l.Close()
		start := time.Now()
		l.Record(Request{Tool: "t", Turn: "0"}, Decision{}, 0)
		synctest.Wait()
		if got, want := turns(auditLines(t, path)), []string{"0"}; !slices.Equal(got, want) || time.Since(start) != 0 {
			t.Fatalf("first line: turns %q after %v, want %q at once", got, time.Since(start), want)
		}
		time.Sleep(auditLinger) // quiet for the linger time
		l.Record(Request{Tool: "t", Turn: "1"}, Decision{}, 0)
		synctest.Wait()
		if got, want := turns(auditLines(t, path)), []string{"0", "1"}; !slices.Equal(got, want) {
			t.Fatalf("after a quiet spell: turns %q, want %q at once", got, want)
		}
	})
}

// Flush and Close write at once: neither waits for the writer's linger (the fake clock stands
// still unless something waits for it).
func TestAuditFlushAndCloseDoNotLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, path := openAuditLog(t)
		l.Record(Request{Tool: "t", Turn: "-"}, Decision{}, 0) // written at once: a burst follows
		synctest.Wait()
		start := time.Now()
		l.Record(Request{Tool: "t", Turn: "0"}, Decision{}, 0)
		synctest.Wait() // the writer took the line and lingers
		l.Record(Request{Tool: "t", Turn: "1"}, Decision{}, 0)
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d >= auditLinger {
			t.Errorf("Flush waited %v for the linger", d)
		}
		if got, want := turns(auditLines(t, path)), []string{"-", "0", "1"}; !slices.Equal(got, want) {
			t.Fatalf("after Flush: turns %q, want %q", got, want)
		}
		l.Record(Request{Tool: "t", Turn: "2"}, Decision{}, 0)
		synctest.Wait()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d >= auditLinger {
			t.Errorf("Close waited %v for the linger", d)
		}
		if got, want := turns(auditLines(t, path)), []string{"-", "0", "1", "2"}; !slices.Equal(got, want) {
			t.Fatalf("after Close: turns %q, want %q", got, want)
		}
	})
}

// A full batch is written at once, without waiting for the linger.
func TestAuditFullBatchDoesNotLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, path := openAuditLog(t)
		defer l.Close()
		l.Record(Request{Tool: "t", Turn: "-"}, Decision{}, 0) // written at once: a burst follows
		synctest.Wait()
		start := time.Now()
		l.Record(Request{Tool: "t", Turn: "0"}, Decision{}, 0)
		synctest.Wait() // the writer took the first line and lingers
		for i := 1; i <= auditBatch; i++ {
			l.Record(Request{Tool: "t", Turn: fmt.Sprint(i)}, Decision{}, 0)
		}
		synctest.Wait()
		if d := time.Since(start); d >= auditLinger {
			t.Errorf("the full batch waited %v for the linger", d)
		}
		if n := len(auditLines(t, path)); n < auditBatch {
			t.Errorf("%d lines written before the linger ended; want a full batch (%d)", n, auditBatch)
		}
	})
}

// openAuditLog opens an audit log of the default size in a temporary folder.
func openAuditLog(t *testing.T) (*AuditLog, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := OpenAuditLog(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l, path
}
