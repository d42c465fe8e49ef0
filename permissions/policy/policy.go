package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os/exec"
	"strconv"
	"strings"
)

// Where a source comes from: Switchboard's own files, or a product whose files are imported
// restrict-only.
const (
	FromSwitchboard = "Switchboard"
	FromClaudeCode  = "Claude Code"
	FromVSCode      = "VS Code"
	FromCopilot     = "GitHub Copilot"
)

// A Rule is one place in a policy file that decides something.
type Rule struct {
	File    string `json:"file"`
	Pointer string `json:"pointer"` // JSON pointer of the rule's value, "" for a whole file
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"column,omitempty"`
	// Text is the rule's value as compact JSON (for a whole file, its role).
	Text string `json:"text"`
	// From is the product the file belongs to (FromSwitchboard, FromClaudeCode, ...).
	From string `json:"from"`
}

// Loc is file#/json/pointer, the rule's address in check output and in the audit log.
func (r *Rule) Loc() string {
	if r == nil {
		return ""
	}
	return r.File + "#" + r.Pointer
}

// Key is the rule's place in plain words: deniedMcpServers[0], permissions.deny[2].
func (r *Rule) Key() string {
	if r == nil {
		return ""
	}
	if r.Pointer == "" {
		return r.Text
	}
	var b strings.Builder
	for i, tok := range strings.Split(r.Pointer[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if i > 0 {
			b.WriteString(".")
		}
		b.WriteString(tok)
	}
	return b.String()
}

// Contact is whom to ask about the policy (adminContact; VS Code AdminContactEmail/Url).
type Contact struct {
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

func (c Contact) String() string {
	switch {
	case c.Email != "" && c.URL != "":
		return c.Email + " (" + c.URL + ")"
	case c.Email != "":
		return c.Email
	}
	return c.URL
}

// A Source is one policy file that was found.
type Source struct {
	Path   string `json:"path"`
	From   string `json:"from"`
	Import bool   `json:"import"` // restrict-only
	Owner  int    `json:"owner"`
	// OwnerSID is the owner on Windows, where Owner is -1.
	OwnerSID string      `json:"ownerSid,omitempty"`
	Mode     fs.FileMode `json:"mode"`
	Digest   string      `json:"sha256"`
	// Contributed names what the policy took from the file ("deniedMcpServers (2 entries)").
	Contributed []string `json:"contributed,omitempty"`
	Err         string   `json:"error,omitempty"`
}

// A serverRule is one entry of allowedMcpServers or deniedMcpServers: exactly one of Name,
// Command and URL is set.
type serverRule struct {
	rule    *Rule
	name    string
	command []string
	url     string
}

// allowlist is one product's allowedMcpServers (the union of its files); a server must pass
// every allowlist that exists.
type allowlist struct {
	from    string
	key     *Rule // the first file's allowedMcpServers
	entries []serverRule
	hasCmd  bool
	hasURL  bool
}

// ManagedServer is one server of a managed-mcp.json: the host starts it as a user-defined
// server (no trust question) and admits it by Launch.Managed.
type ManagedServer struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config"` // the entry as written, for the host's config loader
	Rule   *Rule           `json:"rule"`
}

// exclusiveSet is one product's managed-mcp.json: only its servers may start.
type exclusiveSet struct {
	rule    *Rule // the file
	servers map[string]ManagedServer
}

// toolRule is one permissions.allow/ask/deny entry.
type toolRule struct {
	rule    *Rule
	pattern string
	server  string // "" for a built-in tool name
	tool    string // exact tool part, or prefix when prefix is set ("" = whole server)
	prefix  bool
}

// Policy is the merged organisation policy. The zero value and nil are "no policy". A Policy
// never changes after Load; a reload makes a new one. Safe for concurrent use.
type Policy struct {
	sources  []Source
	broken   []error
	warnings []string
	contact  Contact
	gallery  string
	// galleryRule is VS Code's McpGalleryServiceUrl; registryURL and registryRule are
	// Switchboard's mcpRegistryUrl, which wins over it.
	galleryRule  *Rule
	registryURL  string
	registryRule *Rule

	denied         []serverRule
	allowlists     []allowlist
	managedOnly    *Rule
	exclusive      []exclusiveSet
	managed        []ManagedServer
	mcpAccess      string
	mcpAccessRule  *Rule
	workspaceDeny  *Rule
	samplingDeny   *Rule
	sandboxRule    *Rule // mcpSandbox "required": a stdio server starts only sandboxed
	shared         string
	sharedRule     *Rule
	pinning        string
	pinningRule    *Rule
	disabledModes  map[string]*Rule
	toolDeny       map[string][]toolRule // by lower-cased server; "" = built-in names
	toolAsk        map[string][]toolRule
	toolAllow      map[string][]toolRule
	managedRules   *Rule // allowManagedPermissionRulesOnly
	lookPath       func(string) (string, error)
	inheritOffRule *Rule
	digest         string
}

// Options configures Load.
type Options struct {
	Paths Paths
	// LookPath resolves a bare command of an allowedMcpServers serverCommand rule, as the host's
	// PATH would (nil = exec.LookPath).
	LookPath func(string) (string, error)
}

// Modes, as PROTOCOL.md names them; the policy package does not import permissions.
const (
	ModeSingleConfirm = "single-confirm"
	ModeAlwaysAllow   = "always-allow"
	ModeAllowlistOnly = "allowlist-only"
)

var (
	restrictOrder = map[string]map[string]int{
		"mcpAccess":        {"none": 0, "registry": 1, "all": 2},
		"sharedServers":    {"deny": 0, "workspace-only": 1, "allow": 2},
		"pinning":          {"enforce": 0, "warn": 1, "off": 2},
		"workspaceServers": {"deny": 0, "ask": 1},
		"sampling":         {"deny": 0, "ask": 1, "allow": 2},
		"mcpSandbox":       {"required": 0, "optional": 1},
	}
	knownModes = []string{ModeSingleConfirm, ModeAlwaysAllow, ModeAllowlistOnly}
)

// builder gathers sources into a Policy.
type builder struct {
	p       *Policy
	layers  map[string]*allowlist
	digests bytes.Buffer
}

func newBuilder(lookPath func(string) (string, error)) *builder {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	return &builder{
		p: &Policy{
			disabledModes: map[string]*Rule{},
			toolDeny:      map[string][]toolRule{},
			toolAsk:       map[string][]toolRule{},
			toolAllow:     map[string][]toolRule{},
			lookPath:      lookPath,
		},
		layers: map[string]*allowlist{},
	}
}

// fileParse is the state of parsing one file.
type fileParse struct {
	b      *builder
	src    *Source
	p      *parser
	errs   []error
	contri []string
}

func (f *fileParse) rule(n *node) *Rule {
	l, c := f.p.pos(n.off)
	return &Rule{File: f.src.Path, Pointer: n.ptr, Line: l, Col: c, Text: f.text(n), From: f.src.From}
}

// text is n as compact JSON, bounded for one line.
func (f *fileParse) text(n *node) string {
	end := f.end(n)
	var buf bytes.Buffer
	if err := json.Compact(&buf, f.p.data[n.off:end]); err != nil {
		buf.Reset()
		buf.Write(f.p.data[n.off:end]) // JSONC comments inside: show it as written
	}
	s := buf.String()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// end finds where n's text ends by parsing again from its start (only for rule texts).
func (f *fileParse) end(n *node) int {
	q := &parser{file: f.p.file, data: f.p.data, i: n.off, lines: f.p.lines}
	if _, err := q.value(n.ptr, 0); err != nil {
		return len(f.p.data)
	}
	return q.i
}

func (f *fileParse) errf(n *node, format string, args ...any) {
	e := f.p.errAt(n.off, format, args...)
	f.errs = append(f.errs, e)
}

// want reports whether n has the kind; if not, it records an error naming n (by its pointer,
// else by name) and what it must be.
func (f *fileParse) want(n *node, kind byte, name, what string) bool {
	if n.kind != kind {
		if n.ptr != "" {
			name = ptrName(n.ptr)
		}
		f.errf(n, "%s must be %s, not %s", name, what, n.kindName())
		return false
	}
	return true
}

func ptrName(ptr string) string { return (&Rule{Pointer: ptr}).Key() }

func (f *fileParse) contributed(format string, args ...any) {
	f.contri = append(f.contri, fmt.Sprintf(format, args...))
}

func (f *fileParse) warn(format string, args ...any) {
	f.b.p.warnings = append(f.b.p.warnings, fmt.Sprintf(format, args...))
}
