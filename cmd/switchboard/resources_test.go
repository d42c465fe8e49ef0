package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestResourcesCLI: resources, read, prompts and prompt on the real binary against mcptest
// --resources --hostile: the listings and contents arrive, and nothing the server sent acts on the
// terminal.
func TestResourcesCLI(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"r": map[string]any{"command": mcptest, "args": []string{"--resources", "--hostile"}},
		"t": map[string]any{"command": mcptest},
	}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := e2eEnv(t)
	runCLI := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--config", cfg)...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader("")
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		for _, s := range []string{o.String(), e.String()} {
			if ctx, bad := rawControls([]byte(s)); bad {
				t.Errorf("%v printed a raw control: %q", args, ctx)
			}
		}
		return o.String(), e.String(), code
	}
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"resources"}, 0, []string{"r\tmcptest://static/readme\treadme: A static text.", "r\tmcptest://notes/{name}\tnotes (template)", `hostile clear\x1b[2J`}},
		{[]string{"resources", "t"}, 0, []string{"no resources"}},
		{[]string{"read", "mcptest://notes/alpha"}, 0, []string{"note alpha\n"}},
		{[]string{"read", "mcptest://static/readme", "--server", "r"}, 0, []string{"# mcptest\nA static resource.\n"}},
		{[]string{"read", "mcptest://hostile"}, 0, []string{`resource clear\x1b[2J`, "</attached-resource>"}},
		{[]string{"read", "mcptest://static/logo"}, 0, []string{"[binary content image/png, 12 bytes of base64]"}},
		{[]string{"prompts"}, 0, []string{"r\treview(topic*, style): Ask for a review of a topic."}},
		{[]string{"prompt", "review", `{"topic":"beta","style":"thorough"}`}, 0, []string{"user: Please give a thorough review of beta.\n"}},
		{[]string{"prompt", "hostile"}, 0, []string{`user: prompt clear\x1b[2J`}},
		// A required argument left out is named, with the command that gives it (the server's own
		// refusal read "host: prompt r: internal error: topic is required").
		{[]string{"prompt", "review"}, 1, []string{`switchboard prompt: prompt review needs the argument topic: switchboard prompt review '{"topic":"..."}'`}},
		{[]string{"prompt", "review", `{"style":"short"}`, "--server", "r"}, 1, []string{"prompt review needs the argument topic"}},
		{[]string{"prompt", "review", "[1]"}, 1, []string{"ARGS-JSON must be a JSON object"}},
		{[]string{"prompt", "nope"}, 1, []string{"no server offers a prompt nope"}},
		{[]string{"read", "other://x"}, 1, []string{"no server offers other://x"}},
		{[]string{"resources", "nope"}, 2, []string{"unknown server"}},
		{[]string{"read"}, 2, []string{"wrong number of arguments"}},
	} {
		out, errOut, code := runCLI(tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\nstdout %q\nstderr %q", tc.args, code, tc.code, out, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out+errOut, w) {
				t.Errorf("%v: output lacks %q\nstdout %q\nstderr %q", tc.args, w, out, errOut)
			}
		}
	}
}
