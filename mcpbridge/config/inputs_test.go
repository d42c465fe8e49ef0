package config

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

const inputsFile = `{
  "inputs": [
    {"type": "promptString", "id": "tok", "description": "API token", "password": true},
    {"type": "pickString", "id": "region", "options": ["eu", "us"]},
    {"type": "command", "id": "cmd", "command": "x"},
  ],
  "servers": {
    "a": {"command": "srv", "args": ["--region", "${input:region}"], "env": {"TOKEN": "${input:tok}"}},
    "c": {"command": "srv", "env": {"X": "${input:cmd}"}},
  },
}`

func loadInputs(t *testing.T) (ServerConfig, string, []error) {
	t.Helper()
	dir := t.TempDir()
	f := writeFile(t, filepath.Join(dir, "mcp.json"), inputsFile)
	cfgs, errs := LoadConfig(ConfigSources{UserFile: f, Getenv: env(nil)})
	if len(cfgs) != 1 || cfgs[0].Name != "a" {
		t.Fatalf("cfgs = %+v, want a only", cfgs)
	}
	return cfgs[0], f, errs
}

func TestInputsStayTemplatesUntilResolved(t *testing.T) {
	c, f, errs := loadInputs(t)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `server "c"`) || !strings.Contains(errs[0].Error(), `type "command"`) {
		t.Errorf("errs = %v, want one: c uses a command input", errs)
	}
	if len(c.Inputs) != 2 || c.Inputs[0].ID != "region" || c.Inputs[1].ID != "tok" || c.Inputs[1].Key != InputKey(f, "tok") {
		t.Fatalf("Inputs = %+v", c.Inputs)
	}
	secret := "s3cr3t-value-123"
	getenv := env(map[string]string{InputVar(InputKey(f, "tok")): secret, InputVar(InputKey(f, "region")): "eu"})
	r, err := c.Resolve(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if r.Env["TOKEN"] != secret || r.Args[1] != "eu" {
		t.Errorf("resolved = %+v", r)
	}
	for _, s := range append(TrustSentences(c, nil), c.Summary(), string(c.Definition()), c.Identity(), c.Env["TOKEN"]) {
		if strings.Contains(s, secret) {
			t.Errorf("definition text holds the input's value: %s", s)
		}
	}
	if got := c.Redact("401 for token "+secret, getenv); strings.Contains(got, secret) || !strings.Contains(got, "${input:tok}") {
		t.Errorf("Redact = %q", got)
	}
	if !strings.Contains(strings.Join(TrustSentences(c, nil), " "), "It asks you for input 'region', 'tok' (a password)") {
		t.Errorf("trust sentences do not name the inputs: %q", TrustSentences(c, nil))
	}
}

func TestInputNotSetFailsResolve(t *testing.T) {
	c, _, _ := loadInputs(t)
	_, err := c.Resolve(env(nil))
	if err == nil || !strings.Contains(err.Error(), `input "region" is not set`) {
		t.Errorf("Resolve err = %v", err)
	}
}

// Another file declaring the same input id never reads this file's value.
func TestInputKeyedByFile(t *testing.T) {
	c, f, _ := loadInputs(t)
	other := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), inputsFile)
	cfgs, _ := LoadConfig(ConfigSources{UserFile: other, Getenv: env(nil)})
	getenv := env(map[string]string{InputVar(InputKey(f, "tok")): "value-of-first", InputVar(InputKey(f, "region")): "eu"})
	if _, err := c.Resolve(getenv); err != nil {
		t.Fatal(err)
	}
	if _, err := cfgs[0].Resolve(getenv); err == nil {
		t.Errorf("a second file's server resolved with the first file's input values")
	}
}

func TestInputStoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := tokenstore.NewMemory()
	if _, err := LoadInput(ctx, s, "k"); err != tokenstore.ErrNoCredential {
		t.Errorf("LoadInput of nothing = %v", err)
	}
	if err := SaveInput(ctx, s, "/a/mcp.json#tok", "v"); err != nil {
		t.Fatal(err)
	}
	if v, err := LoadInput(ctx, s, "/a/mcp.json#tok"); err != nil || v != "v" {
		t.Errorf("LoadInput = %q, %v", v, err)
	}
	// A server named like the key has its own entry (accounts of inputs are prefixed).
	if _, err := s.Load(ctx, "/a/mcp.json#tok"); err != tokenstore.ErrNoCredential {
		t.Errorf("input stored under the bare key")
	}
}
