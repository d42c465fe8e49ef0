package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShared: "shared" is parsed, narrowed where sharing would widen who reaches a process (with
// one warning naming the entry, the server still loads), and part of the trust fingerprint.
func TestShared(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	user := writeFile(t, filepath.Join(dir, "user.json"), `{"mcpServers": {
		"all": {"command": "a", "shared": true},
		"folder": {"command": "f", "shared": "workspace"},
		"off": {"command": "o", "shared": false},
		"none": {"command": "n"},
		"web": {"url": "https://h.example/mcp", "shared": true},
		"takes": {"command": "t", "args": ["${workspaceFolder}"], "shared": true},
		"boxed": {"command": "x", "shared": true, "sandbox": {}},
		"bad": {"command": "b", "shared": "everyone"}}}`)
	wsFile := writeFile(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {
		"repo": {"command": "r", "shared": true},
		"repo2": {"command": "r", "shared": "workspace"}}}`)
	cfgs, errs := LoadConfig(ConfigSources{UserFile: user, WorkspaceFolders: []string{ws}, Getenv: env(nil)})
	got := map[string]string{}
	for _, c := range cfgs {
		got[c.Name] = c.Shared
	}
	want := map[string]string{"all": SharedUser, "folder": SharedWorkspace, "off": "", "none": "", "web": "", "boxed": "",
		"takes": SharedWorkspace, "repo": SharedWorkspace, "repo2": SharedWorkspace}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shared (-want +got):\n%s", diff)
	}
	msgs := map[string]string{}
	for _, err := range errs {
		var ce *ConfigError
		if errors.As(err, &ce) && ce.Key == "shared" {
			msgs[ce.Server] = ce.File + ": " + ce.Msg
		}
	}
	for name, part := range map[string]string{
		"web":   "only stdio servers are shared",
		"takes": `shared only among windows of the same folders`,
		"repo":  wsFile + `: a server defined by the workspace`,
		"bad":   `must be true, false or "workspace"`,
		"boxed": "a sandboxed server is not shared yet",
	} {
		if !strings.Contains(msgs[name], part) {
			t.Errorf("%s: warning %q, want it to say %q", name, msgs[name], part)
		}
	}
	if len(msgs) != 5 {
		t.Errorf("warnings %v: want exactly the five above", msgs)
	}

	plain := ServerConfig{Name: "a", Transport: TransportStdio, Command: "npx"}
	before := plain.Fingerprint()
	shared := plain
	shared.Shared = SharedUser
	if shared.Fingerprint() == before {
		t.Error("turning sharing on keeps the trust fingerprint: it would not ask again")
	}
}
