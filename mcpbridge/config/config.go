package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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

// ConfigSources says where LoadConfig reads servers from (PROTOCOL.md section 2). The user-level
// sources override each other server by server: user file, ExtraFiles in order, then
// EditorServers. Workspace files (folders in order, files in the order of workspaceFiles) override
// each other the same way, but never a server a user-level source defines: such a workspace entry
// is a *ConfigError and the user's definition stays (an entry identical to the user's is ignored).
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
	l := loader{getenv: src.Getenv, merged: map[string]ServerConfig{}, userDefined: map[string]string{}, folders: src.WorkspaceFolders}
	if l.getenv == nil {
		l.getenv = os.LookupEnv
	}
	user := src.UserFile
	if user == "" {
		user = DefaultUserFile(l.getenv)
	}
	l.loadFile(user, "", false)
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
	for _, folder := range src.WorkspaceFolders {
		for _, f := range workspaceFiles {
			l.loadFile(filepath.Join(folder, filepath.FromSlash(f)), folder, true)
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
	// userDefined maps each name a user-level source defines (validly or not) to that source:
	// a workspace file cannot take such a name over.
	userDefined map[string]string
	errs        []error
	inputs      map[string]Input // the "inputs" of the file being read (inputs.go)
	folders     []string         // the open workspace folders (vars.go: ${workspaceFolder})
	folderUsed  bool             // the entry being parsed took ${workspaceFolder} from folders
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
	data, err = standardizeJSONC(data) // JSONC (jsonc.go): offsets kept, so line:col stay right
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
	l.inputs = nil
	if raw, ok := top["inputs"]; ok {
		if l.inputs, err = ParseInputs(path, raw); err != nil {
			l.fail(path, "", "inputs", "%v", err)
		}
	}
	defer func() { l.inputs = nil }()
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
	"enabledTools": true, "disabledTools": true, "envFile": true, "oauth": true, "protocol": true,
	"sandbox": true, "shared": true, "registry": true,
	"dev": true, // VS Code's watch/debug settings for server authors: no meaning here
}

// addEntry parses one entry and, when valid, makes it the server's current definition.
func (l *loader) addEntry(file, workspace, name string, raw json.RawMessage, isWorkspace bool, _ []byte) {
	userFile, taken := l.userDefined[name]
	if !isWorkspace {
		l.userDefined[name] = file
	}
	cfg, errs := l.parseEntry(file, workspace, name, raw)
	if isWorkspace && taken {
		// A workspace file never replaces, disables or filters a user's server. An identical entry
		// changes nothing and is ignored.
		if u, ok := l.merged[name]; len(errs) == 0 && ok && u.Source == userFile && sameEffect(u, cfg) {
			return
		}
		l.fail(file, name, "", "defined in your user config %s too; rename it in this workspace file (your definition is used)", userFile)
		return
	}
	if len(errs) > 0 {
		l.errs = append(l.errs, errs...)
		return
	}
	cfg.Source = file
	if isWorkspace {
		cfg.Folder = canonicalFolder(workspace)
	}
	// A user-level definition that takes ${workspaceFolder} runs what the opened repository holds.
	cfg.WorkspaceOnly = isWorkspace || cfg.FromFolder != ""
	if cfg.WorkspaceOnly && cfg.OAuth != nil && cfg.OAuth.ClientSecret != "" && cfg.OAuth.Issuer == "" {
		// Without it, the first sign-in would send the secret to whatever authorization server the
		// server's metadata names, which the trust question could not show.
		l.fail(file, name, "oauth.issuer", "is needed with oauth.clientSecret in a workspace file: it names the only authorization server the secret may be sent to")
		return
	}
	l.narrowShared(file, &cfg)
	l.merged[name] = cfg
}

// canonicalFolder is dir absolute, with its symbolic links resolved (as it is when it can be):
// one folder, whichever way a window or a command names it (/tmp and /private/tmp on macOS, a
// relative --workspace), gives one fingerprint.
func canonicalFolder(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return filepath.Clean(dir)
}

// Values of ServerConfig.Shared.
const (
	SharedUser      = "user"
	SharedWorkspace = "workspace"
)

// narrowShared applies the sharing rules (design §3.1). The server still runs, with less
// sharing than asked, and one warning naming the entry says why.
//   - Only stdio servers are shared: an HTTP server's process is elsewhere anyway, and a session
//     per window keeps its questions attributable and its tokens in the window.
//   - A sandboxed server runs in the window, where its sandbox is applied.
//   - A server that runs what the repository holds is shared among windows of that folder set at
//     most, never with every window: an identical definition in another repository, trusted or
//     not there, must not reach this one's process.
func (l *loader) narrowShared(file string, cfg *ServerConfig) {
	switch {
	case cfg.Shared == "":
	case cfg.Transport != TransportStdio:
		l.fail(file, cfg.Name, "shared", "only stdio servers are shared; this %s server runs in each window", cfg.Transport)
		cfg.Shared = ""
	case cfg.Sandbox != nil:
		// The daemon starts its copies itself and confines none of them.
		l.fail(file, cfg.Name, "shared", "a sandboxed server is not shared yet; it runs, confined, in each window")
		cfg.Shared = ""
	case cfg.WorkspaceOnly && cfg.Shared == SharedUser:
		l.fail(file, cfg.Name, "shared", `a server defined by the workspace (or taking ${workspaceFolder}) is shared only among windows of the same folders ("workspace")`)
		cfg.Shared = SharedWorkspace
	}
}

// sameEffect: b runs the same program as a, with the same tools.
func sameEffect(a, b ServerConfig) bool {
	return a.Fingerprint() == b.Fingerprint() && a.Disabled == b.Disabled &&
		slices.Equal(a.EnabledTools, b.EnabledTools) && slices.Equal(a.DisabledTools, b.DisabledTools)
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
	l.folderUsed = false
	exp := expander{getenv: l.getenv, workspace: workspace, folders: l.folders, folderUsed: &l.folderUsed, declared: l.inputs}
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
	if v, ok := fields["oauth"]; ok {
		cfg.OAuth = parseOAuth(v, bad) // oauth_config.go
	}
	if v, ok := fields["sandbox"]; ok {
		p, err := sandbox.Parse(v)
		if err != nil {
			bad("sandbox", "%s", strings.TrimPrefix(err.Error(), "sandbox: "))
		}
		cfg.Sandbox = p
	}
	seconds("startupTimeoutSeconds", &cfg.StartupTimeout)
	seconds("callTimeoutSeconds", &cfg.CallTimeout)
	strs("enabledTools", &cfg.EnabledTools)
	strs("disabledTools", &cfg.DisabledTools)
	if v, ok := fields["shared"]; ok {
		var b bool
		var s string
		switch {
		case json.Unmarshal(v, &b) == nil:
			if b {
				cfg.Shared = SharedUser
			}
		case json.Unmarshal(v, &s) == nil && s == SharedWorkspace:
			cfg.Shared = SharedWorkspace
		default:
			bad("shared", `must be true, false or "workspace"`)
		}
	}
	if v, ok := fields["registry"]; ok {
		cfg.Registry = parseRegistryRef(v, bad) // registryref.go
	}
	str("protocol", &cfg.Protocol)
	if err := CheckProtocol(cfg.Protocol, typ); err != nil { // protocol.go
		bad("protocol", "%v", err)
	}
	// A key the child or the HTTP request would read differently from how a prompt shows it
	// ("NODE_OPTIONS=--require" sets NODE_OPTIONS) is refused, never shown.
	for _, k := range sortedKeys(cfg.Env) {
		if !validEnvKey(k) {
			bad("env "+strconv.Quote(k), "not a valid environment variable name (empty, or holds \"=\", NUL or a control character)")
		}
	}
	for _, k := range sortedKeys(cfg.Headers) {
		if !validHeaderName(k) {
			bad("headers "+strconv.Quote(k), "not a valid HTTP header name")
		}
	}
	if len(errs) > 0 {
		return cfg, errs
	}

	// Templates. ${workspaceFolder} is resolved now (it is no secret); references to the user's
	// environment stay as written until the server starts (ServerConfig.Resolve), so that nothing
	// built from the config (status, prompts, logs, check output) can hold their values. Here
	// they are only checked: supported, and set (or given a default).
	x := func(key string, s *string) {
		v, err := exp.expand(*s, false)
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
	if cfg.Sandbox != nil {
		for i := range cfg.Sandbox.Read {
			x("sandbox.read", &cfg.Sandbox.Read[i])
		}
		for i := range cfg.Sandbox.Write {
			x("sandbox.write", &cfg.Sandbox.Write[i])
		}
	}
	cfg.Inputs = usedInputs(cfg, l.inputs, bad) // inputs.go

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
	l.envFileEntry(file, workspace, fields, &cfg, bad) // vars.go
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
		if cfg.OAuth != nil {
			bad("oauth", "not used by a stdio server")
		}
		if cfg.Sandbox != nil {
			cfg.SandboxBase = workspace
			if cfg.SandboxBase == "" && file != SourceEditor {
				cfg.SandboxBase = filepath.Dir(file)
			}
		}
	case TransportHTTP, TransportSSE:
		if cfg.Sandbox != nil {
			bad("sandbox", "only a stdio server (a local process) runs in a sandbox")
		}
		if cfg.URL == "" {
			bad("url", "required for an %s server", typ)
		} else if !strings.HasPrefix(cfg.URL, "${") && !validURL(varRE.ReplaceAllString(cfg.URL, "x")) {
			// A url that starts with a reference is checked when it is resolved.
			bad("url", "must be an http:// or https:// URL")
		}
		if cfg.Command != "" || len(cfg.Args) > 0 {
			bad("command", "not used by an %s server", typ)
		}
	}
	if cfg.Cwd != "" && !filepath.IsAbs(cfg.Cwd) && !strings.HasPrefix(cfg.Cwd, "${") {
		base := ""
		switch {
		case workspace != "":
			base = workspace
		case file != SourceEditor:
			base = filepath.Dir(file)
		}
		switch {
		case strings.Contains(base, "${"):
			// Put in now, it would be expanded again when the server starts (workspaceFolder).
			bad("cwd", "is relative to the folder %s, whose path holds \"${\", which would be read as a variable when the server starts: rename the folder, or write an absolute cwd", base)
		case base != "":
			cfg.Cwd = filepath.Join(base, cfg.Cwd)
		}
	}
	if l.folderUsed {
		cfg.FromFolder = l.folders[0]
	}
	return cfg, errs
}

// validEnvKey: k is one variable name for every OS: not empty, no "=", no control character.
func validEnvKey(k string) bool {
	if k == "" || strings.Contains(k, "=") {
		return false
	}
	for _, r := range k {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// validHeaderName: k is an HTTP token (RFC 9110 section 5.6.2).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// expander expands ${VAR}, ${env:VAR}, ${VAR:-default} and ${workspaceFolder}.
type expander struct {
	getenv     func(string) (string, bool)
	workspace  string   // the folder of the workspace file being read ("" for a user-level source)
	folders    []string // the open workspace folders (${workspaceFolder} of a user-level source)
	folderUsed *bool    // set when ${workspaceFolder} of a user-level source was taken from folders
	// declared are the file's inputs while it is read: their ${input:ID} stay as written.
	declared map[string]Input
	// input reads an input's value when a definition is resolved (nil while a file is read).
	input func(id string) (string, bool)
}

var varRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// envRef is one reference to the user's environment in a template: "" when m is not one.
func envRef(m string) (name, def string, hasDef bool) {
	ref := m[2 : len(m)-1]
	name, def, hasDef = strings.Cut(ref, ":-")
	if strings.HasPrefix(name, "env:") {
		return strings.TrimPrefix(name, "env:"), def, hasDef
	}
	if isBuiltinVar(name) || strings.Contains(name, ":") {
		return "", "", false
	}
	return name, def, hasDef
}

// expand resolves ${workspaceFolder} and, when env is true, every reference to the environment;
// when env is false those stay as written and are only checked.
func (e expander) expand(s string, env bool) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var firstErr error
	out := varRE.ReplaceAllStringFunc(s, func(m string) string {
		name, def, hasDef := envRef(m)
		if name == "" {
			v, err := e.builtin(m) // vars.go: ${workspaceFolder}, ${userHome}, ${pathSeparator}, ${input:id}
			if err == nil {
				return v
			}
			if firstErr == nil {
				firstErr = err
			}
			return m
		}
		v, ok := e.getenv(name)
		switch {
		case !ok && !hasDef:
			if firstErr == nil {
				firstErr = fmt.Errorf("environment variable %s is not set (in %s)", name, m)
			}
			return ""
		case !env:
			return m
		case ok:
			return v
		}
		return def
	})
	return out, firstErr
}

// Resolve returns c with every reference to the environment expanded from getenv (nil =
// os.LookupEnv): the definition that runs. Its values must go nowhere but to the server; errors
// name variables, never values.
func (c ServerConfig) Resolve(getenv func(string) (string, bool)) (ServerConfig, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	exp := expander{getenv: getenv, input: func(id string) (string, bool) { return getenv(InputVar(c.inputKey(id))) }}
	var firstErr error
	x := func(s string) string {
		v, err := exp.expand(s, true)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	}
	r := c
	r.Command = x(c.Command)
	if c.Args != nil {
		r.Args = make([]string, len(c.Args))
		for i, a := range c.Args {
			r.Args[i] = x(a)
		}
	}
	r.Env = mapValues(c.Env, x)
	if env, err := c.withEnvFile(r.Env); err != nil && firstErr == nil { // vars.go
		firstErr = err
	} else {
		r.Env = env
	}
	r.Headers = mapValues(c.Headers, x)
	if c.OAuth != nil {
		o := *c.OAuth
		o.ClientSecret = x(o.ClientSecret)
		r.OAuth = &o
	}
	r.Cwd = x(c.Cwd)
	r.URL = x(c.URL)
	if firstErr == nil && c.Transport != TransportStdio && c.URL != "" && !validURL(r.URL) {
		firstErr = fmt.Errorf("url %s does not give an http:// or https:// URL", c.URL)
	}
	if firstErr != nil {
		return c, fmt.Errorf("mcpbridge: resolve %s: %w", c.Name, firstErr)
	}
	return r, nil
}

func mapValues(m map[string]string, f func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = f(v)
	}
	return out
}

// minSecret is the shortest value Redact hides. Shorter values (and their encoded forms) are
// left in the text on purpose: hiding every "abc" or "1234"-shorter run would shred ordinary text
// (paths, numbers, words) beyond use, and a 3-character secret is guessable anyway.
const minSecret = 4

// Redact replaces in s every value c's references read from the environment (getenv, nil =
// os.LookupEnv) with the reference itself (${env:NAME}): for errors and stderr a server or a
// library wrote with the resolved definition, before they reach the editor, a terminal or a log.
// Each value is hidden as written and in the forms libraries write it in: URL path and query
// escaping and full %-encoding (upper and lower hex), JSON string escaping (with and without
// HTML escapes) and Go's %q. Values shorter than minSecret are not hidden.
func (c ServerConfig) Redact(s string, getenv func(string) (string, bool)) string {
	if s == "" {
		return s
	}
	if getenv == nil {
		getenv = os.LookupEnv
	}
	var pairs [][2]string
	for _, r := range c.EnvRefs() {
		v, ok := getenv(r.Var)
		if !ok || len(v) < minSecret {
			continue
		}
		for _, f := range secretForms(v) {
			if strings.Contains(s, f) {
				pairs = append(pairs, [2]string{f, "${env:" + r.Var + "}"})
			}
		}
	}
	pairs = append(pairs, c.envFileRedactions(s)...)       // vars.go
	pairs = append(pairs, c.inputRedactions(s, getenv)...) // inputs.go
	if len(pairs) == 0 {
		return s
	}
	// Longer forms first: where two start at the same place, the whole one is replaced.
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i][0]) > len(pairs[j][0]) })
	flat := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		flat = append(flat, p[0], p[1])
	}
	return strings.NewReplacer(flat...).Replace(s)
}

var pctHex = regexp.MustCompile(`%[0-9A-F]{2}`)

// secretForms is v as written and as URL, JSON and Go quoting write it, without duplicates.
func secretForms(v string) []string {
	q := url.QueryEscape(v)
	forms := []string{v, url.PathEscape(v), q, strings.ReplaceAll(q, "+", "%20"), (&url.URL{Path: v}).EscapedPath()}
	for _, f := range forms[1:] {
		forms = append(forms, pctHex.ReplaceAllStringFunc(f, strings.ToLower))
	}
	j, _ := json.Marshal(v) // ignore error: a string
	forms = append(forms, string(j[1:len(j)-1]))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // ignore error: a string
	if t := bytes.TrimSpace(b.Bytes()); len(t) >= 2 {
		forms = append(forms, string(t[1:len(t)-1]))
	}
	gq := strconv.Quote(v)
	forms = append(forms, gq[1:len(gq)-1])
	slices.Sort(forms)
	return slices.Compact(forms)
}

// EnvRef is one reference to the user's environment in a definition: variable Var goes into
// Where ("command", "argument 2", "env KEY", "header NAME", "the url", "cwd").
type EnvRef struct{ Var, Where string }

// EnvRefs lists c's references to the environment, in the order command, args, cwd, url, env
// (by key), headers (by name).
func (c ServerConfig) EnvRefs() []EnvRef {
	var out []EnvRef
	// A string without "${" has no reference: it skips the regexp and the label (Redact runs this
	// for every logger a server's connection makes, several before its first call is answered).
	add := func(where func() string, s string) {
		if !strings.Contains(s, "${") {
			return
		}
		for _, m := range varRE.FindAllString(s, -1) {
			if name, _, _ := envRef(m); name != "" {
				out = append(out, EnvRef{Var: name, Where: where()})
			}
		}
	}
	label := func(s string) func() string { return func() string { return s } }
	add(label("the command"), c.Command)
	for i, a := range c.Args {
		add(func() string { return fmt.Sprintf("argument %d", i+1) }, a)
	}
	add(label("cwd"), c.Cwd)
	add(label("the url"), c.URL)
	for _, k := range sortedKeys(c.Env) {
		add(func() string { return "env " + k }, c.Env[k])
	}
	for _, k := range sortedKeys(c.Headers) {
		add(func() string { return "header " + k }, c.Headers[k])
	}
	if c.OAuth != nil {
		add(label("oauth.clientSecret"), c.OAuth.ClientSecret)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fingerprintView is what a fingerprint covers: everything that decides what runs, what it is
// given and which of its tools are offered; not timeouts. The tool filters and the disabled flag
// are left out when unset (nil and [] both mean every tool), so that a definition without them
// keeps the fingerprint it had before they were covered.
type fingerprintView struct {
	Name          string            `json:"name"`
	Transport     string            `json:"type"`
	Command       string            `json:"command"`
	Args          []string          `json:"args"`
	Env           map[string]string `json:"env"`
	Cwd           string            `json:"cwd"`
	URL           string            `json:"url"`
	Headers       map[string]string `json:"headers"`
	EnabledTools  []string          `json:"enabledTools,omitempty"`
	DisabledTools []string          `json:"disabledTools,omitempty"`
	Disabled      bool              `json:"disabled,omitempty"`
	EnvFile       string            `json:"envFile,omitempty"` // omitempty: fingerprints without one are unchanged
	EnvDigest     string            `json:"EnvFileDigest,omitempty"`
	OAuth         *OAuthSettings    `json:"oauth,omitempty"` // omitempty: as EnvFile
	// Sandbox is the profile's canonical form: a sandbox loosened (or dropped) asks again.
	Sandbox string `json:"sandbox,omitempty"` // omitempty: as EnvFile
	// Shared: turning sharing on asks for trust again (who else's windows reach the process
	// changes); omitempty: as EnvFile.
	Shared string `json:"shared,omitempty"`
	// Folder: a workspace file's entry is trusted in its folder only; omitempty: as EnvFile.
	Folder string `json:"folder,omitempty"`
}

func (c ServerConfig) fingerprintView() fingerprintView {
	sb := ""
	if c.Sandbox != nil {
		sb = c.Sandbox.Canonical()
	}
	return fingerprintView{c.Name, c.Transport, c.Command, c.Args, c.Env, c.Cwd, c.URL, c.Headers,
		c.EnabledTools, c.DisabledTools, c.Disabled, c.EnvFile, c.EnvFileDigest, c.OAuth, sb, c.Shared, c.Folder}
}

// StateKey is the key of what Switchboard keeps for the server between runs (its tools' pins, its
// sign-in): its name, or for a server a workspace file defines, or a user's that takes
// ${workspaceFolder}, its name and folder ("name@/abs/folder"; a server name never holds '@').
// The same name in another repository runs that repository's files and signs in wherever its
// file says, so it never reads, replaces or drops what this one keeps.
func (c ServerConfig) StateKey() string {
	switch {
	case c.Folder != "":
		return c.Name + "@" + c.Folder
	case c.FromFolder != "":
		return c.Name + "@" + c.FromFolder
	}
	return c.Name
}

// Fingerprint is the sha256 hex of the definition as written (name, transport, command, args,
// env, cwd, url, headers, with references to the environment unexpanded, and enabledTools,
// disabledTools, disabled), and for a workspace file's entry the folder it belongs to: trust
// decisions and grants are remembered per fingerprint, and a change in any of them asks again.
func (c ServerConfig) Fingerprint() string {
	b, _ := json.Marshal(c.fingerprintView()) // ignore error: plain types
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Identity covers every field: a change restarts the server.
func (c ServerConfig) Identity() string {
	b, _ := json.Marshal(struct { // ignore error: plain types
		C  ServerConfig
		S  time.Duration
		T  time.Duration
		Sr string
		W  bool
	}{c, c.StartupTimeout, c.CallTimeout, c.Source, c.WorkspaceOnly})
	return string(b)
}

// Summary is a one-line description of what runs: "npx -y foo" or the URL, as written (with
// ${env:X} references, never their values).
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
