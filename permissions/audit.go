package permissions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// DefaultAuditMaxBytes is the audit log size at which it rotates to "<path>.1".
const DefaultAuditMaxBytes = 10 << 20

// AuditLog appends one JSON line per gate decision to audit.jsonl. It never records the
// arguments, only their SHA-256. When the file would grow past maxBytes it is renamed to
// "<path>.1" (replacing the previous one) and a new file is started. Appends and rotation are
// serialised across processes by a flock on "<path>.lock"; each line is one O_APPEND write.
// Safe for concurrent use.
type AuditLog struct {
	path string
	max  int64
	now  func() time.Time

	mu   sync.Mutex
	f    *os.File
	lock *flock.Flock
	err  error // last write error
}

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	Time       time.Time `json:"time"`
	Tool       string    `json:"tool"`
	Server     string    `json:"server,omitempty"`
	ArgsSha256 string    `json:"argsSha256"`
	Mode       string    `json:"mode"`
	Decision   string    `json:"decision"` // allow | deny
	By         string    `json:"by"`
	Answer     string    `json:"answer,omitempty"` // the user's answer when by == user
	Entry      string    `json:"entry,omitempty"`
	File       string    `json:"file,omitempty"`
	Turn       string    `json:"turn,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	LatencyMs  float64   `json:"latencyMs"`
}

// OpenAuditLog opens (creating it and its folder) the audit log at path. maxBytes <= 0 means
// DefaultAuditMaxBytes.
func OpenAuditLog(path string, maxBytes int64) (*AuditLog, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultAuditMaxBytes
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	l := &AuditLog{path: path, max: maxBytes, now: time.Now, lock: flock.New(path+".lock", flock.SetPermissions(0o600))}
	f, err := l.open()
	if err != nil {
		return nil, err
	}
	l.f = f
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

// Err is the last error writing the log (Record has no error result), nil if none.
func (l *AuditLog) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// ArgsSha256 is the hex SHA-256 of the raw argument bytes, as recorded in the audit log.
func ArgsSha256(args []byte) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

// Record appends the decision d on req. Errors are kept in Err().
func (l *AuditLog) Record(req Request, d Decision, latency time.Duration) {
	if l == nil {
		return
	}
	e := AuditEntry{
		Time:       l.now().UTC(),
		Tool:       req.Tool,
		Server:     req.Server,
		ArgsSha256: ArgsSha256(req.Arguments),
		Mode:       req.Mode.String(),
		Decision:   "deny",
		By:         d.By,
		Entry:      d.Entry,
		File:       d.File,
		Turn:       req.Turn,
		Reason:     d.Reason,
		LatencyMs:  float64(latency.Microseconds()) / 1000,
	}
	if d.Allowed {
		e.Decision = "allow"
	}
	if d.By == ByUser {
		e.Answer = d.Answer.String()
	}
	data, err := json.Marshal(e)
	if err != nil {
		l.setErr(err)
		return
	}
	l.setErr(l.append(append(data, '\n')))
}

func (l *AuditLog) setErr(err error) {
	if err != nil {
		l.mu.Lock()
		l.err = err
		l.mu.Unlock()
	}
}

func (l *AuditLog) append(line []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("audit log %s is closed", l.path)
	}
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
	if cur.Size() > 0 && cur.Size()+int64(len(line)) > l.max {
		if err := os.Rename(l.path, l.path+".1"); err != nil {
			return fmt.Errorf("audit log rotate: %w", err)
		}
		if err := l.reopen(); err != nil {
			return err
		}
	}
	if _, err := l.f.Write(line); err != nil {
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

// Close closes the log. Later Records are dropped (and reported by Err()).
func (l *AuditLog) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	l.lock.Close()
	return err
}
