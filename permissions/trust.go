package permissions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"
)

// Trust is the remembered workspace-trust decision for one server config.
type Trust int

const (
	TrustUnknown Trust = iota // never decided, or the config changed since: ask
	Trusted
	Denied
)

func (t Trust) String() string {
	switch t {
	case Trusted:
		return "trusted"
	case Denied:
		return "denied"
	}
	return "unknown"
}

// TrustStore is the workspace trust file (trust.json). Decisions are keyed by the fingerprint of
// the server's resolved config (PROTOCOL.md section 2: "a changed config asks again"); the server
// name is stored next to it for people reading the file:
//
//	{"fingerprints": {"<sha256 hex>": {"server": "x", "trusted": true, "at": "2026-11-30T09:00:00Z"}}}
//
// Get, Granted and LastTrusted see the file as it is now, so decisions made by another process
// are seen; they parse it again only when it changed (see current). Set writes atomically under a
// flock on "<path>.lock" after re-reading. A malformed file is never overwritten: Get
// answers TrustUnknown (the server stays untrusted) and Set returns an error naming the file and
// line. Safe for concurrent use.
type TrustStore struct {
	path string
	mu   sync.Mutex
	err  error
	now  func() time.Time

	kept   stamped          // the last look at the file, while it may stand for the next (see current; zero: none)
	parses int              // how many times the file was read and parsed (tests)
	wall   func() time.Time // the clock of the racy-window rule (tests: a later read)
}

// fileStamp is what the file system says of a file without reading it: enough to tell that it
// changed (see current). The change time (ctime) is what makes it so: a program can set a file's
// modification time back (cp -p, tar, rsync -t, touch -r) and the size can stay the same, but
// every write, rename or time change sets the change time to the clock's now, and nothing can set
// it back. Device and inode tell a file renamed over another apart as well.
type fileStamp struct {
	size  int64
	mtime time.Time
	id    fileID
}

// fileID is a file's device, inode and change time, where the system gives them (statIdentity).
type fileID struct {
	dev, ino uint64
	ctime    time.Time
}

// racyWindow is how old a file's modification and change times must be, when the file is read,
// for the parsed contents to be kept: a change within the file system's timestamp granularity (up
// to 2 s on some) of that read could leave the times as they were. Git's index has the same rule
// ("racy git").
const racyWindow = 2 * time.Second

type trustFile struct {
	Fingerprints map[string]trustRecord `json:"fingerprints"`
	// Grants are the allowlist entries the user granted to a workspace-defined server, by the
	// fingerprint of its definition (see Gate: such a server's allowlist match counts only when
	// recorded here, so a changed or another definition of the same name inherits nothing).
	Grants map[string]grantRecord `json:"grants,omitempty"`
}

type grantRecord struct {
	Server  string   `json:"server"`
	Entries []string `json:"entries"`
}

type trustRecord struct {
	Server  string    `json:"server"`
	Trusted bool      `json:"trusted"`
	At      time.Time `json:"at"`
	// Definition is the decided definition as the host described it (opaque here): a later
	// prompt for a changed definition says what changed against the last trusted one.
	Definition json.RawMessage `json:"definition,omitempty"`
}

// OpenTrustStore opens the trust file at path (it need not exist). A malformed or unreadable file
// is not an error here; it is reported by Err() and makes every Get answer TrustUnknown.
func OpenTrustStore(path string) (*TrustStore, error) {
	if path == "" {
		return nil, errors.New("permissions: empty trust store path")
	}
	t := &TrustStore{path: path, now: time.Now}
	t.mu.Lock()
	_, t.err = t.read()
	t.mu.Unlock()
	return t, nil
}

// Path is the trust file.
func (t *TrustStore) Path() string { return t.path }

// Err is the file's problem as of the last read, nil when fine or missing.
func (t *TrustStore) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

func (t *TrustStore) read() (trustFile, error) {
	r := t.readStamped(nil)
	return r.f, r.err
}

// stamped is one look at the file: what it holds (f, err), its stamp, and whether the look may
// stand for a later one (keepable: the system gave a change time and the outcome is the file's
// own, contents or a JSON error, not a failed read that could pass).
type stamped struct {
	f        trustFile
	err      error
	st       fileStamp
	keepable bool
}

// readStamped opens the file and returns kept when kept is keepable and the open file's stamp is
// kept's; otherwise it reads and parses the file. A missing file is an empty one.
func (t *TrustStore) readStamped(kept *stamped) (r stamped) {
	file, err := os.Open(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		t.parses++
		return r
	}
	if err != nil {
		r.err = fmt.Errorf("read trust store: %w", err)
		return r
	}
	defer file.Close()
	// The stamp comes from the open file (fstat), not from the path: on NFS the open is what
	// revalidates a file's attributes (close-to-open), and the bytes read below are this file's.
	fi, err := file.Stat()
	if err != nil {
		r.err = fmt.Errorf("read trust store: %w", err)
		return r
	}
	r.st, r.keepable = stampOf(fi)
	if r.keepable && kept != nil && kept.keepable && kept.st.same(r.st) {
		return *kept
	}
	t.parses++
	data, err := io.ReadAll(file)
	if err != nil {
		r.err, r.keepable = fmt.Errorf("read trust store: %w", err), false
		return r
	}
	// Decoded into a variable of its own: &r.f would move r to the heap on every look, the usual
	// one that returns *kept too.
	var f trustFile
	if err := json.Unmarshal(data, &f); err != nil {
		r.err = fmt.Errorf("%s:%d: %v", t.path, jsonErrLine(data, err), err)
		return r
	}
	r.f = f
	return r
}

func jsonErrLine(data []byte, err error) int {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return 1
	}
	off = min(off, int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// Get returns the decision for the server config with this fingerprint. Only the fingerprint is
// compared: the same config under another name is the same program.
func (t *TrustStore) Get(server, fingerprint string) Trust {
	if fingerprint == "" {
		return TrustUnknown
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := t.current()
	if err != nil {
		return TrustUnknown
	}
	r, ok := f.Fingerprints[fingerprint]
	switch {
	case !ok:
		return TrustUnknown
	case r.Trusted:
		return Trusted
	default:
		return Denied
	}
}

// Set records trusted or denied for the server config with this fingerprint.
func (t *TrustStore) Set(server, fingerprint string, trusted bool) error {
	return t.SetDefinition(server, fingerprint, trusted, nil)
}

// LastTrusted is the definition stored with the latest trusted decision for server (nil when
// none was stored).
func (t *TrustStore) LastTrusted(server string) json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, _ := t.current() // a malformed file has no last trusted definition
	var last trustRecord
	for _, r := range f.Fingerprints {
		if r.Server == server && r.Trusted && r.Definition != nil && (last.Definition == nil || r.At.After(last.At)) {
			last = r
		}
	}
	return bytes.Clone(last.Definition) // not the kept parse's own bytes
}

// SetDefinition is Set that also stores the definition the user decided on (see LastTrusted).
func (t *TrustStore) SetDefinition(server, fingerprint string, trusted bool, definition json.RawMessage) error {
	if fingerprint == "" {
		return &InputError{"empty fingerprint"}
	}
	return t.modify(func(f *trustFile) bool {
		if f.Fingerprints == nil {
			f.Fingerprints = make(map[string]trustRecord)
		}
		f.Fingerprints[fingerprint] = trustRecord{Server: server, Trusted: trusted, At: t.now().UTC().Truncate(time.Second), Definition: definition}
		return true
	})
}

// Granted reports whether the allowlist entry was granted for the server definition with this
// fingerprint (recorded by AddGrant). It sees the file as it is now (current); a malformed file
// grants nothing. It runs on every call of a workspace-defined server whose tool an allowlist
// entry matches: an unchanged file costs an open and an fstat, not a parse.
func (t *TrustStore) Granted(fingerprint, entry string) bool {
	if t == nil || fingerprint == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := t.current()
	if err != nil {
		return false
	}
	return slices.Contains(f.Grants[fingerprint].Entries, entry)
}

// AddGrant records that the user granted the allowlist entry to the server definition with this
// fingerprint. The entry must also stay in the allowlist to count (revoking it there revokes it).
func (t *TrustStore) AddGrant(server, fingerprint, entry string) error {
	if fingerprint == "" || entry == "" {
		return &InputError{"empty fingerprint or entry"}
	}
	return t.modify(func(f *trustFile) bool {
		g := f.Grants[fingerprint]
		if slices.Contains(g.Entries, entry) {
			return false
		}
		if f.Grants == nil {
			f.Grants = make(map[string]grantRecord)
		}
		f.Grants[fingerprint] = grantRecord{Server: server, Entries: append(g.Entries, entry)}
		return true
	})
}

// SetGrants makes the entries of server among entries (the whole allowlist after a change; other
// servers' entries are skipped) exactly the grants recorded for the server definition with this
// fingerprint: an explicit grant through Switchboard's own commands (switchboard.allowlist.set,
// switchboard allow set) binds to the definition as the gate's "always" does, and what the command
// removed is no longer recorded. No entry removes the record. Grants of other definitions stay.
func (t *TrustStore) SetGrants(server, fingerprint string, entries []string) error {
	if fingerprint == "" || ValidServerName(server) != nil {
		return &InputError{"empty fingerprint or invalid server name"}
	}
	var keep []string
	for _, e := range entries {
		if entryServer(e) == server && !slices.Contains(keep, e) {
			keep = append(keep, e)
		}
	}
	return t.modify(func(f *trustFile) bool {
		if g, ok := f.Grants[fingerprint]; ok && g.Server == server && slices.Equal(g.Entries, keep) {
			return false
		}
		if len(keep) == 0 {
			_, had := f.Grants[fingerprint]
			delete(f.Grants, fingerprint)
			return had
		}
		if f.Grants == nil {
			f.Grants = make(map[string]grantRecord)
		}
		f.Grants[fingerprint] = grantRecord{Server: server, Entries: keep}
		return true
	})
}

// modify runs edit on the file's current contents under both locks, after re-reading it, and
// writes the result atomically when edit reports a change. A malformed file is never written.
func (t *TrustStore) modify(edit func(*trustFile) (changed bool)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	unlock, err := lockPath(t.path)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := t.read()
	t.err = err
	if err != nil {
		return fmt.Errorf("not changing the trust store: %w", err)
	}
	if !edit(&f) {
		return nil
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	t.kept = stamped{} // the next look reads what was written
	if err := writeAtomic(t.path, append(data, '\n')); err != nil {
		return fmt.Errorf("write trust store: %w", err)
	}
	return nil
}

// current is the file as it is now, parsed; t.mu is held. The parse of the last read is kept while
// the file's stamp (size, modification and change times, device and inode) stays as it was, and
// only when both times were at least racyWindow old when the file was read: any write after that
// read, even one in place that keeps the size and sets the modification time back, gives the file
// a later change time. Where the system gives no change time nothing is kept. The result is
// shared: callers must not change it (LastTrusted returns a copy). It sets t.err.
func (t *TrustStore) current() (trustFile, error) {
	readAt := t.clock()
	r := t.readStamped(&t.kept)
	t.err = r.err
	// Kept only when nothing can have changed unseen: a write to the file after the stamp was
	// taken gives it a later change time, unless it came within the timestamp's granularity of
	// the stamp, which the racy window rules out.
	t.kept = stamped{}
	if r.keepable && r.st.settled(readAt) {
		t.kept = r
	}
	return r.f, r.err
}

// clock is the wall clock of the racy-window rule (not now, which dates decisions).
func (t *TrustStore) clock() time.Time {
	if t.wall != nil {
		return t.wall()
	}
	return time.Now()
}

// stampOf is fi's stamp; false where the system gives no change time (nothing is kept there).
func stampOf(fi os.FileInfo) (fileStamp, bool) {
	id, ok := statIdentity(fi)
	return fileStamp{size: fi.Size(), mtime: fi.ModTime(), id: id}, ok
}

func (s fileStamp) same(o fileStamp) bool {
	return s.size == o.size && s.mtime.Equal(o.mtime) && s.id.dev == o.id.dev && s.id.ino == o.id.ino && s.id.ctime.Equal(o.id.ctime)
}

// settled reports whether both of the file's times were at least racyWindow before at.
func (s fileStamp) settled(at time.Time) bool {
	return at.Sub(s.mtime) >= racyWindow && at.Sub(s.id.ctime) >= racyWindow
}

// Snapshot is the file's decisions as they are now, for Watch to compare with.
func (t *TrustStore) Snapshot() string {
	t.mu.Lock()
	f, err := t.current()
	t.mu.Unlock()
	if err != nil {
		return "error\x00" + err.Error()
	}
	b, _ := json.Marshal(f) // ignore error: plain types; maps in key order
	return string(b)
}

// Watch calls onChange whenever the decisions in the file change (another window trusted or
// refused a server, `switchboard` commands, a text editor), and when its error changes, compared
// with since (a Snapshot taken before the caller first acted on the file: a change made between
// the two is reported once the watch is armed); ready (if not nil) is called once the watch is
// armed. It watches the parent folder, debounced (100 ms), and returns nil when ctx ends, or an
// error when the watch cannot be set up.
func (t *TrustStore) Watch(ctx context.Context, since string, onChange, ready func()) error {
	last := since
	return watchFile(ctx, t.path, "trust file", 100*time.Millisecond, func() {
		if now := t.Snapshot(); now != last {
			last = now
			if onChange != nil {
				onChange()
			}
		}
	}, ready)
}
