package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// TestNPMEverythingResources: the npm reference server's resources (static, templates with
// completion, binary), prompts with arguments and completion that depends on another argument,
// through the registry and the CLI.
func TestNPMEverythingResources(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads the npm reference server")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	cfg := config.ServerConfig{Name: "everything", Transport: config.TransportStdio, Command: "npx",
		Args: []string{"-y", npmEverything}, StartupTimeout: 4 * time.Minute}
	r := mcpbridge.NewRegistry(mcpbridge.Options{})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r.Apply(ctx, []config.ServerConfig{cfg})
	if err := r.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if st := r.Servers()[0]; st.State != mcpbridge.StateReady {
		t.Fatalf("everything is %s: %s\n%s", st.State, st.Error, st.StderrTail)
	}

	rs, ts, err := r.Resources(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	var static string
	for _, res := range rs {
		if strings.HasPrefix(res.URI, "demo://resource/static/document/") && static == "" {
			static = res.URI
		}
	}
	var templates []string
	for _, tm := range ts {
		templates = append(templates, tm.URITemplate)
	}
	if static == "" || !slices.Contains(templates, "demo://resource/dynamic/text/{resourceId}") {
		t.Fatalf("resources %+v\ntemplates %v", rs, templates)
	}
	read, err := r.ReadResource(ctx, "everything", static)
	if err != nil || len(read.Contents) == 0 || read.Contents[0].Text == "" {
		t.Errorf("read %s = %+v, %v", static, read, err)
	}
	read, err = r.ReadResource(ctx, "everything", "demo://resource/dynamic/text/7")
	if err != nil || len(read.Contents) != 1 || !strings.HasPrefix(read.Contents[0].Text, "Resource 7: ") {
		t.Errorf("read a template's resource = %+v, %v", read, err)
	}
	read, err = r.ReadResource(ctx, "everything", "demo://resource/dynamic/blob/3")
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Blob == "" {
		t.Errorf("read a blob = %+v, %v", read, err)
	}
	vals, err := r.Complete(ctx, "everything", mcpbridge.CompleteRef{URI: "demo://resource/dynamic/text/{resourceId}"}, "resourceId", "5", nil)
	if err != nil || !slices.Equal(vals, []string{"5"}) {
		t.Errorf("complete resourceId = %v, %v", vals, err)
	}

	ps, err := r.Prompts(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ps, func(p mcpbridge.Prompt) bool { return p.Name == "args-prompt" && len(p.Arguments) == 2 }) {
		t.Errorf("prompts %+v", ps)
	}
	vals, err = r.Complete(ctx, "everything", mcpbridge.CompleteRef{Prompt: "completable-prompt"}, "name", "", map[string]string{"department": "Sales"})
	if err != nil || !slices.Equal(vals, []string{"David", "Eve", "Frank"}) {
		t.Errorf("complete name in Sales = %v, %v", vals, err)
	}
	got, err := r.GetPrompt(ctx, "everything", "args-prompt", map[string]string{"city": "Oslo"})
	if err != nil || len(got.Messages) != 1 || got.Messages[0].Text != "What's weather in Oslo?" {
		t.Errorf("args-prompt = %+v, %v", got, err)
	}

	// The CLI, as a person runs it.
	file := filepath.Join(dir, "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": "npx", "args": []string{"-y", npmEverything}, "startupTimeoutSeconds": 240}}})
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := run(append(args, "--config", file, "--workspace", dir), &out, &errb)
		return out.String() + errb.String(), code
	}
	if out, code := cli("prompt", "args-prompt", `{"city":"Oslo","state":"Norway"}`); code != 0 || !strings.Contains(out, "user: What's weather in Oslo, Norway?") {
		t.Errorf("switchboard prompt = %d %q", code, out)
	}
	if out, code := cli("read", "demo://resource/dynamic/text/2"); code != 0 || !strings.Contains(out, "Resource 2: ") {
		t.Errorf("switchboard read = %d %q", code, out)
	}
}
