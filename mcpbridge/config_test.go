package mcpbridge

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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
		{Name: "gh", Transport: "stdio", Command: "npx", Args: []string{"-y", "gh-mcp", "--token=s3cret"},
			Env: map[string]string{"K": "s3cret", "D": "dflt"}, StartupTimeout: 30 * time.Second, CallTimeout: 60 * time.Second, Source: user},
		{Name: "legacy", Transport: "sse", URL: "http://127.0.0.1:1/sse", Disabled: true,
			StartupTimeout: 2500 * time.Millisecond, CallTimeout: 60 * time.Second, Source: user},
		{Name: "sh", Transport: "http", URL: "http://h/mcp", EnabledTools: []string{"a"}, DisabledTools: []string{"b"},
			StartupTimeout: 30 * time.Second, CallTimeout: 60 * time.Second, Source: user},
		{Name: "vs", Transport: "stdio", Command: "srv", Cwd: filepath.Join(dir, "sub"),
			StartupTimeout: 30 * time.Second, CallTimeout: 60 * time.Second, Source: extra},
		{Name: "web", Transport: "http", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"},
			StartupTimeout: 30 * time.Second, CallTimeout: 5 * time.Second, Source: user},
	}
	if diff := cmp.Diff(want, cfgs); diff != "" {
		t.Errorf("configs (-want +got):\n%s", diff)
	}
}

func TestLoadConfigPrecedenceAndTrust(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	user := writeFile(t, filepath.Join(dir, "user.json"), `{"mcpServers": {
		"same": {"command": "a"}, "over": {"command": "user"}, "mine": {"command": "m"}, "ed": {"command": "x"}}}`)
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
		"same":   {"a", filepath.Join(ws, ".vscode", "mcp.json"), false}, // identical to the user's: no trust needed
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
	f := writeFile(t, filepath.Join(dir, "broken.json"), "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}")
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
	b.Disabled, b.CallTimeout, b.Source = true, time.Second, "elsewhere"
	if a.Fingerprint() != b.Fingerprint() || len(a.Fingerprint()) != 64 {
		t.Error("fingerprint depends on fields that do not change what runs")
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
