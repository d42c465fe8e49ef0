package tokenstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/zalando/go-keyring"
)

// Service is the keychain service name of every entry; the account is the server's key
// (config.ServerConfig.StateKey: its name, or its name and folder for a repository's server).
const Service = "switchboard-mcp-oauth"

// probeTimeout bounds the first keychain call: a Secret Service that shows an unlock prompt
// nobody can answer (a headless session) must not hang the host.
const probeTimeout = 3 * time.Second

// Default returns the keychain store when the keychain answers within probeTimeout, else the
// file store at DefaultPath. where says which, for `switchboard auth status` and the README.
func Default(getenv func(string) (string, bool)) (store Store, where string) {
	if err := ProbeKeychain(); err == nil {
		return Keychain{}, "the system keychain (service " + Service + ")"
	}
	p := DefaultPath(getenv)
	return NewFile(p), p
}

// ProbeKeychain reports whether the OS keychain answers.
func ProbeKeychain() error {
	done := make(chan error, 1)
	go func() {
		_, err := keyring.Get(Service, "(probe: is the keychain there?)")
		if errors.Is(err, keyring.ErrNotFound) {
			err = nil
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(probeTimeout):
		return errors.New("the keychain did not answer")
	}
}

// DefaultPath is $XDG_STATE_HOME/switchboard/oauth-tokens.json (~/.local/state/... without it).
func DefaultPath(getenv func(string) (string, bool)) string {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	if dir, ok := getenv("XDG_STATE_HOME"); ok && filepath.IsAbs(dir) {
		return filepath.Join(dir, "switchboard", "oauth-tokens.json")
	}
	home, ok := getenv("HOME")
	if !ok || home == "" {
		home, _ = os.UserHomeDir() // ignore error: a relative path then
	}
	return filepath.Join(home, ".local", "state", "switchboard", "oauth-tokens.json")
}

// Keychain keeps each server's credential as one keychain entry (service Service, account the
// server name, secret its JSON).
type Keychain struct{}

func (Keychain) Load(ctx context.Context, server string) (Credential, error) {
	s, err := keychainCall(ctx, server, func() (string, error) { return keyring.Get(Service, server) })
	if errors.Is(err, keyring.ErrNotFound) {
		return Credential{}, ErrNoCredential
	}
	if err != nil {
		return Credential{}, fmt.Errorf("tokenstore: keychain: %w", err)
	}
	var c Credential
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return Credential{}, fmt.Errorf("tokenstore: keychain entry for %s is not readable", server)
	}
	return c, nil
}

func (Keychain) Save(ctx context.Context, server string, c Credential) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if _, err := keychainCall(ctx, server, func() (struct{}, error) { return struct{}{}, keyring.Set(Service, server, string(b)) }); err != nil {
		return fmt.Errorf("tokenstore: keychain: %w", err)
	}
	return nil
}

func (Keychain) Delete(ctx context.Context, server string) error {
	_, err := keychainCall(ctx, server, func() (struct{}, error) { return struct{}{}, keyring.Delete(Service, server) })
	if err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return fmt.Errorf("tokenstore: keychain: %w", err)
	}
	return nil
}

// keychainCall runs f, a call of the keychain, until ctx ends: go-keyring takes no context, and a
// keychain that stopped answering (frozen, or showing an unlock prompt nobody answers) held the
// call, and its caller, for good, whatever bound the caller had set (the host's storeTimeout, the
// close of a signed-in server's connection). f goes on by itself once ctx ended, and its answer
// is dropped.
//
// The calls for one server's entry reach the keychain one at a time, in the order they were made
// (keychainQueue): a call left waiting in the keychain would otherwise race the calls made after
// it once the keychain answers again, and a sign-in's Save abandoned there could land after the sign-out's
// Delete, keeping the credential the person signed out of (TestKeychainCallsInOrder). A call
// whose ctx ended before its turn never reaches the keychain: its caller was told it failed.
// Other servers' calls do not wait: a keychain may hold one entry's call alone (macOS asks
// whether an application may use an item, item by item).
func keychainCall[T any](ctx context.Context, server string, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	keychainQueue.mu.Lock()
	if keychainQueue.tails == nil {
		keychainQueue.tails = map[string]chan struct{}{}
	}
	prev, mine := keychainQueue.tails[server], make(chan struct{})
	keychainQueue.tails[server] = mine
	keychainQueue.mu.Unlock()
	done := make(chan result, 1)
	go func() {
		defer func() {
			keychainQueue.mu.Lock()
			if keychainQueue.tails[server] == mine {
				delete(keychainQueue.tails, server)
			}
			keychainQueue.mu.Unlock()
			close(mine)
		}()
		if prev != nil {
			<-prev
		}
		if err := ctx.Err(); err != nil {
			done <- result{err: err}
			return
		}
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// keychainQueue orders each server's keychain calls (keychainCall): tails[server] is closed once
// the call made last for it is over.
var keychainQueue struct {
	mu    sync.Mutex
	tails map[string]chan struct{}
}

// File keeps every server's credential in one JSON file, mode 0600 in a 0700 directory, replaced
// atomically under a lock file shared with other Switchboard processes.
type File struct {
	path string
	mu   sync.Mutex // within the process; flock across processes
}

// NewFile returns the store at path (created on the first Save).
func NewFile(path string) *File { return &File{path: path} }

// Path is the file's path.
func (f *File) Path() string { return f.path }

func (f *File) read() (map[string]Credential, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Credential{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokenstore: %w", err)
	}
	m := map[string]Credential{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("tokenstore: %s is not valid JSON", f.path)
	}
	return m, nil
}

// update runs fn on the file's content under both locks and writes the result.
func (f *File) update(fn func(map[string]Credential)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return fmt.Errorf("tokenstore: %w", err)
	}
	l := flock.New(f.path + ".lock")
	if err := l.Lock(); err != nil {
		return fmt.Errorf("tokenstore: lock: %w", err)
	}
	defer l.Unlock() // ignore error: closing releases it
	m, err := f.read()
	if err != nil {
		return err
	}
	fn(m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(f.path, b, 0o600); err != nil {
		return fmt.Errorf("tokenstore: %w", err)
	}
	return os.Chmod(f.path, 0o600) // whatever the umask
}

func (f *File) Load(_ context.Context, server string) (Credential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.read()
	if err != nil {
		return Credential{}, err
	}
	c, ok := m[server]
	if !ok {
		return Credential{}, ErrNoCredential
	}
	return c, nil
}

func (f *File) Save(_ context.Context, server string, c Credential) error {
	return f.update(func(m map[string]Credential) { m[server] = c })
}

func (f *File) Delete(_ context.Context, server string) error {
	return f.update(func(m map[string]Credential) { delete(m, server) })
}
