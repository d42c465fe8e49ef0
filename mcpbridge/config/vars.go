package config

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Variables VS Code (and Cursor) define besides ${env:X}. They are no secret and are resolved
// when the file is read. ${input:id} stays as written until the server starts (inputs.go).
const (
	varWorkspaceFolder = "workspaceFolder"
	varUserHome        = "userHome"
	varPathSeparator   = "pathSeparator"
)

// isBuiltinVar reports whether name (the text inside ${...}) is one of the predefined variables,
// not a reference to the environment.
func isBuiltinVar(name string) bool {
	switch name {
	case varWorkspaceFolder, varUserHome, varPathSeparator:
		return true
	}
	return false
}

// builtin resolves one ${...} that is not a reference to the environment.
func (e expander) builtin(m string) (string, error) {
	ref := m[2 : len(m)-1]
	switch ref {
	case varWorkspaceFolder:
		return e.workspaceFolder(m)
	case varUserHome:
		if home, ok := e.getenv("HOME"); ok && filepath.IsAbs(home) {
			return home, nil
		}
		if home, err := os.UserHomeDir(); err == nil {
			return home, nil
		}
		return "", fmt.Errorf("%s: the home folder is not known", m)
	case varPathSeparator:
		return string(filepath.Separator), nil
	}
	if id, ok := strings.CutPrefix(ref, "input:"); ok {
		switch {
		case e.input != nil:
			if v, ok := e.input(id); ok {
				return v, nil
			}
			return "", fmt.Errorf("input %q is not set yet (Switchboard asks for it through the editor; or set it with `switchboard mcp input set %s`)", id, id)
		case e.declared != nil:
			if _, ok := e.declared[id]; ok {
				return m, nil // checked by usedInputs; resolved when the server starts
			}
		}
		return "", fmt.Errorf(`uses %s, but the file declares no input %q in its "inputs"`, m, id)
	}
	return "", fmt.Errorf("unsupported variable %s", m)
}

// workspaceFolder resolves ${workspaceFolder} (m): a workspace file's own folder; in a user-level
// file (the user's, a --config file, editor settings) the open folder when exactly one is known,
// as VS Code does. With several, VS Code's resolver refuses it for a definition that belongs to
// no folder ("can not be resolved in a multi folder workspace"), and so does this: which folder a
// server runs in is not left to the order of the folders.
//
// A folder whose path holds "${" is refused: the path is put in when the file is read, and the
// references left in an entry are resolved when the server starts, so a folder a repository names
// ${env:GITHUB_TOKEN} would hand the server that secret while the trust question said it reads
// nothing from the environment.
func (e expander) workspaceFolder(m string) (string, error) {
	folder := ""
	switch {
	case e.workspace != "":
		folder = e.workspace
	case len(e.folders) == 1:
		if e.folderUsed != nil {
			*e.folderUsed = true
		}
		folder = e.folders[0]
	case len(e.folders) == 0:
		return "", fmt.Errorf("%s is the open folder, and no folder is open: open a folder in the editor (or pass --workspace DIR on the command line)", m)
	default:
		return "", fmt.Errorf("%s names no one folder: %d folders are open (%s); in a file that belongs to no folder it is resolved only when one is open, as in VS Code: write the folder's path, or define the server in that folder's .vscode/mcp.json",
			m, len(e.folders), strings.Join(e.folders, ", "))
	}
	if strings.Contains(folder, "${") {
		return "", fmt.Errorf("%s is the folder %s, whose path holds \"${\", which would be read as a variable when the server starts: rename the folder, or write its path without %s", m, folder, m)
	}
	return folder, nil
}

// envFileEntry reads the entry's "envFile" key (VS Code, Cursor): a file of KEY=VALUE lines
// whose values are added to the server's environment when it starts ("env" wins over it). Only
// the path is kept: the values are the user's secrets, read again by [ServerConfig.Resolve], and
// never part of the definition that is shown. In a workspace file the path must stay inside the
// workspace folder (a workspace must not hand the user's other files to a server).
func (l *loader) envFileEntry(file, workspace string, fields map[string]json.RawMessage, cfg *ServerConfig, bad func(key, format string, args ...any)) {
	v, ok := fields["envFile"]
	if !ok {
		return
	}
	var p string
	if err := json.Unmarshal(v, &p); err != nil || p == "" {
		bad("envFile", "must be a file name")
		return
	}
	if cfg.Transport != TransportStdio {
		bad("envFile", "only used by a stdio server")
		return
	}
	exp := expander{getenv: l.getenv, workspace: workspace, folders: l.folders, folderUsed: &l.folderUsed}
	out := varRE.ReplaceAllStringFunc(p, func(m string) string {
		if name, _, _ := envRef(m); name != "" {
			bad("envFile", "must not use the environment (%s)", m)
			return m
		}
		s, err := exp.builtin(m)
		if err != nil {
			bad("envFile", "%v", err)
		}
		return s
	})
	if !filepath.IsAbs(out) {
		switch {
		case workspace != "":
			out = filepath.Join(workspace, out)
		case file != SourceEditor:
			out = filepath.Join(filepath.Dir(file), out)
		default:
			bad("envFile", "must be an absolute path in editor settings")
			return
		}
	}
	cfg.EnvFile = filepath.Clean(out)
	if workspace != "" {
		cfg.EnvFileRoot = workspace
	}
	vals, digest, err := readEnvFile(*cfg)
	if err != nil {
		bad("envFile", "%v", err)
		return
	}
	cfg.EnvFileKeys = sortedKeys(vals)
	if workspace != "" {
		// The file's content decides what the server gets, like "env" does: a workspace server
		// is trusted for this content, and Resolve refuses a file that changed since.
		cfg.EnvFileDigest = digest
	}
}

var envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// readEnvFile reads c.EnvFile: KEY=VALUE lines, "#" comments, blank lines, an optional "export "
// prefix, values optionally in '...' or "..." (where \n, \" and \\ are escapes). Errors name the
// file and line, never a value. For a workspace file, the file (symbolic links followed) must lie
// inside the workspace folder.
func readEnvFile(c ServerConfig) (map[string]string, string, error) {
	vals, digest, err := readEnvFileRaw(c)
	if err == nil && c.EnvFileDigest != "" && digest != c.EnvFileDigest {
		return nil, "", fmt.Errorf("envFile %s changed since the configuration was read (reload to review it)", c.EnvFile)
	}
	return vals, digest, err
}

func readEnvFileRaw(c ServerConfig) (map[string]string, string, error) {
	path := c.EnvFile
	if c.EnvFileRoot != "" {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, "", fmt.Errorf("envFile %s: %w", path, err)
		}
		root, err := filepath.EvalSymlinks(c.EnvFileRoot)
		if err != nil {
			root = c.EnvFileRoot
		}
		if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return nil, "", fmt.Errorf("envFile %s is outside the workspace folder %s (a workspace file may only name its own files)", path, c.EnvFileRoot)
		}
		path = real
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("envFile: %w", err)
	}
	sum := sha256.Sum256(data)
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !envKeyRE.MatchString(k) {
			return nil, "", fmt.Errorf("%s:%d: want KEY=VALUE with a KEY of letters, digits and '_'", c.EnvFile, n)
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
			v = strings.NewReplacer(`\n`, "\n", `\"`, `"`, `\\`, `\`).Replace(v[1 : len(v)-1])
		case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
			v = v[1 : len(v)-1]
		default:
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, "", fmt.Errorf("envFile %s: %w", c.EnvFile, err)
	}
	return out, hex.EncodeToString(sum[:]), nil
}

// withEnvFile returns env with c.EnvFile's values added under it (env wins).
func (c ServerConfig) withEnvFile(env map[string]string) (map[string]string, error) {
	if c.EnvFile == "" {
		return env, nil
	}
	vals, _, err := readEnvFile(c)
	if err != nil {
		return env, err
	}
	out := make(map[string]string, len(vals)+len(env))
	for k, v := range vals {
		out[k] = v
	}
	for k, v := range env {
		out[k] = v
	}
	return out, nil
}

// envFileRedactions are the Redact pairs for c.EnvFile's values: each value becomes
// "<KEY from envFile>".
func (c ServerConfig) envFileRedactions(s string) [][2]string {
	if c.EnvFile == "" {
		return nil
	}
	vals, _, err := readEnvFileRaw(c)
	if err != nil {
		return nil
	}
	var pairs [][2]string
	for _, k := range sortedKeys(vals) {
		v := vals[k]
		if len(v) < minSecret {
			continue
		}
		for _, f := range secretForms(v) {
			if strings.Contains(s, f) {
				pairs = append(pairs, [2]string{f, "<" + k + " from envFile>"})
			}
		}
	}
	return pairs
}
