package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidServerName(t *testing.T) {
	for name, ok := range map[string]bool{
		"github": true, "sqlite-notes": true, "a_b": true, "A1": true, "9": true, "x_": false, "github_": false,
		strings.Repeat("s", MaxServerNameLen): true, strings.Repeat("s", MaxServerNameLen+1): false,
		"": false, "-a": false, "_a": false, "a__b": false, "a.b": false, "a b": false, "é": false,
	} {
		if err := ValidServerName(name); (err == nil) != ok {
			t.Errorf("ValidServerName(%q) = %v; want ok=%v", name, err, ok)
		}
	}
}

// The findings: server "github_" with tool "delete_repo" was mcp__github___delete_repo, which the
// entry mcp__github__* matched as a prefix, and "a_" + "x" was mcp__a___x, the name of tool "_x"
// of server "a". A server name ending in '_' is now refused with the rule in the error.
func TestServerNameTrailingUnderscore(t *testing.T) {
	for _, name := range []string{"github_", "a_", "a-_"} {
		err := ValidServerName(name)
		if err == nil || !strings.Contains(err.Error(), "must not end in '_'") {
			t.Errorf("ValidServerName(%q) = %v; want an error saying it must not end in '_'", name, err)
		}
	}
	err := ValidServerName(strings.Repeat("a", 33))
	if err == nil || !strings.Contains(err.Error(), "longer than 32") {
		t.Errorf("33-character name: %v", err)
	}
}

// A workspace file defining server "github_" gives a config error naming the rule, not a server
// whose tools read as github's (switchboard call mcp__github___delete_repo answered "Unknown tool").
func TestLoadConfigRefusesTrailingUnderscore(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(f, []byte(`{"mcpServers": {"github_": {"command": "x"}, "github": {"command": "y"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgs, errs := LoadConfig(ConfigSources{UserFile: filepath.Join(dir, "none.json"), ExtraFiles: []string{f}, Getenv: func(string) (string, bool) { return "", false }})
	if len(cfgs) != 1 || cfgs[0].Name != "github" {
		t.Errorf("configs = %+v; want only github", cfgs)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `server name "github_" must not end in '_'`) {
		t.Errorf("errors = %v; want one naming the rule for github_", errs)
	}
}
