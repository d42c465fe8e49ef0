package permissions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// DefaultPinsPath is the pin file: $XDG_STATE_HOME/switchboard/pins.json.
func DefaultPinsPath() string { return filepath.Join(StateDir(), "pins.json") }

// PinStore is the pin file (pins.json): for every MCP server (by a key the host chooses: the
// server's name, or for a workspace file's server its name and folder), the definition of each tool the
// user approved, as the host's canonical form (opaque here) and its hash, and the server's
// identity. A tool whose current hash differs from its pin is held back by the host (issue 13):
//
//	{"version": 1, "servers": {"github": {"identity": {...}, "tools": {
//	    "create_issue": {"hash": "<sha256 hex>", "definition": {...}, "at": "2026-12-01T09:00:00Z"}}}}}
//
// Load re-reads the file, so pins accepted by another process (switchboard pins accept) are seen.
// Writes re-read the file under a flock on "<path>.lock" and replace it atomically. A malformed
// file is never overwritten: Load returns its error (the host then treats no tool as pinned: a
// broken file grants nothing) and every write fails naming the file and line. Safe for
// concurrent use.
type PinStore struct {
	path string
	now  func() time.Time

	mu    sync.Mutex // serialises this process's writers (held while another process's lock is awaited)
	errMu sync.Mutex // guards err: a reader never waits behind a writer
	err   error
}

// PinnedTool is one tool's pin.
type PinnedTool struct {
	Hash       string          `json:"hash"`
	Definition json.RawMessage `json:"definition"`
	At         time.Time       `json:"at"`
}

// ServerPins are one server's pins.
type ServerPins struct {
	Identity json.RawMessage       `json:"identity,omitempty"`
	Tools    map[string]PinnedTool `json:"tools"`
}

type pinFile struct {
	Version int                   `json:"version"`
	Servers map[string]ServerPins `json:"servers"`
}

// OpenPinStore opens the pin file at path (it need not exist). A malformed file is not an error
// here: Err and Load report it.
func OpenPinStore(path string) (*PinStore, error) {
	if path == "" {
		return nil, errors.New("permissions: empty pin file path")
	}
	p := &PinStore{path: path, now: time.Now}
	p.Load() // ignore error: kept in Err
	return p, nil
}

// Path is the pin file.
func (p *PinStore) Path() string { return p.path }

// Err is the file's problem as of the last read, nil when fine or missing.
func (p *PinStore) Err() error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.err
}

// Load re-reads the file and returns every server's pins (never nil). A malformed or unreadable
// file returns its error and no pins.
func (p *PinStore) Load() (map[string]ServerPins, error) {
	f, err := p.read()
	p.errMu.Lock()
	p.err = err
	p.errMu.Unlock()
	if err != nil {
		return map[string]ServerPins{}, err
	}
	return f.Servers, nil
}

func (p *PinStore) read() (pinFile, error) {
	f := pinFile{Servers: map[string]ServerPins{}}
	data, err := os.ReadFile(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("read pin file: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return pinFile{}, fmt.Errorf("%s:%d: %v", p.path, jsonErrLine(data, err), err)
	}
	if f.Version > 1 {
		return pinFile{}, fmt.Errorf("%s: version %d is newer than this Switchboard understands", p.path, f.Version)
	}
	if f.Servers == nil {
		f.Servers = map[string]ServerPins{}
	}
	for name, s := range f.Servers {
		if s.Tools == nil {
			s.Tools = map[string]PinnedTool{}
			f.Servers[name] = s
		}
	}
	return f, nil
}

// Pin records tools of server (replacing their earlier pins) and the server's identity. A zero
// At is set to now.
func (p *PinStore) Pin(server string, identity json.RawMessage, tools map[string]PinnedTool) error {
	if server == "" {
		return &InputError{"empty server name"}
	}
	return p.update(func(f *pinFile) {
		s := f.Servers[server]
		if s.Tools == nil {
			s.Tools = map[string]PinnedTool{}
		}
		if identity != nil {
			s.Identity = identity
		}
		at := p.now().UTC().Truncate(time.Second)
		for name, t := range tools {
			if t.At.IsZero() {
				t.At = at
			}
			s.Tools[name] = t
		}
		f.Servers[server] = s
	})
}

// PinFirst records server's tools and identity as Pin does, unless the file already holds a
// record of server (pinned meanwhile by another process, or accepted by the person): first-seen
// pins never replace pins.
func (p *PinStore) PinFirst(server string, identity json.RawMessage, tools map[string]PinnedTool) error {
	if server == "" {
		return &InputError{"empty server name"}
	}
	return p.update(func(f *pinFile) {
		if _, ok := f.Servers[server]; ok {
			return
		}
		at := p.now().UTC().Truncate(time.Second)
		s := ServerPins{Identity: identity, Tools: make(map[string]PinnedTool, len(tools))}
		for name, t := range tools {
			if t.At.IsZero() {
				t.At = at
			}
			s.Tools[name] = t
		}
		f.Servers[server] = s
	})
}

// Unpin forgets the named tools of server; no names forgets the server's record (its next
// connection is pinned as first seen).
func (p *PinStore) Unpin(server string, tools ...string) error {
	return p.update(func(f *pinFile) {
		if len(tools) == 0 {
			delete(f.Servers, server)
			return
		}
		s, ok := f.Servers[server]
		if !ok {
			return
		}
		for _, t := range tools {
			delete(s.Tools, t)
		}
		f.Servers[server] = s
	})
}

func (p *PinStore) update(change func(*pinFile)) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	unlock, err := lockPath(p.path)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := p.read()
	p.errMu.Lock()
	p.err = err
	p.errMu.Unlock()
	if err != nil {
		return fmt.Errorf("not changing the pin file: %w", err)
	}
	change(&f)
	f.Version = 1
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(p.path, append(data, '\n')); err != nil {
		return fmt.Errorf("write pin file: %w", err)
	}
	return nil
}
