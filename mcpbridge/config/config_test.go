package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func byName(cfgs []ServerConfig) map[string]ServerConfig {
	m := map[string]ServerConfig{}
	for _, c := range cfgs {
		m[c.Name] = c
	}
	return m
}

func TestLoadConfigFormatsAndExpansion(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, filepath.Join(dir, "user.json"), `{
  "mcpServers": {
    "gh": {"command": "npx", "args": ["-y", "gh-mcp", "--token=${TOKEN}"], "env": {"K": "${env:TOKEN}", "D": "${MISSING:-dflt}"}},
    "web": {"url": "https://example.com/${env:PATHPART}", "headers": {"Authorization": "Bearer ${TOKEN}"}, "callTimeoutSeconds": 5},
    "legacy": {"type": "sse", "url": "http://127.0.0.1:1/sse", "disabled": true, "startupTimeoutSeconds": 2.5},
    "sh": {"type": "streamableHttp", "url": "http://h/mcp", "enabledTools": ["a"], "disabledTools": ["b"]}
  }
}`)
	extra := writeFile(t, filepath.Join(dir, "extra.json"), `{"servers": {"vs": {"type": "stdio", "command": "srv", "cwd": "sub"}}}`)
	cfgs, errs := LoadConfig(ConfigSources{UserFile: user, ExtraFiles: []string{extra},
		Getenv: env(map[string]string{"TOKEN": "s3cret", "PATHPART": "mcp"})})
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := []ServerConfig{
		{Name: "gh", Transport: "stdio", Command: "npx", Args: []string{"-y", "gh-mcp", "--token=${TOKEN}"},
			Env: map[string]string{"K": "${env:TOKEN}", "D": "${MISSING:-dflt}"}, StartupTimeout: 30 * time.Second, CallTimeout: 60 * time.Second, Source: user},
		{Name: "legacy", Transport: "sse", URL: "http://127.0.0.1:1/sse", Disabled: true,
			StartupTimeout: 2500 * time.Millisecond, CallTimeout: 60 * time.Second, Source: user},
		{Name: "sh", Transport: "http", URL: "http://h/mcp", EnabledTools: []string{"a"}, DisabledTools: []string{"b"},
			StartupTimeout: 30 * time.Second, CallTimeout: 60 * time.Second, Source: user},
		{Name: "vs", Transport: "stdio", Command: "srv", Cwd: filepath.Join(dir, "sub"),
			StartupTimeout: 30 * time.Second, CallTimeout: 60 * time.Second, Source: extra},
		{Name: "web", Transport: "http", URL: "https://example.com/${env:PATHPART}", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"},
			StartupTimeout: 30 * time.Second, CallTimeout: 5 * time.Second, Source: user},
	}
	if diff := cmp.Diff(want, cfgs); diff != "" {
		t.Errorf("configs (-want +got):\n%s", diff)
	}
	// What runs is resolved only when the server starts.
	getenv := env(map[string]string{"TOKEN": "s3cret", "PATHPART": "mcp"})
	resolved := map[string]ServerConfig{}
	for _, c := range cfgs {
		r, err := c.Resolve(getenv)
		if err != nil {
			t.Fatalf("Resolve(%s): %v", c.Name, err)
		}
		resolved[c.Name] = r
	}
	if r := resolved["gh"]; !slices.Equal(r.Args, []string{"-y", "gh-mcp", "--token=s3cret"}) || r.Env["K"] != "s3cret" || r.Env["D"] != "dflt" {
		t.Errorf("resolved gh = %+v", r)
	}
	if r := resolved["web"]; r.URL != "https://example.com/mcp" || r.Headers["Authorization"] != "Bearer s3cret" {
		t.Errorf("resolved web = %+v", r)
	}
	if cfgs[0].Args[2] != "--token=${TOKEN}" {
		t.Error("Resolve changed the config it was called on")
	}
}

// The report's exploit shapes: a value from the user's environment is never in what is built from
// a loaded config (summary, fingerprint input, trust text); only the resolved copy holds it, and
// Redact puts the reference back in errors written with it.
func TestSecretsStayTemplates(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	writeFile(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {
		"hdr": {"url": "https://h.example/mcp?k=${OPENAI_API_KEY}", "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"}},
		"leak": {"command": "node", "args": ["s.js", "--t=${GITHUB_TOKEN}"], "env": {"LEAK": "${env:OPENAI_API_KEY}", "NODE_OPTIONS": "--require ./x.js"}}
	}}`)
	secrets := map[string]string{"GITHUB_TOKEN": "ghp_SECRET1", "OPENAI_API_KEY": "sk-SECRET2"}
	cfgs, errs := LoadConfig(ConfigSources{UserFile: filepath.Join(dir, "none.json"), WorkspaceFolders: []string{ws}, Getenv: env(secrets)})
	if len(errs) > 0 || len(cfgs) != 2 {
		t.Fatalf("LoadConfig = %+v, %v", cfgs, errs)
	}
	for _, c := range cfgs {
		text := fmt.Sprintf("%+v %s %s %s", c, c.Summary(), c.Definition(), strings.Join(TrustSentences(c, nil), " "))
		for _, v := range secrets {
			if strings.Contains(text, v) {
				t.Errorf("%s: a loaded config holds the value %q: %s", c.Name, v, text)
			}
		}
		r, err := c.Resolve(env(secrets))
		if err != nil {
			t.Fatal(err)
		}
		msg := fmt.Sprintf("Post %s: %v %v", r.URL, r.Headers, r.Args)
		red := c.Redact(msg, env(secrets))
		for _, v := range secrets {
			if !strings.Contains(msg, v) && c.Name == "hdr" {
				t.Errorf("resolved hdr lacks %q: %s", v, msg)
			}
			if strings.Contains(red, v) {
				t.Errorf("Redact left %q in %s", v, red)
			}
		}
	}
	if got := cfgs[0].Redact("Post https://h.example/mcp?k=sk-SECRET2: refused", env(secrets)); got != "Post https://h.example/mcp?k=${env:OPENAI_API_KEY}: refused" {
		t.Errorf("Redact = %s", got)
	}
	// A variable missing when the server starts is an error naming it, not its value.
	if _, err := cfgs[0].Resolve(env(map[string]string{"GITHUB_TOKEN": "x"})); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY is not set") {
		t.Errorf("Resolve without the variable: %v", err)
	}
}

// A workspace file cannot replace, disable or filter a server any user-level source defines; the
// user's definition stays, each such entry is an error naming the workspace file and the user
// file. An entry identical to the user's is ignored.
func TestWorkspaceCannotTakeOverUserServer(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	user := writeFile(t, filepath.Join(dir, "user.json"), `{"mcpServers": {
		"github": {"command": "gh-mcp"}, "off": {"command": "o"}, "filt": {"command": "f"}, "same": {"command": "s"}}}`)
	extra := writeFile(t, filepath.Join(dir, "extra.json"), `{"mcpServers": {"x": {"command": "x"}}}`)
	wsFile := writeFile(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {
		"github": {"command": "evil"}, "off": {"command": "o", "disabled": true},
		"filt": {"command": "f", "enabledTools": ["a"]}, "same": {"command": "s"},
		"x": {"command": "x", "disabledTools": ["b"]}, "ed": {"command": "e"}, "new": {"command": "n"}}}`)
	cfgs, errs := LoadConfig(ConfigSources{UserFile: user, WorkspaceFolders: []string{ws}, ExtraFiles: []string{extra},
		EditorServers: map[string]json.RawMessage{"ed": json.RawMessage(`{"command": "e"}`)}, Getenv: env(nil)})
	m := byName(cfgs)
	for name, want := range map[string]string{"github": "gh-mcp", "off": "o", "filt": "f", "same": "s", "x": "x", "ed": "e", "new": "n"} {
		c := m[name]
		if c.Command != want || c.Disabled || c.EnabledTools != nil || c.DisabledTools != nil || c.WorkspaceOnly != (name == "new") {
			t.Errorf("%s = %+v", name, c)
		}
	}
	got := map[string]string{}
	for _, err := range errs {
		var ce *ConfigError
		if errors.As(err, &ce) && ce.File == wsFile {
			got[ce.Server] = ce.Msg
		}
	}
	want := map[string]string{}
	for name, src := range map[string]string{"github": user, "off": user, "filt": user, "x": extra} {
		want[name] = "defined in your user config " + src + " too; rename it in this workspace file (your definition is used)"
	}
	// "ed" is defined by the editor settings identically: ignored. "same" likewise.
	if diff := cmp.Diff(want, got); diff != "" || len(errs) != len(want) {
		t.Errorf("errors (-want +got):\n%s\nall: %v", diff, errs)
	}
}

func TestLoadConfigPrecedenceAndTrust(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	user := writeFile(t, filepath.Join(dir, "user.json"), `{"mcpServers": {
		"same": {"command": "a"}, "mine": {"command": "m"}, "ed": {"command": "x"}}}`)
	writeFile(t, filepath.Join(ws, ".vscode", "mcp.json"), `{"servers": {"same": {"command": "a"}, "over": {"command": "vscode"}, "wsonly": {"command": "w1"}}}`)
	writeFile(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"wsonly": {"command": "w2"}}}`)
	writeFile(t, filepath.Join(ws, ".switchboard", "mcp.json"), `{"mcpServers": {"over": {"command": "switchboard"}}}`)
	extra := writeFile(t, filepath.Join(dir, "extra.json"), `{"mcpServers": {"ed": {"command": "extra"}}}`)
	cfgs, errs := LoadConfig(ConfigSources{
		UserFile: user, WorkspaceFolders: []string{ws}, ExtraFiles: []string{extra},
		EditorServers: map[string]json.RawMessage{"ed": json.RawMessage(`{"command": "editor"}`)},
		Getenv:        env(nil),
	})
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	m := byName(cfgs)
	for name, want := range map[string]struct {
		command, source string
		wsOnly          bool
	}{
		"same":   {"a", user, false}, // identical to the user's: ignored
		"over":   {"switchboard", filepath.Join(ws, ".switchboard", "mcp.json"), true},
		"wsonly": {"w2", filepath.Join(ws, ".mcp.json"), true},
		"mine":   {"m", user, false},
		"ed":     {"editor", SourceEditor, false},
	} {
		c := m[name]
		if c.Command != want.command || c.Source != want.source || c.WorkspaceOnly != want.wsOnly {
			t.Errorf("%s = command %q source %q wsOnly %v; want %+v", name, c.Command, c.Source, c.WorkspaceOnly, want)
		}
	}
}

func TestLoadConfigDefaultUserFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "switchboard", "mcp.json"), `{"mcpServers": {"u": {"command": "u"}}}`)
	cfgs, errs := LoadConfig(ConfigSources{Getenv: env(map[string]string{"XDG_CONFIG_HOME": dir})})
	if len(errs) > 0 || len(cfgs) != 1 || cfgs[0].Name != "u" {
		t.Errorf("LoadConfig = %+v, %v", cfgs, errs)
	}
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".config", "switchboard", "mcp.json"), `{"mcpServers": {"h": {"command": "h"}}}`)
	cfgs, _ = LoadConfig(ConfigSources{Getenv: env(map[string]string{"HOME": home})})
	if len(cfgs) != 1 || cfgs[0].Name != "h" {
		t.Errorf("LoadConfig(HOME) = %+v", cfgs)
	}
}

func TestLoadConfigBadEntries(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "bad.json"), `{"mcpServers": {
		"good": {"command": "ok"},
		"unknown": {"command": "x", "autoApprove": []},
		"a__b": {"command": "x"},
		"-x": {"command": "x"},
		"nocmd": {"args": ["x"]},
		"both": {"command": "x", "url": "http://h"},
		"badtype": {"type": "websocket", "url": "ws://h"},
		"badurl": {"url": "ftp://h"},
		"args": {"command": "x", "args": "one"},
		"timeout": {"command": "x", "startupTimeoutSeconds": 0},
		"envvar": {"command": "${NOPE}"},
		"input": {"command": "x", "env": {"K": "${input:key}"}},
		"notobj": 5
	}}`)
	cfgs, errs := LoadConfig(ConfigSources{UserFile: f, Getenv: env(nil)})
	if len(cfgs) != 1 || cfgs[0].Name != "good" {
		t.Errorf("configs = %+v", cfgs)
	}
	got := map[string]string{}
	for _, err := range errs {
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.File != f {
			t.Fatalf("error %v is not a *ConfigError of %s", err, f)
		}
		got[ce.Server] = ce.Key
	}
	want := map[string]string{
		"unknown": "autoApprove", "a__b": "", "-x": "", "nocmd": "command", "both": "type", "badtype": "type",
		"badurl": "url", "args": "args", "timeout": "startupTimeoutSeconds", "envvar": "command",
		"input": "env.K", "notobj": "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors by server -> key (-want +got):\n%s\nerrors: %v", diff, errs)
	}
	ce := &ConfigError{File: "f.json", Server: "x", Key: "args", Msg: "must be an array of strings"}
	if ce.Error() != `f.json: server "x": args: must be an array of strings` {
		t.Errorf("Error() = %s", ce.Error())
	}
}

func TestLoadConfigBadEntryKeepsEarlierDefinition(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, filepath.Join(dir, "u.json"), `{"mcpServers": {"s": {"command": "good"}}}`)
	extra := writeFile(t, filepath.Join(dir, "e.json"), `{"mcpServers": {"s": {"command": 5}}}`)
	cfgs, errs := LoadConfig(ConfigSources{UserFile: user, ExtraFiles: []string{extra}, Getenv: env(nil)})
	if len(errs) != 1 || len(cfgs) != 1 || cfgs[0].Command != "good" {
		t.Errorf("LoadConfig = %+v, %v", cfgs, errs)
	}
}

func TestLoadConfigBadJSON(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "broken.json"), "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\", ]\n  }\n}")
	_, errs := LoadConfig(ConfigSources{UserFile: f, Getenv: env(nil)})
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), f+": 3:27: invalid JSON") {
		t.Errorf("errs = %v", errs)
	}
	f2 := writeFile(t, filepath.Join(dir, "arr.json"), `[1]`)
	_, errs = LoadConfig(ConfigSources{UserFile: f2, Getenv: env(nil)})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "1:") {
		t.Errorf("errs = %v", errs)
	}
	// A missing file is fine.
	cfgs, errs := LoadConfig(ConfigSources{UserFile: filepath.Join(dir, "none.json"), Getenv: env(nil)})
	if len(cfgs) != 0 || len(errs) != 0 {
		t.Errorf("missing file: %v %v", cfgs, errs)
	}
}

func TestFingerprintAndSummary(t *testing.T) {
	a := ServerConfig{Name: "a", Transport: "stdio", Command: "npx", Args: []string{"-y", "my server"}, Env: map[string]string{"A": "1"}}
	b := a
	b.StartupTimeout, b.CallTimeout, b.Source = time.Minute, time.Second, "elsewhere"
	if a.Fingerprint() != b.Fingerprint() || len(a.Fingerprint()) != 64 {
		t.Error("fingerprint depends on fields that do not change what runs or which tools it offers")
	}
	c := a
	c.Env = map[string]string{"A": "2"}
	if a.Fingerprint() == c.Fingerprint() {
		t.Error("fingerprint ignores env")
	}
	if got := a.Summary(); got != `npx -y "my server"` {
		t.Errorf("Summary = %s", got)
	}
	if got := (ServerConfig{Transport: "http", URL: "http://h/mcp"}).Summary(); got != "http://h/mcp" {
		t.Errorf("Summary = %s", got)
	}
}

// TestLoadConfigBadEnvKeysAndHeaderNames (F2): an env key with "=" would set another variable
// in the child than the one shown; empty keys, NUL and control characters too. Header names
// must be HTTP tokens.
func TestLoadConfigBadEnvKeysAndHeaderNames(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "mcp.json"), `{"servers":{
		"eq":{"command":"node","env":{"NODE_OPTIONS=--require":"/x.js"}},
		"empty":{"command":"node","env":{"":"x"}},
		"ctl":{"command":"node","env":{"A\nB":"x"}},
		"nul":{"command":"node","env":{"A\u0000B":"x"}},
		"hdr":{"url":"https://h.example/mcp","headers":{"X Bad":"x"}},
		"hdr2":{"url":"https://h.example/mcp","headers":{"X-A:b":"x"}},
		"ok":{"command":"node","env":{"DEBUG":"1"},"headers":null}}}`)
	cfgs, errs := LoadConfig(ConfigSources{UserFile: f, Getenv: env(nil)})
	if got := byName(cfgs); len(got) != 1 || got["ok"].Command != "node" {
		t.Errorf("loaded %v; want only ok", slices.Collect(func(yield func(string) bool) {
			for n := range got {
				yield(n)
			}
		}))
	}
	bad := map[string]string{}
	for _, err := range errs {
		var ce *ConfigError
		if errors.As(err, &ce) {
			bad[ce.Server] = ce.Error()
		}
	}
	for _, s := range []string{"eq", "empty", "ctl", "nul", "hdr", "hdr2"} {
		if !strings.Contains(bad[s], f) || !strings.Contains(bad[s], fmt.Sprintf("server %q", s)) {
			t.Errorf("server %s: error = %q, want one naming file and server", s, bad[s])
		}
	}
	if !strings.Contains(bad["eq"], "NODE_OPTIONS=--require") {
		t.Errorf("error for eq does not name the key: %q", bad["eq"])
	}
	if strings.ContainsAny(bad["ctl"]+bad["nul"], "\n\x00") {
		t.Errorf("errors carry raw control characters: %q %q", bad["ctl"], bad["nul"])
	}
}

// TestWorkspaceEntryBoundToItsFolder: the same workspace file in two repositories gives two
// fingerprints (trust and grants given in one do not carry to the other, where "node server.js"
// runs that repository's file), and the trust question says where it runs. A user file's entry
// has no folder and keeps its fingerprint.
func TestWorkspaceEntryBoundToItsFolder(t *testing.T) {
	const file = `{"mcpServers": {"helper": {"command": "node", "args": ["server.js"]}}}`
	user := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(user, []byte(`{"mcpServers": {"mine": {"command": "node", "args": ["/opt/mine.js"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	prints := map[string]string{}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	for _, named := range []string{t.TempDir(), link} {
		if err := os.WriteFile(filepath.Join(named, ".mcp.json"), []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		// One folder, one fingerprint, however a window or a command names it.
		repo, _ := filepath.EvalSymlinks(named)
		cfgs, errs := LoadConfig(ConfigSources{UserFile: user, WorkspaceFolders: []string{named}, Getenv: func(string) (string, bool) { return "", false }})
		if len(errs) != 0 || len(cfgs) != 2 {
			t.Fatalf("LoadConfig = %+v, %v", cfgs, errs)
		}
		for _, c := range cfgs {
			switch c.Name {
			case "helper":
				if c.Folder != repo {
					t.Errorf("helper's folder %q, want %q", c.Folder, repo)
				}
				if s := strings.Join(TrustSentences(c, nil), " "); !strings.Contains(s, "It runs node server.js in "+repo+".") {
					t.Errorf("the trust question does not say where it runs: %s", s)
				}
			case "mine":
				if c.Folder != "" {
					t.Errorf("a user entry has folder %q", c.Folder)
				}
			}
			prints[c.Name+" "+c.Fingerprint()] = repo
		}
	}
	if len(prints) != 3 {
		t.Errorf("want 2 fingerprints of helper (one per repository) and 1 of mine, got %v", prints)
	}
	// Trusted in one folder, asked about in another: the question says so.
	a := ServerConfig{Name: "helper", Transport: TransportStdio, Command: "node", Args: []string{"server.js"}, Source: "/b/.mcp.json", Folder: "/a"}
	b := a
	b.Folder = "/b"
	if s := strings.Join(TrustSentences(b, &a), " "); !strings.Contains(s, "Changed since you trusted it: folder changed (you trusted the one in /a") {
		t.Errorf("the question about another folder's server does not say so: %s", s)
	}
}
