package mcpbridge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Defaults for the per-server timeouts.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultCallTimeout    = 60 * time.Second
)

// SourceEditor is the Source of servers handed in by the editor (initializationOptions.servers).
const SourceEditor = "editor settings"

// workspaceFiles are the per-folder config files, in reading order.
var workspaceFiles = []string{".vscode/mcp.json", ".mcp.json", ".switchboard/mcp.json"}

// ConfigSources says where LoadConfig reads servers from (PROTOCOL.md section 2). Later sources
// override earlier ones server by server: user file, workspace files (folders in order, files in
// the order of workspaceFiles), ExtraFiles in order, then EditorServers.
type ConfigSources struct {
	UserFile         string                      // "" = $XDG_CONFIG_HOME/switchboard/mcp.json (~/.config/...)
	WorkspaceFolders []string                    // each: .vscode/mcp.json, .mcp.json, .switchboard/mcp.json
	ExtraFiles       []string                    // initializationOptions.configFiles / --config
	EditorServers    map[string]json.RawMessage  // initializationOptions.servers (trusted, Source "editor settings")
	Getenv           func(string) (string, bool) // nil = os.LookupEnv
}

// ConfigError is a problem with one file, or one server entry and key in it.
type ConfigError struct{ File, Server, Key, Msg string }

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Server != "" {
		fmt.Fprintf(&b, ": server %q", e.Server)
	}
	if e.Key != "" {
		b.WriteString(": " + e.Key)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// DefaultUserFile is $XDG_CONFIG_HOME/switchboard/mcp.json, or ~/.config/switchboard/mcp.json.
func DefaultUserFile(getenv func(string) (string, bool)) string {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	if dir, ok := getenv("XDG_CONFIG_HOME"); ok && filepath.IsAbs(dir) {
		return filepath.Join(dir, "switchboard", "mcp.json")
	}
	home, ok := getenv("HOME")
	if !ok || home == "" {
		home, _ = os.UserHomeDir() // ignore error: "" gives a relative path that will not exist
	}
	return filepath.Join(home, ".config", "switchboard", "mcp.json")
}

// LoadConfig reads every source and returns the merged servers sorted by name. A missing file
// is not an error. A file that is not valid JSON, a bad entry or an unknown key is reported as a
// *ConfigError and skipped (for an entry: that one server; an earlier valid definition of the
// same server is kept); everything else is still returned.
func LoadConfig(src ConfigSources) ([]ServerConfig, []error) {
	l := loader{getenv: src.Getenv, merged: map[string]ServerConfig{}, trustedFP: map[string]string{}}
	if l.getenv == nil {
		l.getenv = os.LookupEnv
	}
	user := src.UserFile
	if user == "" {
		user = DefaultUserFile(l.getenv)
	}
	l.loadFile(user, "", false)
	for _, folder := range src.WorkspaceFolders {
		for _, f := range workspaceFiles {
			l.loadFile(filepath.Join(folder, filepath.FromSlash(f)), folder, true)
		}
	}
	for _, f := range src.ExtraFiles {
		l.loadFile(f, "", false)
	}
	if len(src.EditorServers) > 0 {
		names := make([]string, 0, len(src.EditorServers))
		for n := range src.EditorServers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			l.addEntry(SourceEditor, "", n, src.EditorServers[n], false, nil)
		}
	}
	out := make([]ServerConfig, 0, len(l.merged))
	for _, c := range l.merged {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, l.errs
}

type loader struct {
	getenv func(string) (string, bool)
	merged map[string]ServerConfig
	// trustedFP is the fingerprint of each server's latest definition from a trusted
	// (non-workspace) source: a workspace entry identical to it needs no trust.
	trustedFP map[string]string
	errs      []error
}

func (l *loader) fail(file, server, key, format string, args ...any) {
	l.errs = append(l.errs, &ConfigError{File: file, Server: server, Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (l *loader) loadFile(path, workspace string, isWorkspace bool) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		l.fail(path, "", "", "%v", err)
		return
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		l.fail(path, "", "", "%s", jsonErrorAt(data, err))
		return
	}
	if top == nil {
		l.fail(path, "", "", "top level must be a JSON object")
		return
	}
	found := false
	for _, key := range []string{"mcpServers", "servers"} {
		raw, ok := top[key]
		if !ok {
			continue
		}
		found = true
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil || entries == nil {
			l.fail(path, "", key, "must be an object mapping server names to entries")
			continue
		}
		names := make([]string, 0, len(entries))
		for n := range entries {
			names = append(names, n)
		}
		// Keep the file's order so that a name defined twice resolves like the JSON (last wins).
		sort.Slice(names, func(i, j int) bool { return keyOffset(raw, names[i]) < keyOffset(raw, names[j]) })
		for _, n := range names {
			l.addEntry(path, workspace, n, entries[n], isWorkspace, data)
		}
	}
	if !found && len(top) > 0 {
		// Other top-level keys (VS Code's "inputs", ...) belong to other tools: not an error,
		// but a file without servers is probably a mistake worth reporting.
		l.fail(path, "", "", `no "mcpServers" or "servers" object`)
	}
}

// keyOffset is the position of "key" in an object's raw text (for stable ordering only).
func keyOffset(raw []byte, key string) int {
	q, _ := json.Marshal(key) // ignore error: strings always marshal
	if i := bytes.Index(raw, q); i >= 0 {
		return i
	}
	return len(raw)
}

// jsonErrorAt describes a JSON decoding error with line:col of the offending byte.
func jsonErrorAt(data []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return "invalid JSON: " + err.Error()
	}
	line, col := 1, 1
	for _, c := range data[:min(int(off), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("%d:%d: invalid JSON: %v", line, col, err)
}

// entryKeys are the accepted keys of a server entry.
var entryKeys = map[string]bool{
	"type": true, "command": true, "args": true, "env": true, "cwd": true, "url": true, "headers": true,
	"disabled": true, "startupTimeoutSeconds": true, "callTimeoutSeconds": true,
	"enabledTools": true, "disabledTools": true,
}

// addEntry parses one entry and, when valid, makes it the server's current definition.
func (l *loader) addEntry(file, workspace, name string, raw json.RawMessage, isWorkspace bool, _ []byte) {
	cfg, errs := l.parseEntry(file, workspace, name, raw)
	if len(errs) > 0 {
		l.errs = append(l.errs, errs...)
		return
	}
	cfg.Source = file
	fp := cfg.Fingerprint()
	if isWorkspace {
		cfg.WorkspaceOnly = l.trustedFP[name] != fp
	} else {
		l.trustedFP[name] = fp
	}
	l.merged[name] = cfg
}

func (l *loader) parseEntry(file, workspace, name string, raw json.RawMessage) (ServerConfig, []error) {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &ConfigError{File: file, Server: name, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	cfg := ServerConfig{Name: name, StartupTimeout: DefaultStartupTimeout, CallTimeout: DefaultCallTimeout}
	if err := ValidServerName(name); err != nil {
		bad("", "%v", err)
		return cfg, errs
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		bad("", "entry must be a JSON object")
		return cfg, errs
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	exp := expander{getenv: l.getenv, workspace: workspace}
	str := func(key string, dst *string) {
		if v, ok := fields[key]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				bad(key, "must be a string")
			}
		}
	}
	strs := func(key string, dst *[]string) {
		if v, ok := fields[key]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				bad(key, "must be an array of strings")
			}
		}
	}
	strMap := func(key string, dst *map[string]string) {
		if v, ok := fields[key]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				bad(key, "must be an object of strings")
			}
		}
	}
	seconds := func(key string, dst *time.Duration) {
		v, ok := fields[key]
		if !ok {
			return
		}
		var f float64
		if err := json.Unmarshal(v, &f); err != nil || f <= 0 || f > 24*3600 {
			bad(key, "must be a number of seconds greater than 0")
			return
		}
		*dst = time.Duration(f * float64(time.Second))
	}
	for _, k := range keys {
		if !entryKeys[k] {
			bad(k, "unknown key")
		}
	}
	var typ string
	str("type", &typ)
	str("command", &cfg.Command)
	strs("args", &cfg.Args)
	strMap("env", &cfg.Env)
	str("cwd", &cfg.Cwd)
	str("url", &cfg.URL)
	strMap("headers", &cfg.Headers)
	if v, ok := fields["disabled"]; ok {
		if err := json.Unmarshal(v, &cfg.Disabled); err != nil {
			bad("disabled", "must be true or false")
		}
	}
	seconds("startupTimeoutSeconds", &cfg.StartupTimeout)
	seconds("callTimeoutSeconds", &cfg.CallTimeout)
	strs("enabledTools", &cfg.EnabledTools)
	strs("disabledTools", &cfg.DisabledTools)
	if len(errs) > 0 {
		return cfg, errs
	}

	// Expansion.
	x := func(key string, s *string) {
		v, err := exp.expand(*s)
		if err != nil {
			bad(key, "%v", err)
		}
		*s = v
	}
	x("command", &cfg.Command)
	for i := range cfg.Args {
		x("args", &cfg.Args[i])
	}
	for k, v := range cfg.Env {
		x("env."+k, &v)
		cfg.Env[k] = v
	}
	x("cwd", &cfg.Cwd)
	x("url", &cfg.URL)
	for k, v := range cfg.Headers {
		x("headers."+k, &v)
		cfg.Headers[k] = v
	}

	// Transport.
	switch typ {
	case "":
		switch {
		case cfg.Command != "" && cfg.URL != "":
			bad("type", `both "command" and "url" given: say which with "type"`)
		case cfg.Command != "":
			typ = TransportStdio
		case cfg.URL != "":
			typ = TransportHTTP
		default:
			bad("command", `one of "command" or "url" is required`)
		}
	case "stdio", "http", "sse":
	case "streamable-http", "streamableHttp", "streamable_http":
		typ = TransportHTTP
	default:
		bad("type", "must be stdio, http or sse, not %q", typ)
	}
	cfg.Transport = typ
	switch typ {
	case TransportStdio:
		if cfg.Command == "" {
			bad("command", "required for a stdio server")
		}
		if cfg.URL != "" {
			bad("url", "not used by a stdio server")
		}
		if len(cfg.Headers) > 0 {
			bad("headers", "not used by a stdio server")
		}
	case TransportHTTP, TransportSSE:
		if cfg.URL == "" {
			bad("url", "required for an %s server", typ)
		} else if u, err := url.Parse(cfg.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("url", "must be an http:// or https:// URL")
		}
		if cfg.Command != "" || len(cfg.Args) > 0 {
			bad("command", "not used by an %s server", typ)
		}
	}
	if cfg.Cwd != "" && !filepath.IsAbs(cfg.Cwd) {
		switch {
		case workspace != "":
			cfg.Cwd = filepath.Join(workspace, cfg.Cwd)
		case file != SourceEditor:
			cfg.Cwd = filepath.Join(filepath.Dir(file), cfg.Cwd)
		}
	}
	return cfg, errs
}

// expander expands ${VAR}, ${env:VAR}, ${VAR:-default} and, in workspace files, ${workspaceFolder}.
type expander struct {
	getenv    func(string) (string, bool)
	workspace string
}

var varRE = regexp.MustCompile(`\$\{([^}]*)\}`)

func (e expander) expand(s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var firstErr error
	out := varRE.ReplaceAllStringFunc(s, func(m string) string {
		ref := m[2 : len(m)-1]
		name, def, hasDef := strings.Cut(ref, ":-")
		if strings.HasPrefix(name, "env:") {
			name = strings.TrimPrefix(name, "env:")
		} else if name == "workspaceFolder" && e.workspace != "" {
			return e.workspace
		} else if strings.Contains(name, ":") {
			if firstErr == nil {
				firstErr = fmt.Errorf("unsupported variable %s", m)
			}
			return m
		}
		if v, ok := e.getenv(name); ok {
			return v
		}
		if hasDef {
			return def
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("environment variable %s is not set (in %s)", name, m)
		}
		return ""
	})
	return out, firstErr
}

// fingerprintView is what a fingerprint covers: everything that decides what runs and what it
// is given, not timeouts, tool filters or the disabled flag.
type fingerprintView struct {
	Name      string            `json:"name"`
	Transport string            `json:"type"`
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
}

// Fingerprint is the sha256 hex of the resolved config (name, transport, command, args, env,
// cwd, url, headers): trust decisions are remembered per fingerprint.
func (c ServerConfig) Fingerprint() string {
	b, _ := json.Marshal(fingerprintView{c.Name, c.Transport, c.Command, c.Args, c.Env, c.Cwd, c.URL, c.Headers}) // ignore error: plain types
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// identity covers every field: a change restarts the server.
func (c ServerConfig) identity() string {
	b, _ := json.Marshal(struct { // ignore error: plain types
		C  ServerConfig
		S  time.Duration
		T  time.Duration
		Sr string
		W  bool
	}{c, c.StartupTimeout, c.CallTimeout, c.Source, c.WorkspaceOnly})
	return string(b)
}

// Summary is a one-line description of what runs: "npx -y foo" or the URL.
func (c ServerConfig) Summary() string {
	if c.Transport != TransportStdio {
		return c.URL
	}
	parts := []string{quoteArg(c.Command)}
	for _, a := range c.Args {
		parts = append(parts, quoteArg(a))
	}
	return strings.Join(parts, " ")
}

func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\$`") {
		return s
	}
	return strconv.Quote(s)
}
