package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAllowSandbox: the paths are added to the entry's sandbox, every comment elsewhere stays,
// and a server without a sandbox is refused (widening one that does not exist would confine it).
func TestAllowSandbox(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	in := `{
  // my servers
  "mcpServers": {
    "fs": {
      "command": "npx", // the runner
      "sandbox": true, // tight
      "args": ["-y", "srv"]
    },
    "open": {"command": "x"}
  }
}
`
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := AllowSandbox(path, "fs", []string{"~/data"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Describe() != "sandboxed: no network, writes only its own folder, also reads ~/data" {
		t.Errorf("Describe = %q", p.Describe())
	}
	if _, err := AllowSandbox(path, "fs", []string{"~/data"}, []string{"/srv/out"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := strings.Replace(in, `"sandbox": true,`, `"sandbox": {"read":["~/data"],"write":["/srv/out"]},`, 1)
	if string(b) != want {
		t.Errorf("file:\n%s\nwant:\n%s", b, want)
	}
	if _, err := AllowSandbox(path, "open", []string{"/x"}, nil); err == nil || !strings.Contains(err.Error(), "has no sandbox") {
		t.Errorf("a server without a sandbox: %v", err)
	}
	if _, err := AllowSandbox(path, "fs", []string{"~bob/x"}, nil); err == nil {
		t.Errorf("a bad path was written")
	}
}
