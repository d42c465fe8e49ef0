package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// ImportHosts are the programs `switchboard mcp import --from` reads.
var ImportHosts = []string{"claude-code", "claude-desktop", "cursor", "codex", "zed", "vscode"}

// Imported is one server found in another program's config: Entry in our format, or Skip, the
// reason it cannot be brought over as written (the name is never changed).
type Imported struct {
	Name, From string // From: the file it was read from
	Entry      Entry
	Skip       string
	Dropped    []string // keys of the other program that have no meaning here
}

// ImportSource is one file ImportServers reads. Workspace marks the workspace's own file (say
// <workspace>/.cursor/mcp.json): whoever wrote the repository wrote it, so its servers may only
// become workspace servers, which ask for the user's trust, never the user's own. The others are
// the user's own files (in the home folder, $CODEX_HOME, %APPDATA%).
type ImportSource struct {
	Path      string
	Workspace bool
}

// ImportSources are the files ImportServers reads for host, for a user whose home folder is home
// and whose project is workspace ("" for none): the user's own first. Missing files are skipped by
// ImportServers. A workspace file that is one of the user's own (the workspace is the home folder)
// is listed once, as the user's.
func ImportSources(host, home, workspace string) ([]ImportSource, error) {
	var out []ImportSource
	user := func(p string) { out = append(out, ImportSource{Path: p}) }
	ws := func(rel string) {
		if workspace == "" {
			return
		}
		p := filepath.Join(workspace, filepath.FromSlash(rel))
		for _, s := range out {
			if SameFile(s.Path, p) {
				return
			}
		}
		out = append(out, ImportSource{Path: p, Workspace: true})
	}
	appData := os.Getenv("APPDATA")
	switch host {
	case "claude-code":
		// The project's .mcp.json is read by LoadConfig already; the per-project servers kept in
		// ~/.claude.json (ImportServers' workspace) are the user's own.
		user(filepath.Join(home, ".claude.json"))
	case "claude-desktop":
		switch runtime.GOOS {
		case "darwin":
			user(filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"))
		case "windows":
			user(filepath.Join(appData, "Claude", "claude_desktop_config.json"))
		default:
			user(filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"))
		}
	case "cursor":
		user(filepath.Join(home, ".cursor", "mcp.json"))
		ws(".cursor/mcp.json")
	case "codex":
		if ch := os.Getenv("CODEX_HOME"); ch != "" {
			user(filepath.Join(ch, "config.toml"))
		} else {
			user(filepath.Join(home, ".codex", "config.toml"))
		}
		ws(".codex/config.toml")
	case "zed":
		if runtime.GOOS == "windows" {
			user(filepath.Join(appData, "Zed", "settings.json"))
		} else {
			user(filepath.Join(home, ".config", "zed", "settings.json"))
		}
		ws(".zed/settings.json")
	case "vscode":
		switch runtime.GOOS { // the workspace's .vscode/mcp.json is read by LoadConfig already
		case "darwin":
			user(filepath.Join(home, "Library", "Application Support", "Code", "User", "mcp.json"))
		case "windows":
			user(filepath.Join(appData, "Code", "User", "mcp.json"))
		default:
			user(filepath.Join(home, ".config", "Code", "User", "mcp.json"))
		}
	default:
		return nil, fmt.Errorf("unknown program %q (want one of %s)", host, strings.Join(ImportHosts, ", "))
	}
	return out, nil
}

// SameFile reports whether a and b name the same file: the same clean path, or (both existing)
// the same file reached another way (a workspace given through a link to the home folder).
func SameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// ImportServers reads host's config file at path and returns its servers in name order (nil for
// a missing file). workspace selects Claude Code's per-project servers in ~/.claude.json.
func ImportServers(host, path, workspace string) ([]Imported, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	raw := map[string]json.RawMessage{}
	if host == "codex" {
		var doc struct {
			Servers map[string]map[string]any `toml:"mcp_servers"`
		}
		if _, err := toml.Decode(string(data), &doc); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		for n, s := range doc.Servers {
			b, _ := json.Marshal(s) // ignore error: decoded TOML marshals
			raw[n] = b
		}
	} else {
		std, err := standardizeJSONC(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(std, &top); err != nil {
			return nil, fmt.Errorf("%s: %s", path, jsonErrorAt(std, err))
		}
		keys := []string{"mcpServers", "servers"}
		if host == "zed" {
			keys = []string{"context_servers"}
		}
		objs := []json.RawMessage{}
		for _, k := range keys {
			objs = append(objs, top[k])
		}
		if host == "claude-code" && workspace != "" {
			// ~/.claude.json keeps "local" servers per project: projects[<abs path>].mcpServers.
			var projects map[string]struct {
				MCPServers json.RawMessage `json:"mcpServers"`
			}
			json.Unmarshal(top["projects"], &projects) // ignore error: no projects is fine
			objs = append(objs, projects[workspace].MCPServers)
		}
		for _, o := range objs {
			var m map[string]json.RawMessage
			if len(o) > 0 {
				if err := json.Unmarshal(o, &m); err != nil {
					return nil, fmt.Errorf("%s: servers must be an object mapping names to entries", path)
				}
			}
			for n, e := range m {
				raw[n] = e
			}
		}
	}
	out := make([]Imported, 0, len(raw))
	for n, r := range raw {
		out = append(out, convertEntry(host, path, n, r))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// convertEntry maps one entry of host's format to ours.
func convertEntry(host, path, name string, raw json.RawMessage) Imported {
	im := Imported{Name: name, From: path}
	if err := ValidServerName(name); err != nil {
		im.Skip = err.Error() + "; add it under another name with `switchboard mcp add`"
		return im
	}
	var f map[string]any
	if err := json.Unmarshal(raw, &f); err != nil || f == nil {
		im.Skip = "the entry is not an object"
		return im
	}
	e := &im.Entry
	str := func(k string) string { s, _ := f[k].(string); delete(f, k); return s }
	strs := func(k string) []string {
		a, _ := f[k].([]any)
		delete(f, k)
		var out []string
		for _, v := range a {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	strMap := func(k string) map[string]string {
		m, _ := f[k].(map[string]any)
		delete(f, k)
		if len(m) == 0 {
			return nil
		}
		out := map[string]string{}
		for k, v := range m {
			switch v := v.(type) {
			case string:
				out[k] = v
			default:
				b, _ := json.Marshal(v) // ignore error: decoded JSON marshals
				out[k] = string(b)
			}
		}
		return out
	}
	num := func(k string) float64 { n, _ := f[k].(float64); delete(f, k); return n }
	switch host {
	case "zed":
		// Zed: {"command": "x", "args": [...], "env": {...}} or, older, {"command": {"path",
		// "args", "env"}, "settings": {...}}; remote: {"url", "headers"}. "source" and
		// "settings" are Zed's own.
		if c, ok := f["command"].(map[string]any); ok {
			f = c
			f["command"] = c["path"]
			delete(f, "path")
		}
		delete(f, "source")
		delete(f, "settings")
		delete(f, "enabled")
	case "codex":
		// Codex: command, args, env, env_vars (names passed through), cwd, url,
		// bearer_token_env_var, http_headers, env_http_headers, enabled, startup_timeout_sec,
		// tool_timeout_sec, enabled_tools, disabled_tools.
		e.Env = strMap("env")
		for _, v := range strs("env_vars") {
			if e.Env == nil {
				e.Env = map[string]string{}
			}
			e.Env[v] = "${env:" + v + "}"
		}
		e.Headers = strMap("http_headers")
		for h, v := range strMap("env_http_headers") {
			if e.Headers == nil {
				e.Headers = map[string]string{}
			}
			e.Headers[h] = "${env:" + v + "}"
		}
		if v := str("bearer_token_env_var"); v != "" {
			if e.Headers == nil {
				e.Headers = map[string]string{}
			}
			e.Headers["Authorization"] = "Bearer ${env:" + v + "}"
		}
		if en, ok := f["enabled"].(bool); ok && !en {
			e.Disabled = true
		}
		delete(f, "enabled")
		e.StartupTimeoutSeconds = num("startup_timeout_sec")
		e.CallTimeoutSeconds = num("tool_timeout_sec")
		e.EnabledTools = strs("enabled_tools")
		e.DisabledTools = strs("disabled_tools")
	}
	e.Type = str("type")
	e.Command = str("command")
	e.Args = strs("args")
	if env := strMap("env"); env != nil {
		e.Env = env
	}
	e.EnvFile = str("envFile")
	e.Cwd = str("cwd")
	e.URL = str("url")
	if e.URL == "" {
		e.URL = str("serverUrl") // Windsurf-style, seen in Cursor files
	}
	if h := strMap("headers"); h != nil {
		e.Headers = h
	}
	if d, ok := f["disabled"].(bool); ok {
		e.Disabled = d
	}
	delete(f, "disabled")
	for k := range f {
		im.Dropped = append(im.Dropped, k)
	}
	sort.Strings(im.Dropped)
	return im
}
