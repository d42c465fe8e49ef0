package broker

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Scopes of a shared instance.
const (
	// ScopeUser: one instance for all of the user's windows with identical launches. It declares
	// no roots capability upstream: one session has one roots list, and the union of every
	// window's folders would widen each window's reach to the others'.
	ScopeUser = "user"
	// ScopeWorkspace: one instance per launch and folder set; its roots are exactly that set.
	ScopeWorkspace = "workspace"
)

// Sources of a server definition.
const (
	SourceUser      = "user"
	SourceWorkspace = "workspace" // defined by a file in the repository
)

// Launch is everything that makes a server process what it is, resolved by the window exactly as
// it would start the server itself. Two windows share an instance iff their Launches are equal,
// so an instance only ever holds values each of its windows resolved on its own.
type Launch struct {
	Command string   `json:"command"` // absolute, after PATH lookup
	Args    []string `json:"args"`    // templates resolved
	Env     []string `json:"env"`     // the full child environment, KEY=value
	Dir     string   `json:"dir"`     // working directory ("" : the daemon's, which is "/")
	Scope   string   `json:"scope"`   // ScopeUser or ScopeWorkspace
	// Folders is the window's workspace folder set (ScopeWorkspace only): the instance's roots.
	Folders []Folder `json:"folders,omitempty"`
	Source  string   `json:"source"` // SourceUser or SourceWorkspace
	// DefiningFolder and Fingerprint (SourceWorkspace only): the folder whose file defines the
	// server, symlinks resolved, and the trust fingerprint the window granted. They keep an
	// identical definition in two repositories from sharing one process.
	DefiningFolder string `json:"definingFolder,omitempty"`
	Fingerprint    string `json:"fingerprint,omitempty"`
}

// Folder is one workspace folder, as roots/list gives it.
type Folder struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// validate refuses a launch the daemon must not start. The window enforces the same rules at
// config load; these are the daemon's own (defence in depth: a workspace definition never gets
// user scope, whatever a window says).
func (l *Launch) validate() error {
	if !filepath.IsAbs(l.Command) {
		return fmt.Errorf("command %q is not an absolute path", l.Command)
	}
	for _, kv := range l.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("environment entry %q is not KEY=value", kv)
		}
	}
	for _, s := range append(append([]string{l.Command, l.Dir}, l.Args...), l.Env...) {
		if strings.IndexByte(s, 0) >= 0 {
			return fmt.Errorf("launch contains a NUL byte")
		}
	}
	switch l.Scope {
	case ScopeUser:
		if len(l.Folders) > 0 {
			return fmt.Errorf("a user-scope instance has no folders")
		}
	case ScopeWorkspace:
	default:
		return fmt.Errorf("scope %q is not %q or %q", l.Scope, ScopeUser, ScopeWorkspace)
	}
	switch l.Source {
	case SourceUser:
	case SourceWorkspace:
		if l.Scope != ScopeWorkspace {
			return fmt.Errorf("a server defined by a workspace file may be shared at workspace scope at most")
		}
		if !filepath.IsAbs(l.DefiningFolder) || l.Fingerprint == "" {
			return fmt.Errorf("a server defined by a workspace file needs its defining folder and trust fingerprint")
		}
	default:
		return fmt.Errorf("source %q is not %q or %q", l.Source, SourceUser, SourceWorkspace)
	}
	return nil
}

// canonical is the launch in one byte form: the environment and the folder set sorted (their
// order changes nothing in the process or its roots).
func (l Launch) canonical() []byte {
	l.Env = slices.Sorted(slices.Values(l.Env))
	l.Folders = slices.Clone(l.Folders)
	slices.SortFunc(l.Folders, func(a, b Folder) int {
		if c := strings.Compare(a.URI, b.URI); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	b, err := json.Marshal(l)
	if err != nil {
		panic(err) // strings and slices of strings always marshal
	}
	return b
}

// instanceKey is HMAC-SHA256(key, canonical launch) in hex. The key is random per daemon start
// and never leaves it, so an instance id names no value and cannot be tested offline.
func instanceKey(key []byte, l Launch) string {
	m := hmac.New(sha256.New, key)
	m.Write(l.canonical())
	return hex.EncodeToString(m.Sum(nil))
}
