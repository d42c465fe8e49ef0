package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// copyTree copies testdata dir src into a temp folder (tests change files).
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestLoadVSCodeWorkspaceFile(t *testing.T) {
	ws := copyTree(t, "testdata/configs/vscode-ws")
	getenv := env(map[string]string{"HOME": "/home/u"})
	cfgs, errs := LoadConfig(ConfigSources{UserFile: filepath.Join(ws, "none.json"), WorkspaceFolders: []string{ws}, Getenv: getenv})
	if len(errs) != 0 {
		t.Fatalf("errs = %v, want none", errs)
	}
	if len(cfgs) != 2 || cfgs[0].Name != "files" || cfgs[1].Name != "github" {
		t.Fatalf("cfgs = %+v, want files and github", cfgs)
	}
	if gh := cfgs[1]; len(gh.Inputs) != 1 || gh.Inputs[0].ID != "github-token" || !gh.Inputs[0].Password ||
		gh.Inputs[0].Key != InputKey(filepath.Join(ws, ".vscode", "mcp.json"), "github-token") || gh.Headers["Authorization"] != "Bearer ${input:github-token}" {
		t.Errorf("github = %+v, want its input declared, keyed by the file, and the template kept", gh)
	}
	c := cfgs[0]
	wantArgs := []string{ws + string(filepath.Separator) + "server.js", "--cache", "/home/u/.cache/files"}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args = %q, want %q", c.Args, wantArgs)
	}
	if c.EnvFile != filepath.Join(ws, ".env") || !slices.Equal(c.EnvFileKeys, []string{"API_KEY", "DEBUG", "REGION"}) {
		t.Errorf("envFile = %q keys %q", c.EnvFile, c.EnvFileKeys)
	}
	// The values are secrets: nothing built from the definition holds them.
	for _, s := range append(TrustSentences(c, nil), c.Summary(), string(c.Definition()), c.Identity()) {
		if strings.Contains(s, "sk-live") {
			t.Errorf("definition text holds the envFile value: %s", s)
		}
	}
	r, err := c.Resolve(getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"API_KEY": "sk-live-abcdef123456", "REGION": "eu west", "DEBUG": "1"}
	for k, v := range want {
		if r.Env[k] != v {
			t.Errorf("resolved env %s = %q, want %q (env wins over envFile)", k, r.Env[k], v)
		}
	}
	if got := c.Redact("auth failed for sk-live-abcdef123456", getenv); strings.Contains(got, "sk-live") {
		t.Errorf("Redact = %q", got)
	}
}

// An attacker's workspace points envFile at the user's own secrets outside the workspace,
// directly or through a symbolic link inside it.
func TestWorkspaceEnvFileMustStayInside(t *testing.T) {
	home := t.TempDir()
	secret := filepath.Join(home, "credentials")
	writeFile(t, secret, "AWS_SECRET=topsecretvalue\n")
	for name, setup := range map[string]func(ws string) string{
		"absolute": func(ws string) string { return secret },
		"dotdot":   func(ws string) string { rel, _ := filepath.Rel(ws, secret); return rel },
		"symlink": func(ws string) string {
			if err := os.Symlink(secret, filepath.Join(ws, ".env")); err != nil {
				t.Skip(err)
			}
			return ".env"
		},
	} {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			p := setup(ws)
			writeFile(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "x", "envFile": `+quoteJSON(p)+`}}}`)
			cfgs, errs := LoadConfig(ConfigSources{UserFile: filepath.Join(ws, "none"), WorkspaceFolders: []string{ws}, Getenv: env(nil)})
			if len(cfgs) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "outside the workspace folder") {
				t.Errorf("LoadConfig = %+v, %v; want the server refused", cfgs, errs)
			}
		})
	}
	// A file that was inside when read and became a link to the secret before the start.
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".env"), "A=1\n")
	writeFile(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "x", "envFile": ".env"}}}`)
	cfgs, errs := LoadConfig(ConfigSources{UserFile: filepath.Join(ws, "none"), WorkspaceFolders: []string{ws}, Getenv: env(nil)})
	if len(cfgs) != 1 || len(errs) != 0 {
		t.Fatalf("LoadConfig = %+v, %v", cfgs, errs)
	}
	os.Remove(filepath.Join(ws, ".env"))
	if err := os.Symlink(secret, filepath.Join(ws, ".env")); err != nil {
		t.Skip(err)
	}
	if r, err := cfgs[0].Resolve(env(nil)); err == nil || r.Env["AWS_SECRET"] != "" {
		t.Errorf("Resolve after swap = %v, %v; want refused", r.Env, err)
	}
}

// A trusted workspace server's envFile is rewritten after the trust: a new fingerprint (asks
// again), and the definition that was trusted no longer starts.
func TestWorkspaceEnvFileChangeIsNotTrusted(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".env"), "A=1\n")
	writeFile(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "node", "envFile": ".env"}}}`)
	load := func() ServerConfig {
		cfgs, errs := LoadConfig(ConfigSources{UserFile: filepath.Join(ws, "none"), WorkspaceFolders: []string{ws}, Getenv: env(nil)})
		if len(cfgs) != 1 || len(errs) != 0 {
			t.Fatalf("LoadConfig = %+v, %v", cfgs, errs)
		}
		return cfgs[0]
	}
	trusted := load()
	writeFile(t, filepath.Join(ws, ".env"), "A=1\nNODE_OPTIONS=--require ./evil.js\n")
	if _, err := trusted.Resolve(env(nil)); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Errorf("Resolve of the trusted definition after the change: %v", err)
	}
	now := load()
	if now.Fingerprint() == trusted.Fingerprint() {
		t.Error("fingerprint unchanged after the envFile changed")
	}
	if s := strings.Join(TrustSentences(now, nil), " "); !strings.Contains(s, "Env NODE_OPTIONS from file") {
		t.Errorf("trust prompt does not flag NODE_OPTIONS: %s", s)
	}
}

func TestJSONCErrorsNameLineAndColumn(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "mcp.json"), "{\n  // a comment\n  \"servers\": {\n    \"a\": {\"command\": \"x\" \"args\": []},\n  },\n}\n")
	_, errs := LoadConfig(ConfigSources{UserFile: f, Getenv: env(nil)})
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), f+": 4:26: invalid JSON") {
		t.Errorf("errs = %v, want %s: 4:26: invalid JSON ...", errs, f)
	}
}

func TestUndeclaredInputFailsOnlyThatServer(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "mcp.json"), `{"servers": {"a": {"command": "x", "env": {"T": "${input:tok}"}}, "b": {"command": "y"}}}`)
	cfgs, errs := LoadConfig(ConfigSources{UserFile: f, Getenv: env(nil)})
	if len(cfgs) != 1 || cfgs[0].Name != "b" || len(errs) != 1 || !strings.Contains(errs[0].Error(), `declares no input "tok"`) {
		t.Errorf("LoadConfig = %+v, %v", cfgs, errs)
	}
}

func quoteJSON(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// ${workspaceFolder} in a user-level file (the user's mcp.json, a --config file, the editor's
// settings) is the open folder when exactly one is known, as in VS Code. With none the entry is
// refused, and the error names the file, the server and the key and says to open a folder; with
// several, as VS Code's variable resolver does for a definition that belongs to no folder, it is
// refused naming the folders. A workspace file keeps its own folder.
func TestWorkspaceFolderInUserFile(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "mcp.json")
	extra := filepath.Join(dir, "extra.json")
	def := `{"mcpServers": {"%s": {"command": "node", "args": ["${workspaceFolder}/tool.js"], "cwd": "${workspaceFolder}"}}}`
	for f, name := range map[string]string{user: "u", extra: "x"} {
		if err := os.WriteFile(f, []byte(strings.Replace(def, "%s", name, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ws, ws2 := filepath.Join(dir, "proj"), filepath.Join(dir, "other")
	editor := map[string]json.RawMessage{"e": json.RawMessage(`{"command": "node", "args": ["${workspaceFolder}/e.js"]}`)}
	load := func(folders ...string) ([]ServerConfig, []error) {
		return LoadConfig(ConfigSources{UserFile: user, ExtraFiles: []string{extra}, EditorServers: editor, WorkspaceFolders: folders, Getenv: env(nil)})
	}

	cfgs, errs := load(ws)
	if len(errs) != 0 || len(cfgs) != 3 {
		t.Fatalf("one folder: %d servers, errors %v; want 3 and none", len(cfgs), errs)
	}
	for _, c := range cfgs {
		ok := c.Args[0] == ws+"/tool.js" && c.Cwd == ws
		if c.Name == "e" {
			ok = c.Args[0] == ws+"/e.js"
		}
		if !ok {
			t.Errorf("one folder: %s args %q cwd %q; want them under %s", c.Name, c.Args, c.Cwd, ws)
		}
		// What runs comes from the opened repository: the user's own file cannot vouch for it.
		if !c.WorkspaceOnly || c.FromFolder != ws {
			t.Errorf("one folder: %s WorkspaceOnly %v FromFolder %q; want it to need trust for %s", c.Name, c.WorkspaceOnly, c.FromFolder, ws)
		}
		if s := TrustSentences(c, nil)[0]; !strings.Contains(s, ws) || !strings.Contains(s, "${workspaceFolder}") || strings.Contains(s, "Workspace file") {
			t.Errorf("one folder: %s trust prompt opens %q; want it to say the server takes the open folder %s", c.Name, s, ws)
		}
	}
	// A user-level definition that does not use the folder is the user's own, as before.
	plain := map[string]json.RawMessage{"p": json.RawMessage(`{"command": "node", "args": ["/opt/p.js"]}`)}
	cfgs, _ = LoadConfig(ConfigSources{UserFile: filepath.Join(dir, "none.json"), EditorServers: plain, WorkspaceFolders: []string{ws}, Getenv: env(nil)})
	if len(cfgs) != 1 || cfgs[0].WorkspaceOnly || cfgs[0].FromFolder != "" {
		t.Errorf("a user-level server without ${workspaceFolder}: %+v; want it trusted as the user's own", cfgs)
	}

	for _, tc := range []struct {
		folders []string
		want    string
	}{
		{nil, "open a folder"},
		{[]string{ws, ws2}, ws2},
	} {
		cfgs, errs := load(tc.folders...)
		if len(cfgs) != 0 || len(errs) != 5 { // args and cwd of u and x, args of e
			t.Fatalf("%d folders: %d servers, errors %v; want each entry refused", len(tc.folders), len(cfgs), errs)
		}
		for _, err := range errs {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Server == "" || ce.Key == "" || ce.File == "" || !strings.Contains(ce.Msg, "${workspaceFolder}") || !strings.Contains(ce.Msg, tc.want) {
				t.Errorf("%d folders: %v; want a config error naming file, server, key, ${workspaceFolder} and %q", len(tc.folders), err, tc.want)
			}
			if strings.Contains(err.Error(), "only defined in a workspace file") {
				t.Errorf("%d folders: the old refusal: %v", len(tc.folders), err)
			}
		}
	}

	// A workspace file's own folder wins, even with several folders open.
	if err := os.MkdirAll(ws2, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws2, ".mcp.json"), []byte(strings.Replace(def, "%s", "w", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgs, _ = LoadConfig(ConfigSources{UserFile: filepath.Join(dir, "none.json"), WorkspaceFolders: []string{ws, ws2}, Getenv: env(nil)})
	if len(cfgs) != 1 || cfgs[0].Cwd != ws2 {
		t.Errorf("workspace file in the second folder: %+v; want its cwd %s", cfgs, ws2)
	}
}

// A folder whose name holds "${" (a repository can hold a folder named ${env:GITHUB_TOKEN}, and
// an editor can take it as the root) is never read as variables once put in for
// ${workspaceFolder}: the server would get the secret in its arguments while the trust question
// said it reads nothing from the environment. Such an entry is refused, naming the folder.
func TestWorkspaceFolderNamedLikeAVariable(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "repo", "${env:GITHUB_TOKEN}")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	getenv := env(map[string]string{"GITHUB_TOKEN": "ghp_SECRET"})
	user := map[string]json.RawMessage{"u": json.RawMessage(`{"command": "node", "args": ["${workspaceFolder}/tool.js"]}`)}
	if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(`{"mcpServers": {"w": {"command": "node", "args": ["${workspaceFolder}/w.js"]}, "c": {"command": "node", "cwd": "sub"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgs, errs := LoadConfig(ConfigSources{UserFile: filepath.Join(dir, "none.json"), EditorServers: user, WorkspaceFolders: []string{ws}, Getenv: getenv})
	for _, c := range cfgs {
		r, err := c.Resolve(getenv)
		if err == nil && strings.Contains(strings.Join(r.Args, " ")+r.Cwd, "ghp_SECRET") {
			t.Errorf("server %s runs with the secret in its arguments or cwd: %q %q", c.Name, r.Args, r.Cwd)
		}
	}
	if len(cfgs) != 0 || len(errs) != 3 {
		t.Fatalf("servers %+v, errors %v; want all three refused", cfgs, errs)
	}
	for _, err := range errs {
		if !strings.Contains(err.Error(), "${env:GITHUB_TOKEN}") || !strings.Contains(err.Error(), "rename") {
			t.Errorf("error %q; want it to name the folder and say what to do", err)
		}
	}
}
