package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// The MCP reference servers from npm, as users run them (npx), through `switchboard check` and
// `switchboard call`: third-party servers we did not write, over real stdio.
const (
	npmFilesystem = "@modelcontextprotocol/server-filesystem@2026.8.31"
	npmEverything = "@modelcontextprotocol/server-everything@2026.8.31"
)

func TestNPMReferenceServers(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads the npm reference servers")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("SWITCHBOARD_TEST_SECRET", "s3cr3t-value") // must never reach a server
	root := filepath.Join(dir, "files")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello from a.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fs":         map[string]any{"command": "npx", "args": []string{"-y", npmFilesystem, root}, "startupTimeoutSeconds": 240},
		"everything": map[string]any{"command": "npx", "args": []string{"-y", npmEverything}, "startupTimeoutSeconds": 240},
	}})
	file := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	if code := run([]string{"check", "--json", "--config", file, "--workspace", dir, "--timeout", "5m"}, &out, &errb); code != 0 {
		t.Fatalf("check exited %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
	var report struct {
		Servers []struct{ Name, State, Error string }
		Tools   []struct{ Name string }
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("check --json: %v\n%s", err, out.String())
	}
	for _, s := range report.Servers {
		if s.State != "ready" {
			t.Errorf("server %s is %s: %s", s.Name, s.State, s.Error)
		}
	}
	tools := map[string]bool{}
	for _, tool := range report.Tools {
		tools[tool.Name] = true
	}
	for _, want := range []string{"mcp__fs__read_text_file", "mcp__fs__write_file", "mcp__everything__echo", "mcp__everything__get-env"} {
		if !tools[want] {
			t.Errorf("tool %s missing from %v", want, tools)
		}
	}

	call := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := run(append([]string{"call"}, append(args, "--config", file, "--workspace", dir)...), &out, &errb)
		return out.String() + errb.String(), code
	}
	if got, code := call("mcp__fs__read_text_file", `{"path":"`+filepath.Join(root, "a.txt")+`"}`, "--mode", "always-allow"); code != 0 || !strings.Contains(got, "hello from a.txt") {
		t.Errorf("read_text_file = %d %q", code, got)
	}
	testNPMRoots(t, root)
	// The gate holds for third-party tools too: not allowlisted in allowlist-only mode, nothing runs.
	if got, code := call("mcp__fs__write_file", `{"path":"`+filepath.Join(root, "b.txt")+`","content":"x"}`, "--mode", "allowlist-only"); code != 1 || !strings.Contains(got, "mcp__fs__write_file was denied: the mode is allowlist-only") {
		t.Errorf("write_file in allowlist-only = %d %q", code, got)
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("write_file ran although denied: %v", err)
	}
	// The child environment is explicit: the host's other variables stay out.
	got, code := call("mcp__everything__get-env", "--mode", "always-allow")
	if code != 0 || !strings.Contains(got, "PATH") {
		t.Errorf("get-env = %d %q", code, got)
	}
	if strings.Contains(got, "s3cr3t-value") || strings.Contains(got, "SWITCHBOARD_TEST_SECRET") {
		t.Errorf("the host's environment leaked into the server: %s", got)
	}
}

// testNPMRoots: the filesystem server given no directory asks for MCP roots and then works in
// them. It asks once it is initialized and applies the answer in the background, so the first
// calls may still see no directory: the test asks until it sees one (bounded).
func testNPMRoots(t *testing.T, root string) {
	r := mcpbridge.NewRegistry(mcpbridge.Options{Roots: func() []string { return []string{root} }})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r.Apply(ctx, []config.ServerConfig{{Name: "fsroots", Transport: config.TransportStdio, Command: "npx",
		Args: []string{"-y", npmFilesystem}, StartupTimeout: 4 * time.Minute, CallTimeout: time.Minute}})
	if err := r.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	var res mcpbridge.Result
	for ctx.Err() == nil {
		res, _ = r.Call(ctx, "mcp__fsroots__list_allowed_directories", nil)
		if res.IsError || strings.Contains(res.Text, root) {
			break
		}
	}
	if res.IsError || !strings.Contains(res.Text, root) {
		t.Fatalf("list_allowed_directories of the server without arguments = %+v; want the root %s (servers %+v)", res, root, r.Servers())
	}
	args, _ := json.Marshal(map[string]string{"path": filepath.Join(root, "a.txt")})
	if res, _ := r.Call(ctx, "mcp__fsroots__read_text_file", args); res.IsError || !strings.Contains(res.Text, "hello from a.txt") {
		t.Errorf("read_text_file through roots = %+v", res)
	}
	args, _ = json.Marshal(map[string]string{"path": filepath.Join(filepath.Dir(root), "outside.txt")})
	if res, _ := r.Call(ctx, "mcp__fsroots__read_text_file", args); !res.IsError {
		t.Errorf("read_text_file outside the roots = %+v, want an error", res)
	}
}
