package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/permissions"
)

// newCallApp builds the application as `switchboard call` does (host.New with the terminal UI),
// with its files in a temporary directory and lines typed on the terminal.
func newCallApp(t *testing.T, typed string, term bool) (*host.App, *bytes.Buffer, string) {
	t.Helper()
	dir := t.TempDir()
	var out bytes.Buffer
	ui := &terminalUI{stderr: &out}
	if term {
		ui.term = newTerminal(strings.NewReader(typed), &out)
	}
	app, err := host.New(host.Options{
		UserConfigFile:     filepath.Join(dir, "mcp.json"),
		ProviderConfigFile: filepath.Join(dir, "config.json"),
		AllowlistPath:      filepath.Join(dir, "allow_tool"),
		TrustPath:          filepath.Join(dir, "trust.json"),
		NoAudit:            true,
		Env:                func(string) string { return "" },
	}, ui)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Close)
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	app.StartAndWait(t.Context(), []string{ws}, host.Settings{Mode: permissions.SingleConfirm})
	return app, &out, ws
}

// TestCallTerminalUI: `switchboard call` asks the gate's question on the terminal through the same
// application as the editor; the answer typed there decides, and "deny" or no terminal runs nothing.
func TestCallTerminalUI(t *testing.T) {
	args := json.RawMessage(`{"path":"a.txt","content":"hi"}`)
	for _, tc := range []struct {
		name    string
		typed   string
		term    bool
		allowed bool
		by      string
	}{
		{"once", "o\n", true, true, permissions.ByUser},
		{"deny", "d\n", true, false, permissions.ByUser},
		{"end of input", "", true, false, permissions.ByDisconnect},
		{"no terminal", "", false, false, permissions.ByDisconnect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, out, ws := newCallApp(t, tc.typed, tc.term)
			res, dec := app.CallTool(context.Background(), host.CallRequest{Name: "edit_file", Arguments: args})
			if dec.Allowed != tc.allowed || dec.By != tc.by {
				t.Errorf("decision = %+v (result %q); want allowed=%v by %s", dec, res.Text, tc.allowed, tc.by)
			}
			b, err := os.ReadFile(filepath.Join(ws, "a.txt"))
			if tc.allowed && string(b) != "hi" {
				t.Errorf("a.txt = %q, %v; want written", b, err)
			}
			if !tc.allowed && err == nil {
				t.Errorf("a.txt written although denied")
			}
			if tc.term && !strings.Contains(out.String(), "Allow edit_file?") {
				t.Errorf("terminal shows %q; want the question", out.String())
			}
			if n := len(app.Pending(host.KindApproval)); n != 0 {
				t.Errorf("%d approvals still pending", n)
			}
		})
	}
}

// TestCallHintsWorkspaceServer: check lists the current directory's workspace servers by
// default, call reads them only with --workspace; a call to one without it says so, beyond "no
// MCP server named ... is configured" (which was all it said), and nothing is started.
func TestCallHintsWorkspaceServer(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("XDG_STATE_HOME", home)
	ws := t.TempDir()
	checkWriteJSON(t, filepath.Join(ws, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"wsonly": map[string]any{"command": filepath.Join(ws, "never-started")},
	}})
	t.Chdir(ws)
	var out, errb bytes.Buffer
	code := run([]string{"call", "mcp__wsonly__echo", "{}", "--mode", "always-allow"}, &out, &errb)
	want := "switchboard call: .mcp.json in this folder defines wsonly: add --workspace . to use this folder's servers"
	if code != 1 || !strings.Contains(errb.String(), "No MCP server named 'wsonly' is configured") || !strings.Contains(errb.String(), want) {
		t.Errorf("call: exit %d, stderr %q; want 1 and %q", code, errb.String(), want)
	}
	errb.Reset()
	if code := run([]string{"call", "mcp__other__echo", "{}", "--mode", "always-allow"}, &out, &errb); code != 1 || strings.Contains(errb.String(), "--workspace") {
		t.Errorf("call of a server no file defines: exit %d, stderr %q; want 1 and no hint", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"call", "mcp__wsonly__echo", "{}", "--mode", "always-allow", "--workspace", "."}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "not trusted") || strings.Contains(errb.String(), "add --workspace") {
		t.Errorf("call --workspace .: exit %d, stderr %q; want 1, untrusted and no hint", code, errb.String())
	}
}
