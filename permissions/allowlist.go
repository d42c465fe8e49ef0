package permissions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// InputError is bad caller input: an invalid prefix or entry. Nothing was written. The host maps
// it to JSON-RPC InvalidParams (-32602), the CLI to exit code 2.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// ParseError is a malformed allowlist file. While a file has one, it grants nothing and is never
// overwritten.
type ParseError struct {
	File string
	Line int // 1-based
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// MaxServerNameLen is the longest MCP server name (mirrors mcpbridge/config.MaxServerNameLen).
const MaxServerNameLen = 32

// ValidServerName reports whether name is a valid MCP server name (PROTOCOL.md section 2):
// ^[A-Za-z0-9][A-Za-z0-9_-]*$, at most 32 characters, no "__" and no trailing '_', so that the
// first "__" after "mcp__" in a tool name is always the separator. It mirrors
// mcpbridge/config.ValidServerName, which this leaf package may not import.
func ValidServerName(name string) error {
	if name == "" {
		return errors.New("empty server name")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isNameChar(c) || (i == 0 && (c == '_' || c == '-')) {
			return fmt.Errorf("server name %q must start with a letter or digit and contain only letters, digits, '_' and '-'", name)
		}
	}
	switch {
	case len(name) > MaxServerNameLen:
		return fmt.Errorf("server name %q is longer than %d characters", name, MaxServerNameLen)
	case strings.Contains(name, "__"):
		return fmt.Errorf("server name %q must not contain \"__\" (it separates server and tool in mcp__<server>__<tool>)", name)
	case name[len(name)-1] == '_':
		return fmt.Errorf("server name %q must not end in '_' (mcp__%s__<tool> would read as another server's tool)", name, name)
	}
	return nil
}

// splitToolName splits an MCP tool name mcp__<server>__<tool> at the first "__" after "mcp__".
// ok is false for a name without the "mcp__" prefix (a built-in name); valid is false when the
// server part is not a valid server name or the tool part is empty or starts with '_': no
// registered name has that shape (mcpbridge.ParseToolName refuses it too).
func splitToolName(name string) (server, tool string, isMCP, valid bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false, false
	}
	server, tool, ok = strings.Cut(rest, "__")
	valid = ok && tool != "" && tool[0] != '_' && ValidServerName(server) == nil
	return server, tool, true, valid
}

// ValidPrefix checks that prefix is "mcp__<valid server name>__". The error is an *InputError.
func ValidPrefix(prefix string) error {
	name, ok := strings.CutPrefix(prefix, "mcp__")
	if ok {
		name, ok = strings.CutSuffix(name, "__")
	}
	if !ok {
		return &InputError{fmt.Sprintf("prefix %q must have the form mcp__<server>__", prefix)}
	}
	if err := ValidServerName(name); err != nil {
		return &InputError{fmt.Sprintf("prefix %q: %v", prefix, err)}
	}
	return nil
}

// ServerPrefix returns the allowlist prefix of an MCP server: "mcp__<server>__".
func ServerPrefix(server string) string { return "mcp__" + server + "__" }

func isNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// An entry is one parsed allowlist entry. Server is "" for a built-in tool name. For an MCP entry,
// Tool is the exact tool part, or with Prefix the tool-name prefix ("" = the whole server).
type entry struct {
	Server, Tool string
	Prefix       bool
}

// parseEntry parses one allowlist entry. The forms are: a built-in tool name (edit_file); an MCP
// tool name mcp__<server>__<tool>; mcp__<server>__* (every tool of one server); and
// mcp__<server>__<tool prefix>* (the tools of one server whose names start with the prefix).
// A "*" anywhere else, or one that does not stay within one server (mcp__gith*, mcp__*), is an
// error: matching compares the parsed server exactly, never a raw string prefix.
func parseEntry(e string) (entry, error) {
	name, star := strings.CutSuffix(e, "*")
	if name == "" {
		if e == "" {
			return entry{}, errors.New("empty entry")
		}
		return entry{}, errors.New(`a bare "*" is not allowed (use mode always-allow)`)
	}
	for i := 0; i < len(name); i++ {
		if !isNameChar(name[i]) {
			if name[i] == '*' {
				return entry{}, fmt.Errorf("entry %q: \"*\" is only allowed at the end", e)
			}
			return entry{}, fmt.Errorf("entry %q: invalid character %q (allowed: A-Z a-z 0-9 _ - and a trailing *)", e, rune(name[i]))
		}
	}
	server, tool, isMCP, valid := splitToolName(name)
	switch {
	case !isMCP && star:
		return entry{}, fmt.Errorf("entry %q: \"*\" must follow mcp__<server>__ (every tool of one server) or mcp__<server>__<tool prefix>", e)
	case !isMCP:
		return entry{Tool: name}, nil
	case star && tool == "" && strings.HasSuffix(name, "__") && ValidServerName(server) == nil:
		return entry{Server: server, Prefix: true}, nil // mcp__<server>__*
	case !valid:
		return entry{}, entryError(e, name, star)
	}
	return entry{Server: server, Tool: tool, Prefix: star}, nil
}

// entryError says why an entry name (e without its "*") starting with "mcp__" names no one
// server's tool.
func entryError(e, name string, star bool) error {
	server, tool, sep := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
	switch {
	case !sep && star:
		return fmt.Errorf("entry %q: \"*\" must follow mcp__<server>__ (every tool of one server) or mcp__<server>__<tool prefix>; it cannot span servers", e)
	case !sep:
		return fmt.Errorf("entry %q is not a tool name mcp__<server>__<tool>", e)
	case ValidServerName(server) != nil:
		return fmt.Errorf("entry %q: %v", e, ValidServerName(server))
	case tool == "":
		return fmt.Errorf("entry %q has no tool after mcp__%s__ (mcp__%s__* grants every tool of the server)", e, server, server)
	}
	return fmt.Errorf("entry %q: the tool part must not start with '_' (no registered tool name has one; it reads as server %q, which the entry may not mean)", e, server)
}

// ValidEntry checks one allowlist entry (see parseEntry for the forms).
func ValidEntry(e string) error {
	_, err := parseEntry(e)
	return err
}

// line is one line of the allowlist file. Exactly one of comment or entry is set for a
// non-blank line. Text is stored trimmed of surrounding white space.
type line struct {
	Comment string // including the leading "#"
	Entry   string
}

// parseAllowlist parses file content. file names the file in errors.
func parseAllowlist(file string, data []byte) ([]line, error) {
	if len(data) == 0 {
		return nil, nil
	}
	s := string(data)
	s = strings.TrimSuffix(s, "\n")
	var lines []line
	for i, raw := range strings.Split(s, "\n") {
		t := strings.TrimSpace(raw)
		switch {
		case t == "":
			lines = append(lines, line{})
		case t[0] == '#':
			lines = append(lines, line{Comment: t})
		default:
			if err := ValidEntry(t); err != nil {
				return nil, &ParseError{File: file, Line: i + 1, Msg: err.Error()}
			}
			lines = append(lines, line{Entry: t})
		}
	}
	return lines, nil
}

// formatAllowlist is the inverse of parseAllowlist: one line each, "\n" terminated.
func formatAllowlist(lines []line) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		if l.Comment != "" {
			b.WriteString(l.Comment)
		} else {
			b.WriteString(l.Entry)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// alState is an immutable snapshot of the allowlist; readers load it without locks.
type alState struct {
	lines   []line
	entries []string
	exact   map[string]struct{}     // built-in and exact MCP tool names
	servers map[string]*serverGrant // MCP server -> its prefix entries
	err     error
}

// serverGrant holds one server's prefix entries (tool prefix "" = the whole server).
type serverGrant struct {
	prefixes map[string]prefixGrant // tool prefix -> entry
	lens     []int                  // distinct tool-prefix lengths, longest first
}

type prefixGrant struct {
	entry string
	desc  string // what it covers, for the decision's reason (describeEntry)
}

func newState(lines []line, err error) *alState {
	s := &alState{err: err}
	if err != nil {
		return s // a broken file grants nothing
	}
	s.lines = lines
	s.exact = make(map[string]struct{})
	s.servers = make(map[string]*serverGrant)
	for _, l := range lines {
		if l.Entry == "" {
			continue
		}
		s.entries = append(s.entries, l.Entry)
		e, err := parseEntry(l.Entry)
		switch {
		case err != nil: // not from parseAllowlist (an in-memory edit); cannot happen, grant nothing
			continue
		case !e.Prefix:
			s.exact[l.Entry] = struct{}{}
			continue
		}
		g := s.servers[e.Server]
		if g == nil {
			g = &serverGrant{prefixes: map[string]prefixGrant{}}
			s.servers[e.Server] = g
		}
		if _, dup := g.prefixes[e.Tool]; !dup {
			g.prefixes[e.Tool] = prefixGrant{l.Entry, describeEntry(l.Entry)}
			g.lens = append(g.lens, len(e.Tool))
		}
	}
	for _, g := range s.servers {
		slices.Sort(g.lens)
		g.lens = slices.Compact(g.lens)
		slices.Reverse(g.lens)
	}
	return s
}

// Allowlist is the tool allowlist file: tools (or tool-name prefixes) that run without asking.
// Make one with OpenAllowlist. It is safe for concurrent use. Match reads an immutable snapshot; writers (Replace, Add) are
// serialised within the process by a mutex and across processes by a flock on "<path>.lock", and
// re-read the file under the lock before changing it.
type Allowlist struct {
	path     string
	st       atomic.Pointer[alState]
	wmu      sync.Mutex    // serialises writers in this process
	debounce time.Duration // Watch debounce
}

// OpenAllowlist loads the allowlist at path. A missing file is an empty list. A malformed or
// unreadable file is not an error here: the problem is kept in Err() and the list grants nothing
// until the file is fixed (and reloaded). An empty path gives an in-memory list that is never
// saved.
func OpenAllowlist(path string) (*Allowlist, error) {
	a := &Allowlist{path: path, debounce: 100 * time.Millisecond}
	a.st.Store(newState(nil, nil))
	if path != "" {
		a.Reload()
	}
	return a, nil
}

// Path is the file the list is read from and written to ("" for an in-memory list).
func (a *Allowlist) Path() string { return a.path }

// Entries returns the entries in file order (nil while the file is malformed).
func (a *Allowlist) Entries() []string { return slices.Clone(a.state().entries) }

// hasExact reports whether tool is an exact entry (O(1): it runs on a call's way).
func (a *Allowlist) hasExact(tool string) bool {
	s := a.state()
	if s.err != nil {
		return false
	}
	_, ok := s.exact[tool]
	return ok
}

// Err is the current problem with the file (a *ParseError naming file:line, or a read error), nil
// when the file is fine or missing.
func (a *Allowlist) Err() error { return a.state().err }

// Match reports the entry that allows tool: the exact entry first, then the longest prefix entry
// of the tool's own server (the server parsed from mcp__<server>__<tool>). A malformed file
// matches nothing.
func (a *Allowlist) Match(tool string) (entry string, ok bool) {
	return a.state().match(tool)
}

// state is the current snapshot; an Allowlist not made by OpenAllowlist is empty.
func (a *Allowlist) state() *alState {
	if s := a.st.Load(); s != nil {
		return s
	}
	return &alState{}
}

func (s *alState) match(tool string) (entry string, ok bool) {
	s.each(tool, func(e, _ string) bool {
		entry, ok = e, true
		return false
	})
	return entry, ok
}

// each calls yield with every entry that allows tool and what the entry covers, best first (the
// exact entry, then the prefix entries of the tool's server, longest first), until yield returns
// false. A prefix entry applies only to tools whose parsed server equals the entry's server.
func (s *alState) each(tool string, yield func(entry, desc string) bool) {
	if s.err != nil {
		return
	}
	if _, ok := s.exact[tool]; ok {
		if !yield(tool, "") {
			return
		}
	}
	server, t, ok := cutToolName(tool)
	if !ok {
		return
	}
	g := s.servers[server] // only valid server names are keys
	if g == nil {
		return
	}
	for _, n := range g.lens {
		if n <= len(t) {
			if p, ok := g.prefixes[t[:n]]; ok && !yield(p.entry, p.desc) {
				return
			}
		}
	}
}

// cutToolName is the hot-path split of mcp__<server>__<tool> at the first "__": the same split
// as splitToolName without checking the server name (callers compare it with a valid one).
func cutToolName(name string) (server, tool string, ok bool) {
	if len(name) < 5 || name[:5] != "mcp__" {
		return "", "", false
	}
	server, tool, ok = strings.Cut(name[5:], "__")
	return server, tool, ok && tool != "" && tool[0] != '_'
}

// Reload re-reads the file. It returns the file's problem (also kept in Err()).
//
// A write of this process (modify) may land between the read and the store; the read is then
// older than the state the write stored, and storing it would bring back what the user just
// changed (a revoked grant allowed again until the next event). So the state is swapped only if
// nothing was stored since the read began, and read again otherwise.
func (a *Allowlist) Reload() error {
	if a.path == "" {
		return nil
	}
	for {
		cur := a.st.Load()
		lines, err := a.read()
		if testHookReloadRead != nil {
			testHookReloadRead()
		}
		if a.st.CompareAndSwap(cur, newState(lines, err)) {
			return err
		}
	}
}

// testHookReloadRead, when set by a test, runs in Reload between reading the file and storing it.
var testHookReloadRead func()

func (a *Allowlist) read() ([]line, error) {
	data, err := os.ReadFile(a.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read allowlist: %w", err)
	}
	return parseAllowlist(a.path, data)
}

// modify runs edit on the current lines under both locks, after re-reading the file, and writes
// the result atomically when it changed. A malformed file is never written.
func (a *Allowlist) modify(edit func([]line) []line) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	if a.path == "" {
		a.st.Store(newState(edit(slices.Clone(a.state().lines)), nil))
		return nil
	}
	unlock, err := lockPath(a.path)
	if err != nil {
		return err
	}
	defer unlock()
	lines, err := a.read()
	if err != nil {
		a.st.Store(newState(nil, err))
		return fmt.Errorf("not changing the allowlist: %w", err)
	}
	old := formatAllowlist(lines)
	lines = edit(slices.Clone(lines))
	data := formatAllowlist(lines)
	if !bytes.Equal(old, data) {
		if err := writeAtomic(a.path, data); err != nil {
			a.st.Store(newState(a.read()))
			return fmt.Errorf("write allowlist: %w", err)
		}
	}
	a.st.Store(newState(lines, nil))
	return nil
}

// Replace sets the entries of one server (PROTOCOL.md section 3). prefix is "mcp__<server>__";
// every stored entry whose parsed server is that server is removed and entries are added; entries
// of other servers (even ones whose names start with the same characters), built-in entries,
// comments and blank lines are untouched. Every entry must be an entry of that server. An entry
// prefix+"*" collapses the rest (only it is stored). An empty list revokes every grant of the
// server. New entries take the place of the first removed one (or go at the end), in the given
// order without duplicates. Bad input is an *InputError and nothing is written. It returns the
// whole list after the change.
func (a *Allowlist) Replace(prefix string, entries []string) ([]string, error) {
	if err := ValidPrefix(prefix); err != nil {
		return nil, err
	}
	server := strings.TrimSuffix(strings.TrimPrefix(prefix, "mcp__"), "__")
	var add []string
	for _, e := range entries {
		e = strings.TrimSpace(e)
		pe, err := parseEntry(e)
		if err != nil {
			return nil, &InputError{err.Error()}
		}
		if pe.Server != server {
			return nil, &InputError{fmt.Sprintf("entry %q is not an entry of server %q (prefix %q)", e, server, prefix)}
		}
		if !slices.Contains(add, e) {
			add = append(add, e)
		}
	}
	if slices.Contains(add, prefix+"*") { // checked every entry first: a bad one writes nothing
		add = []string{prefix + "*"}
	}
	err := a.modify(func(lines []line) []line { return replaceLines(lines, server, add) })
	if err != nil {
		return nil, err
	}
	return a.Entries(), nil
}

func replaceLines(lines []line, server string, add []string) []line {
	out := make([]line, 0, len(lines)+len(add))
	at := -1
	for _, l := range lines {
		if l.Entry != "" && entryServer(l.Entry) == server {
			if at < 0 {
				at = len(out)
			}
			continue
		}
		out = append(out, l)
	}
	if at < 0 {
		at = len(out)
	}
	ins := make([]line, len(add))
	for i, e := range add {
		ins[i] = line{Entry: e}
	}
	return slices.Insert(out, at, ins...)
}

// entryServer is the MCP server an entry grants tools of ("" for a built-in or a bad entry).
func entryServer(e string) string {
	pe, err := parseEntry(e)
	if err != nil {
		return ""
	}
	return pe.Server
}

// Add adds one entry (the gate's "always" and "server" answers) with the same locked, re-read,
// atomic write as Replace. A server grant "mcp__<server>__*" is Replace(prefix, [prefix*]): it
// collapses that server's exact entries. Another entry is appended unless already present (or,
// for a tool name, already granted by a prefix entry).
func (a *Allowlist) Add(entry string) error { return a.add(entry, false) }

// add is Add; with literal, an exact entry is written even when a prefix entry covers it (a grant
// for a workspace definition is recorded per entry, and the prefix entry may not count for it).
func (a *Allowlist) add(entry string, literal bool) error {
	entry = strings.TrimSpace(entry)
	if err := ValidEntry(entry); err != nil {
		return &InputError{err.Error()}
	}
	if p, ok := strings.CutSuffix(entry, "*"); ok && ValidPrefix(p) == nil {
		_, err := a.Replace(p, []string{entry})
		return err
	}
	return a.modify(func(lines []line) []line {
		for _, l := range lines {
			if l.Entry == entry {
				return lines
			}
		}
		if _, covered := newState(lines, nil).match(entry); covered && !literal && !strings.HasSuffix(entry, "*") {
			return lines // already granted by a prefix entry
		}
		return append(lines, line{Entry: entry})
	})
}
