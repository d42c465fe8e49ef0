package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSandboxEntry: a stdio entry's "sandbox" is parsed (relative paths anchored at the
// workspace folder, ${workspaceFolder} expanded), refused on an HTTP server and when misspelt,
// part of the fingerprint (a loosened sandbox asks again) and of the trust sentences.
func TestSandboxEntry(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(body string) []ServerConfig {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, ".vscode", "mcp.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cfgs, errs := LoadConfig(ConfigSources{UserFile: filepath.Join(dir, "none.json"), WorkspaceFolders: []string{ws}, Getenv: func(string) (string, bool) { return "", false }})
		if len(errs) > 0 {
			t.Fatalf("LoadConfig: %v", errs)
		}
		return cfgs
	}
	tight := write(`{"servers": {"fs": {"command": "npx", "args": ["-y", "srv"], "sandbox": {"write": ["./build", "${workspaceFolder}/out"], "network": ["api.github.com"]}}}}`)[0]
	if tight.Sandbox == nil || !slices.Equal(tight.Sandbox.Write, []string{"./build", filepath.Join(ws, "out")}) || tight.SandboxBase != ws {
		t.Fatalf("Sandbox = %+v, base %q", tight.Sandbox, tight.SandboxBase)
	}
	loose := write(`{"servers": {"fs": {"command": "npx", "args": ["-y", "srv"], "sandbox": {"write": ["./build", "${workspaceFolder}/out"], "network": true}}}}`)[0]
	none := write(`{"servers": {"fs": {"command": "npx", "args": ["-y", "srv"]}}}`)[0]
	same := write(`{"servers": {"fs": {"command": "npx", "args": ["-y", "srv"], "sandbox": {"network": ["api.github.com"], "write": ["${workspaceFolder}/out", "./build", "./build"]}}}}`)[0]
	if tight.Fingerprint() == loose.Fingerprint() || tight.Fingerprint() == none.Fingerprint() {
		t.Errorf("a loosened or dropped sandbox keeps the fingerprint")
	}
	if tight.Fingerprint() != same.Fingerprint() {
		t.Errorf("the same sandbox spelt differently changed the fingerprint")
	}
	if got := DefinitionChanges(tight, loose); !slices.Contains(got, "sandbox changed (was sandboxed: network only api.github.com, writes only ./build and "+filepath.Join(ws, "out")+" and its own folder)") {
		t.Errorf("DefinitionChanges = %q", got)
	}
	if got := DefinitionChanges(tight, none); len(got) != 1 || !strings.HasPrefix(got[0], "sandbox removed (was sandboxed: ") {
		t.Errorf("DefinitionChanges = %q", got)
	}
	sentences := strings.Join(TrustSentences(loose, nil), "\n")
	if !strings.Contains(sentences, "It runs sandboxed: full network, writes only ") {
		t.Errorf("trust sentences lack the sandbox:\n%s", sentences)
	}
	back, err := ParseDefinition(tight.Definition())
	if err != nil || back.Fingerprint() != tight.Fingerprint() {
		t.Errorf("ParseDefinition(Definition()) lost the sandbox: %+v, %v", back.Sandbox, err)
	}

	for _, tc := range []struct{ body, want string }{
		{`{"servers": {"h": {"url": "https://h.example/mcp", "sandbox": true}}}`, "only a stdio server"},
		{`{"servers": {"s": {"command": "x", "sandbox": {"wirte": ["./b"]}}}}`, `unknown key "wirte"`},
		{`{"servers": {"s": {"command": "x", "sandbox": "yes"}}}`, "must be true, false or an object"},
	} {
		if err := os.WriteFile(filepath.Join(ws, ".vscode", "mcp.json"), []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errs := LoadConfig(ConfigSources{UserFile: filepath.Join(dir, "none.json"), WorkspaceFolders: []string{ws}, Getenv: func(string) (string, bool) { return "", false }})
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), ": sandbox: "+tc.want) && !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%s: errors %v, want one about %q", tc.body, errs, tc.want)
		}
	}
}
