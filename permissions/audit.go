package permissions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultAuditMaxBytes is the audit log size at which it rotates to "<path>.1".
const DefaultAuditMaxBytes = 10 << 20

// auditQueue is how many decisions may wait for the writer; beyond it Record drops lines.
// auditBatch is the most lines the writer appends in one locked write. auditLinger is how long the
// writer waits after a line for more before it writes, when the line comes within auditLinger of
// the last write (Flush and Close do not wait; the first line after a quiet spell is written at
// once): calls in quick succession then share one locked write instead of paying the lock for
// each line. 20 ms, not 2: a batch's system calls (flock, fstat, stat, write, unlock) also wake
// the runtime's monitor thread, which then polls while the host works; at 2 ms that was about half
// a context switch per call and 5–12% of the host's CPU per call, server-everything echo
// (BENCHMARKS.md, sixth round).
const (
	auditQueue  = 1024
	auditBatch  = 256
	auditLinger = 20 * time.Millisecond
)

// AuditLog appends one JSON line per gate decision to audit.jsonl. It never records the arguments,
// only their SHA-256. When the file would grow past maxBytes it is renamed to "<path>.1" (replacing
// the previous one) and a new file is started.
//
// Record never blocks and never touches the file: it hashes the arguments, takes the time and hands
// the entry to a single background writer through a bounded queue. The writer encodes the lines and
// appends them in batches (a line that comes within auditLinger of the last write waits that long
// for more, at most auditBatch lines, while the first line after a quiet spell is written at once; the
// lines of a batch wait in the queue without waking the writer, so a batch costs the writer one
// wake-up, not one per line); appends and rotation are serialised across processes by a flock on
// "<path>.lock", held open for the log's life so a batch costs one lock and unlock, each batch of
// whole lines is one O_APPEND write, and a file rotates before the line that would take it past
// maxBytes, exactly as if the lines were written one by one. A crash loses at most the lines still
// queued or lingering (in a burst of calls, the last auditLinger's worth, 20 ms, and more while the
// writer waits for another process's lock or a slow disk), never a part of a line. When the queue is full
// the line is dropped: Dropped counts the drops and the first one logs a warning. Flush waits for
// the lines recorded so far; Close writes every queued line and stops the writer. Safe for
// concurrent use.
type AuditLog struct {
	path string
	max  int64
	now  func() time.Time
	log  atomic.Pointer[slog.Logger] // nil = slog.Default()

	// closeMu guards closed and the sending side of ch: Record and Flush hold it for reading
	// while they send, Close holds it to close ch. Record only tries it, so it never waits.
	closeMu sync.RWMutex
	closed  bool
	ch      chan *auditMsg // from auditMsgs, back there once written
	urgent  chan struct{}  // (capacity 1) ends the writer's linger: Flush, Close, a full batch
	done    chan struct{}  // closed when the writer has exited
	fileErr error          // the file's Close error, set by the writer before done

	dropped atomic.Int64
	warned  atomic.Bool

	mu  sync.Mutex
	err error // last write error

	// Owned by the writer goroutine.
	f    *os.File
	lock auditLock
}

// auditLock is the cross-process lock on "<path>.lock" (see newAuditLock).
type auditLock interface {
	Lock() error
	Unlock() error
	Close() error
}

// auditMsg is one queued entry (ArgsSha256 still raw), or a Flush marker when flushed != nil.
// The queue holds pointers, recycled through auditMsgs: a queue of auditQueue entries by value
// was 248 KB allocated at every open, a quarter of all `switchboard serve` allocated before its
// first call was answered (enough to bring a collection into that path, cmd/sbbench "first
// call"), and each entry was copied into and out of the channel.
type auditMsg struct {
	e       AuditEntry
	sum     [sha256.Size]byte
	flushed chan struct{}
}

var auditMsgs = sync.Pool{New: func() any { return new(auditMsg) }}

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	Time       time.Time `json:"time"`
	Tool       string    `json:"tool"`
	Server     string    `json:"server,omitempty"`
	ArgsSha256 string    `json:"argsSha256"`
	Mode       string    `json:"mode"`
	Decision   string    `json:"decision"`         // allow | deny
	By         string    `json:"by"`               // mode | allowlist | builtin | user | timeout | cancelled | disconnect | shutdown | error
	Answer     string    `json:"answer,omitempty"` // the user's answer when by == user
	Entry      string    `json:"entry,omitempty"`
	File       string    `json:"file,omitempty"`
	Turn       string    `json:"turn,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	LatencyMs  float64   `json:"latencyMs"`
}

// OpenAuditLog opens (creating it and its folder) the audit log at path and starts its writer;
// Close stops it. maxBytes <= 0 means DefaultAuditMaxBytes.
func OpenAuditLog(path string, maxBytes int64) (*AuditLog, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultAuditMaxBytes
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	lock, err := newAuditLock(path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("audit log lock: %w", err)
	}
	l := &AuditLog{
		path: path, max: maxBytes, now: time.Now,
		lock:   lock,
		ch:     make(chan *auditMsg, auditQueue),
		urgent: make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	f, err := l.open()
	if err != nil {
		lock.Close()
		return nil, err
	}
	l.f = f
	go l.run()
	return l, nil
}

func (l *AuditLog) open() (*os.File, error) {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return f, nil
}

// Path is the audit log file.
func (l *AuditLog) Path() string { return l.path }

// SetLogger sets where the log warns about dropped lines (nil = slog.Default()).
func (l *AuditLog) SetLogger(log *slog.Logger) { l.log.Store(log) }

// Err is the last error writing the log (Record has no error result), nil if none.
func (l *AuditLog) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Dropped is how many decisions were not logged because the writer was behind (or the log was
// closing).
func (l *AuditLog) Dropped() int64 {
	if l == nil {
		return 0
	}
	return l.dropped.Load()
}

// ArgsSha256 is the hex SHA-256 of the raw argument bytes, as recorded in the audit log.
func ArgsSha256(args []byte) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

// Record queues the decision d on req for the writer and returns at once; it never waits for
// the file. Write errors are kept in Err(); a line that finds the queue full is dropped and
// counted in Dropped().
func (l *AuditLog) Record(req Request, d Decision, latency time.Duration) {
	if l == nil {
		return
	}
	// Close holds closeMu (or waits for it) only while it shuts the writer down: a Record racing
	// with it is a drop, not a wait.
	if !l.closeMu.TryRLock() {
		l.drop()
		return
	}
	defer l.closeMu.RUnlock()
	if l.closed {
		l.setErr(fmt.Errorf("audit log %s is closed", l.path))
		return
	}
	m := auditMsgs.Get().(*auditMsg)
	*m = auditMsg{
		e: AuditEntry{
			Time:      l.now().UTC(),
			Tool:      req.Tool,
			Server:    req.Server,
			Mode:      req.Mode.String(),
			Decision:  "deny",
			By:        d.By,
			Entry:     d.Entry,
			File:      d.File,
			Turn:      req.Turn,
			Reason:    d.Reason,
			LatencyMs: float64(latency.Microseconds()) / 1000,
		},
		// The caller owns req.Arguments: hash them now, hex-encode in the writer.
		sum: sha256.Sum256(req.Arguments),
	}
	if d.Allowed {
		m.e.Decision = "allow"
	}
	if d.By == ByUser {
		m.e.Answer = d.Answer.String()
	}
	select {
	case l.ch <- m:
		if len(l.ch) >= auditBatch {
			l.hurry()
		}
	default:
		auditMsgs.Put(m)
		l.drop()
	}
}

// hurry ends the writer's linger (it writes what is queued now).
func (l *AuditLog) hurry() {
	select {
	case l.urgent <- struct{}{}:
	default: // already signalled
	}
}

func (l *AuditLog) drop() {
	n := l.dropped.Add(1)
	if l.warned.CompareAndSwap(false, true) {
		log := l.log.Load()
		if log == nil {
			log = slog.Default()
		}
		log.Warn("audit log: the writer is behind, dropping lines; see AuditLog.Dropped", "file", l.path, "dropped", n)
	}
}

// Flush waits until every line recorded before it has been written (or failed: it returns
// Err()). After Close it returns at once.
func (l *AuditLog) Flush() error {
	if l == nil {
		return nil
	}
	l.closeMu.RLock()
	if l.closed {
		l.closeMu.RUnlock()
		return l.Err()
	}
	flushed := make(chan struct{})
	l.ch <- &auditMsg{flushed: flushed} // may wait for room: Flush is not on the hot path
	l.closeMu.RUnlock()
	l.hurry()
	<-flushed
	return l.Err()
}

func (l *AuditLog) setErr(err error) {
	if err != nil {
		l.mu.Lock()
		l.err = err
		l.mu.Unlock()
	}
}

// run is the writer: it takes what is queued (up to auditBatch lines), appends it in one
// locked write, releases the Flush calls it met, and repeats until Close closes ch.
func (l *AuditLog) run() {
	defer close(l.done)
	var (
		buf     bytes.Buffer
		enc     = json.NewEncoder(&buf) // Encode = json.Marshal + "\n"
		ends    []int                   // end offset of each line in buf
		waiters []chan struct{}
	)
	add := func(m *auditMsg) {
		if m.flushed != nil {
			waiters = append(waiters, m.flushed)
			return
		}
		defer func() { *m = auditMsg{}; auditMsgs.Put(m) }()
		if line, ok := appendAuditLine(buf.AvailableBuffer(), &m.e, &m.sum); ok {
			buf.Write(line)
		} else {
			m.e.ArgsSha256 = hex.EncodeToString(m.sum[:])
			if err := enc.Encode(&m.e); err != nil { // writes nothing on error
				l.setErr(fmt.Errorf("audit log: %w", err))
				return
			}
		}
		ends = append(ends, buf.Len())
	}
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	defer linger.Stop()
	var wrote time.Time // the last append; zero: none yet
	for m := range l.ch {
		buf.Reset()
		ends, waiters = ends[:0], waiters[:0]
		add(m)
		// Only lines that come while lines are being written wait: the first line after a quiet
		// spell (a person's call, the first of a burst) is written at once, so a host killed
		// outright loses a window only in the middle of a burst.
		busy := !wrote.IsZero() && time.Since(wrote) < auditLinger
		if busy && len(waiters) == 0 && len(l.ch) < auditBatch-1 {
			// Wait briefly for the next lines, without being woken by each of them: they wait in
			// ch (one wake-up per batch; the writer used to wait on ch and the timer together and
			// was woken by every line). Flush, Close and a full batch cut the wait short.
			linger.Reset(auditLinger)
			select {
			case <-linger.C:
			case <-l.urgent:
				linger.Stop()
			}
		}
	batch:
		for len(ends) < auditBatch && len(waiters) == 0 {
			select {
			case m, ok := <-l.ch:
				if !ok {
					break batch
				}
				add(m)
			default:
				break batch
			}
		}
		if len(ends) > 0 {
			l.setErr(l.append(buf.Bytes(), ends))
			wrote = time.Now()
		}
		for _, w := range waiters {
			close(w)
		}
		if buf.Cap() > 1<<20 { // don't keep a huge batch's buffer
			buf = bytes.Buffer{}
		}
	}
	l.fileErr = l.f.Close()
	l.f = nil
	l.lock.Close()
}

// append writes data, whole lines ending at ends, under the cross-process lock. The file
// rotates before a line that would take a non-empty file past max, as for single lines.
func (l *AuditLog) append(data []byte, ends []int) error {
	if err := l.lock.Lock(); err != nil {
		return fmt.Errorf("audit log lock: %w", err)
	}
	defer l.lock.Unlock()
	// Another process may have rotated the file: follow the path.
	cur, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if pi, err := os.Stat(l.path); err != nil || !os.SameFile(cur, pi) {
		if err := l.reopen(); err != nil {
			return err
		}
		if cur, err = l.f.Stat(); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
	}
	size := cur.Size()  // of the file before data[start:]
	start, prev := 0, 0 // the unwritten chunk is data[start:prev]
	for _, end := range ends {
		before := size + int64(prev-start)
		if before > 0 && before+int64(end-prev) > l.max {
			if err := l.write(data[start:prev]); err != nil {
				return err
			}
			if err := os.Rename(l.path, l.path+".1"); err != nil {
				return fmt.Errorf("audit log rotate: %w", err)
			}
			if err := l.reopen(); err != nil {
				return err
			}
			size, start = 0, prev
		}
		prev = end
	}
	return l.write(data[start:prev])
}

func (l *AuditLog) write(chunk []byte) error {
	if len(chunk) == 0 {
		return nil
	}
	if _, err := l.f.Write(chunk); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

func (l *AuditLog) reopen() error {
	f, err := l.open()
	if err != nil {
		return err
	}
	l.f.Close()
	l.f = f
	return nil
}

// Close writes every queued line, stops the writer and closes the file. Later Records are
// dropped (and reported by Err()). Closing twice is harmless.
func (l *AuditLog) Close() error {
	if l == nil {
		return nil
	}
	l.closeMu.Lock()
	if l.closed {
		l.closeMu.Unlock()
		<-l.done
		return nil
	}
	l.closed = true
	close(l.ch)
	l.closeMu.Unlock()
	l.hurry()
	<-l.done
	return l.fileErr
}
