package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
)

// Kinds of policy file, by what they hold.
const (
	KindSettings = "settings" // managed-settings.json and its drop-ins
	KindMCP      = "mcp"      // managed-mcp.json
	KindVSCode   = "vscode"   // VS Code's policy.json
)

// Load reads every policy source of opts.Paths and merges them (design section 6.3). It never
// fails: a source that exists but cannot be read, parsed or trusted makes the Policy broken
// (Broken), and a broken Policy blocks every MCP server and refuses every MCP call.
func Load(opts Options) *Policy {
	b := newBuilder(opts.LookPath)
	ps := opts.Paths
	if ps.Dir != "" {
		b.readDir(ps.Dir, FromSwitchboard, false)
	}
	if ps.ManagedPrefs != "" {
		b.readPlist(filepath.Join(ps.ManagedPrefs, "dev.switchboard.plist"), FromSwitchboard, false, KindSettings)
	}
	if ps.Registry {
		b.readRegistry(FromSwitchboard)
	}
	if b.p.inheritOffRule == nil {
		if ps.ClaudeCodeDir != "" {
			b.readDir(ps.ClaudeCodeDir, FromClaudeCode, true)
		}
		if ps.ManagedPrefs != "" {
			b.readPlist(filepath.Join(ps.ManagedPrefs, "com.anthropic.claudecode.plist"), FromClaudeCode, true, KindSettings)
			b.readPlist(filepath.Join(ps.ManagedPrefs, "com.microsoft.VSCode.plist"), FromVSCode, true, KindVSCode)
		}
		if ps.Registry {
			b.readRegistry(FromClaudeCode)
			b.readRegistry(FromVSCode)
		}
		for _, f := range ps.Copilot {
			b.readFile(f, FromCopilot, true, KindSettings)
		}
		if ps.VSCodePolicy != "" {
			b.readFile(ps.VSCodePolicy, FromVSCode, true, KindVSCode)
		}
	}
	return b.finish()
}

// A MemSource is a policy file given as bytes, for tests and for `switchboard policy` on a file
// not yet deployed. Its trust is not checked.
type MemSource struct {
	Path string
	From string // FromSwitchboard unless set
	Kind string // KindSettings unless set
	Data []byte
}

// FromSources merges in-memory sources exactly as Load merges files. Imports (From other than
// Switchboard) are restrict-only; inheritPolicies: false in a Switchboard source drops them.
func FromSources(lookPath func(string) (string, error), srcs ...MemSource) *Policy {
	b := newBuilder(lookPath)
	var later []MemSource
	for _, s := range srcs {
		if s.From == "" {
			s.From = FromSwitchboard
		}
		if s.Kind == "" {
			s.Kind = KindSettings
		}
		if s.From != FromSwitchboard {
			later = append(later, s)
			continue
		}
		b.parse(&Source{Path: s.Path, From: s.From, Owner: -1}, s.Data, s.Kind)
	}
	if b.p.inheritOffRule == nil {
		for _, s := range later {
			b.parse(&Source{Path: s.Path, From: s.From, Import: true, Owner: -1}, s.Data, s.Kind)
		}
	}
	return b.finish()
}

func (b *builder) readDir(dir, from string, imp bool) {
	b.readFile(filepath.Join(dir, SettingsFile), from, imp, KindSettings)
	files, err := dropIns(filepath.Join(dir, DropInDir))
	if err != nil {
		b.brokenSource(&Source{Path: filepath.Join(dir, DropInDir), From: from, Import: imp}, err)
	}
	for _, f := range files {
		b.readFile(f, from, imp, KindSettings)
	}
	b.readFile(filepath.Join(dir, MCPFile), from, imp, KindMCP)
}

func (b *builder) readFile(path, from string, imp bool, kind string) {
	data, info, exists, err := readTrusted(path)
	if !exists {
		return
	}
	src := &Source{Path: path, From: from, Import: imp, Owner: info.Owner, OwnerSID: info.OwnerSID, Mode: info.Mode, Digest: info.Digest}
	if err != nil {
		b.brokenSource(src, err)
		return
	}
	b.parse(src, data, kind)
}

// readPlist reads a managed preferences file: for KindSettings the JSON string under the key
// "Settings" (or, without that key, the dictionary itself as the settings object); for
// KindVSCode the dictionary of policies.
func (b *builder) readPlist(path, from string, imp bool, kind string) {
	data, info, exists, err := readTrusted(path)
	if !exists {
		return
	}
	src := &Source{Path: path, From: from, Import: imp, Owner: info.Owner, OwnerSID: info.OwnerSID, Mode: info.Mode, Digest: info.Digest}
	if err != nil {
		b.brokenSource(src, err)
		return
	}
	js, err := plistJSON(data)
	if err != nil {
		b.brokenSource(src, &FileError{File: path, Msg: err.Error()})
		return
	}
	b.parse(src, settingsOf(js, kind), kind)
}

// settingsOf is the settings JSON inside a managed preferences or registry dictionary.
func settingsOf(js []byte, kind string) []byte {
	if kind != KindSettings {
		return js
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(js, &m) == nil {
		var s string
		if raw, ok := m["Settings"]; ok && json.Unmarshal(raw, &s) == nil {
			return []byte(s)
		}
	}
	return js
}

func (b *builder) brokenSource(src *Source, err error) {
	src.Err = err.Error()
	b.p.broken = append(b.p.broken, err)
	b.p.sources = append(b.p.sources, *src)
	fmt.Fprintf(&b.digests, "%s\x00broken\x00%s\n", src.Path, err)
}

func (b *builder) parse(src *Source, data []byte, kind string) {
	if src.Digest == "" {
		sum := sha256.Sum256(data)
		src.Digest = hex.EncodeToString(sum[:])
	}
	fmt.Fprintf(&b.digests, "%s\x00%s\x00%d\x00%s\x00%o\n", src.Path, src.Digest, src.Owner, src.OwnerSID, src.Mode)
	root, p, err := parseJSONC(src.Path, data)
	if err != nil {
		b.brokenSource(src, err)
		return
	}
	f := &fileParse{b: b, src: src, p: p}
	switch kind {
	case KindMCP:
		f.managedMCP(root)
	case KindVSCode:
		f.vscode(root)
	default:
		f.settings(root)
	}
	if len(f.errs) > 0 {
		// One wrong value makes the whole file broken: half a policy is not what the admin wrote.
		src.Err = f.errs[0].Error()
		b.p.broken = append(b.p.broken, f.errs...)
	}
	src.Contributed = f.contri
	b.p.sources = append(b.p.sources, *src)
}

func (b *builder) finish() *Policy {
	p := b.p
	for _, from := range []string{FromSwitchboard, FromClaudeCode, FromCopilot, FromVSCode} {
		if al := b.layers[from]; al != nil {
			p.allowlists = append(p.allowlists, *al)
		}
	}
	if len(p.exclusive) > 0 {
		first := p.exclusive[0]
		for _, name := range sortedKeys(first.servers) {
			ms := first.servers[name]
			ok := true
			for _, other := range p.exclusive[1:] {
				if o, in := other.servers[name]; !in || !sameJSON(o.Config, ms.Config) {
					ok = false
					p.warnings = append(p.warnings, fmt.Sprintf("%s: server %q is not started: %s does not list it the same way", ms.Rule.Loc(), name, other.rule.File))
				}
			}
			if ok {
				p.managed = append(p.managed, ms)
			}
		}
	}
	if p.managedOnly != nil && len(p.allowlists) == 0 && len(p.exclusive) == 0 {
		p.warnings = append(p.warnings, fmt.Sprintf("%s: allowManagedMcpServersOnly without a managed allowedMcpServers: no server may start", p.managedOnly.Loc()))
	}
	sum := sha256.Sum256(b.digests.Bytes())
	p.digest = hex.EncodeToString(sum[:])
	return p
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}
