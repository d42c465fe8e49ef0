package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

func TestMCPInputSetFromStdin(t *testing.T) {
	store := tokenstore.NewMemory()
	old := openInputStore
	openInputStore = func() (tokenstore.Store, string) { return store, "a test store" }
	t.Cleanup(func() { openInputStore = old })

	ws := t.TempDir()
	file := filepath.Join(ws, ".vscode", "mcp.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	content := `{
  // comment
  "inputs": [{"type": "promptString", "id": "tok", "password": true}, {"type": "pickString", "id": "r", "options": ["eu"]},],
  "servers": {"a": {"command": "x", "env": {"T": "${input:tok}"}}},
}`
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errb bytes.Buffer
	if code := runMCPInput([]string{"set", "tok", "--workspace", ws}, strings.NewReader("s3cret-from-stdin\n"), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if v, err := config.LoadInput(context.Background(), store, config.InputKey(file, "tok")); err != nil || v != "s3cret-from-stdin" {
		t.Errorf("stored %q, %v", v, err)
	}
	if b, _ := os.ReadFile(file); string(b) != content {
		t.Errorf("the config file changed")
	}
	if strings.Contains(out.String()+errb.String(), "s3cret") {
		t.Errorf("the value was printed: %s %s", out.String(), errb.String())
	}
	for _, tc := range []struct {
		args  []string
		stdin string
		code  int
		want  string
	}{
		{[]string{"set", "nope", "--file", file}, "v", 1, `no input "nope"`},
		{[]string{"set", "r", "--file", file}, "us", 2, "must be one of eu"},
		{[]string{"set"}, "", 2, "takes one ID"},
	} {
		errb.Reset()
		if code := runMCPInput(tc.args, strings.NewReader(tc.stdin), &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, %q; want %d, %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
	if code := runMCPInput([]string{"delete", "tok", "--file", file}, nil, &out, &errb); code != 0 {
		t.Fatalf("delete: exit %d: %s", code, errb.String())
	}
	if _, err := config.LoadInput(context.Background(), store, config.InputKey(file, "tok")); err == nil {
		t.Errorf("delete kept the value")
	}
}

func TestInputLookupReadsTheStore(t *testing.T) {
	store := tokenstore.NewMemory()
	old := openInputStore
	openInputStore = func() (tokenstore.Store, string) { return store, "a test store" }
	t.Cleanup(func() { openInputStore = old })
	config.SaveInput(context.Background(), store, "/f#tok", "v1")
	look := inputLookup()
	if v, ok := look(config.InputVar("/f#tok")); !ok || v != "v1" {
		t.Errorf("input = %q, %v", v, ok)
	}
	if _, ok := look(config.InputVar("/g#tok")); ok {
		t.Errorf("another file's input was found")
	}
	t.Setenv("SB_TEST_X", "x")
	if v, ok := look("SB_TEST_X"); !ok || v != "x" {
		t.Errorf("environment = %q, %v", v, ok)
	}
}
