package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/permissions"
)

// TestHelpExitsZero: every command and subcommand answers -h, -help and --help (also after an
// argument, and as switchboard help COMMAND) with its usage on stdout, exit 0, nothing on stderr,
// and does nothing else: no file is written. The table comes from the dispatch table
// (subcommands() and each command's subs), so a new command is in it by construction.
func TestHelpExitsZero(t *testing.T) {
	cases := [][]string{{}, {"help"}}
	for _, c := range subcommands() {
		cases = append(cases, []string{c.name}, []string{"help", c.name})
		for _, sub := range c.subs {
			words := strings.Fields(sub)
			cases = append(cases, append([]string{c.name}, words...), append([]string{c.name}, append(words, "x")...))
		}
	}
	cases = append(cases, []string{"--stdio"}, []string{"mcp", "add", "x", "--url", "http://127.0.0.1:1"})
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("XDG_STATE_HOME", home)
	t.Setenv("HOME", home)
	t.Chdir(home)
	for _, base := range cases {
		for _, flag := range []string{"-h", "-help", "--help"} {
			args := append(append([]string{}, base...), flag)
			if len(base) > 0 && base[0] == "help" {
				args = base // switchboard help [COMMAND]
			}
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			line := "switchboard " + strings.Join(args, " ")
			if code != 0 || stderr.Len() != 0 {
				t.Errorf("%s: exit %d, stderr %q; want 0 and nothing on stderr", line, code, stderr.String())
			}
			want := "usage"
			if name := helpName(base); name != "" {
				want = "switchboard " + name
			}
			if out := stdout.String(); !strings.HasPrefix(out, "usage") || !strings.Contains(out, want) {
				t.Errorf("%s: stdout %q; want the usage, naming %q", line, out, want)
			}
		}
	}
	if ents, _ := os.ReadDir(home); len(ents) != 0 {
		t.Errorf("asking for help wrote %v", ents)
	}
	// A real usage error still exits 2, and an unknown command is one.
	for _, args := range [][]string{{"check", "--nope"}, {"help", "nope"}, {"mcp", "add", "--nope"}} {
		if code := run(args, io.Discard, io.Discard); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

// helpName is the command the usage must name for a help case (its name; "" for the top level).
func helpName(base []string) string {
	if len(base) > 0 && base[0] == "help" {
		base = base[1:]
	}
	if len(base) == 0 {
		return ""
	}
	if base[0] == "--stdio" {
		return "serve"
	}
	return base[0]
}

// TestCheckOneServerAndTrustStore: "1 MCP server" (not "1 MCP servers"), and a workspace server the
// person trusted (trust.json, as the editors record it) is started and reported as such, not
// UNTRUSTED; a changed definition is untrusted again.
func TestCheckOneServerAndTrustStore(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home) // no user file; trust.json under it
	bin := checkBuildMCPTest(t)
	ws := filepath.Join(t.TempDir(), "ws")
	checkWriteJSON(t, filepath.Join(ws, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"wsonly": map[string]any{"command": bin},
	}})
	var stdout, stderr bytes.Buffer
	runCheck([]string{"--workspace", ws}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "1 MCP server: 1 untrusted; 0 tools") {
		t.Errorf("untrusted report:\n%s", stdout.String())
	}
	cfgs, errs := config.LoadConfig(config.ConfigSources{WorkspaceFolders: []string{ws}})
	if len(errs) > 0 || len(cfgs) != 1 {
		t.Fatalf("config = %v, %v", cfgs, errs)
	}
	ts, err := permissions.OpenTrustStore(permissions.DefaultTrustPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.SetDefinition("wsonly", cfgs[0].Fingerprint(), true, cfgs[0].Definition()); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := runCheck([]string{"--workspace", ws}, &stdout, &stderr); code != 0 {
		t.Errorf("exit %d, want 0\n%s", code, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "1 MCP server: 1 ready; 8 tools") || !strings.Contains(out, "wsonly  READY") || strings.Contains(out, "--trust-workspace") {
		t.Errorf("trusted report:\n%s", out)
	}
	// Another definition under the same name is not trusted by that decision.
	checkWriteJSON(t, filepath.Join(ws, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"wsonly": map[string]any{"command": bin, "args": []string{"--tools", "1"}},
	}})
	stdout.Reset()
	runCheck([]string{"--workspace", ws}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "wsonly  UNTRUSTED") {
		t.Errorf("changed definition:\n%s", stdout.String())
	}
}

// TestCheckListsBadEntries: an entry the configuration rejects is listed with the servers, with
// its file and key, not only on stderr.
func TestCheckListsBadEntries(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	cfg := checkWriteJSON(t, filepath.Join(dir, "bad.json"), map[string]any{"mcpServers": map[string]any{
		"bad": map[string]any{"type": "stdio"},
	}})
	var stdout, stderr bytes.Buffer
	if code := runCheck([]string{"--config", cfg, "--workspace", dir}, &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	out := stdout.String()
	if !strings.Contains(out, "1 MCP server: 1 failed") || !strings.Contains(out, "bad  FAILED") ||
		!strings.Contains(out, "source:  "+cfg) || !strings.Contains(out, "error:   configuration: command") {
		t.Errorf("report:\n%s", out)
	}
}
