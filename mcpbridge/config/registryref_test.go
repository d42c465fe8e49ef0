package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAddServerInputs: an entry installed from a registry, with its inputs, goes into a file with
// comments and an "inputs" array of its own without touching them, and reads back with its
// "registry"; a broken file is not written.
func TestAddServerInputs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	orig := `{
  // mine
  "inputs": [
    {"type": "promptString", "id": "old", "password": true},
  ],
  "mcpServers": {
    "a": {"command": "a"} // keep
  }
}
`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	e := Entry{Command: "npx", Args: []string{"-y", "@acme/server@1.2.3"}, Env: map[string]string{"TOKEN": "${input:acme-TOKEN}"},
		Registry: &RegistryRef{URL: "https://registry.example.com", Name: "io.github.acme/server", Version: "1.2.3"}}
	in := []Input{{ID: "acme-TOKEN", Type: InputPromptString, Password: true, Description: "Token"}}
	if err := AddServerInputs(path, "acme", e, in); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, keep := range []string{"// mine", "// keep", `"id": "old"`} {
		if !strings.Contains(string(data), keep) {
			t.Errorf("lost %q:\n%s", keep, data)
		}
	}
	cfgs, errs := LoadConfig(ConfigSources{UserFile: path, Getenv: func(string) (string, bool) { return "", false }})
	if len(errs) > 0 {
		t.Fatalf("load: %v\n%s", errs, data)
	}
	var got *ServerConfig
	for i := range cfgs {
		if cfgs[i].Name == "acme" {
			got = &cfgs[i]
		}
	}
	if got == nil || got.Registry == nil || *got.Registry != *e.Registry {
		t.Fatalf("acme's registry = %+v, want %+v\n%s", got, e.Registry, data)
	}
	if d := cmp.Diff([]string{"acme-TOKEN"}, inputIDs(got.Inputs)); d != "" {
		t.Errorf("inputs (-want +got):\n%s", d)
	}
	// The same input declared differently: refused, file unchanged.
	in[0].Password = false
	if err := AddServerInputs(path, "acme2", e, in); err == nil || !strings.Contains(err.Error(), "declared differently") {
		t.Errorf("conflicting input: %v", err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(data) {
		t.Errorf("a refused edit changed the file")
	}
	// A broken file is never overwritten.
	broken := filepath.Join(dir, "broken.json")
	os.WriteFile(broken, []byte(`{"mcpServers": {`), 0o600)
	if err := AddServerInputs(broken, "acme", e, in); err == nil {
		t.Errorf("a broken file was edited")
	}
	if b, _ := os.ReadFile(broken); string(b) != `{"mcpServers": {` {
		t.Errorf("the broken file changed: %q", b)
	}
	// "registry" must be the whole object.
	os.WriteFile(broken, []byte(`{"mcpServers": {"x": {"command": "x", "registry": {"name": "n"}}}}`), 0o600)
	if _, errs := LoadConfig(ConfigSources{UserFile: broken}); len(errs) == 0 || !strings.Contains(errs[0].Error(), "registry") {
		t.Errorf("an incomplete registry object: errs = %v", errs)
	}
}

func inputIDs(in []Input) []string {
	var out []string
	for _, i := range in {
		out = append(out, i.ID)
	}
	return out
}
