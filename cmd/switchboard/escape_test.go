package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// rawControls reports the first character in out that could act on a terminal or hide text
// (newlines and tabs aside), with some context.
func rawControls(out []byte) (string, bool) {
	s := string(out)
	for i, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if r == utf8.RuneError || safetext.Needs(r) {
			lo, hi := max(0, i-40), min(len(s), i+40)
			return s[lo:hi], true
		}
	}
	return "", false
}

// runBinary runs the real switchboard binary and returns its stdout and stderr.
func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr []byte) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = e2eEnv(t)
	cmd.Stdin = strings.NewReader("") // not a terminal
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return o.Bytes(), e.Bytes()
}

// TestHostileServerTextEscaped: a server (and a config file) that put ESC[2J, an OSC 52 clipboard
// write, BEL, CR and RLO in its args, stderr, tool descriptions, results and key names reach the
// terminal of `switchboard check` and `switchboard call` escaped: none of those bytes is printed.
func TestHostileServerTextEscaped(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	evil := "\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\r\u202e"
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"h":        map[string]any{"command": mcptest, "args": []string{"--hostile", "--", "arg" + evil}},
		"broken":   map[string]any{"command": mcptest, "args": []string{"--hostile", "--exit-at-start"}},
		"k":        map[string]any{"command": "true", "key" + evil: 1},
		"n" + evil: map[string]any{"command": "true"},
	}})
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("check", func(t *testing.T) {
		stdout, stderr := runBinary(t, bin, "check", "--config", cfg, "--workspace", dir)
		for name, out := range map[string][]byte{"stdout": stdout, "stderr": stderr} {
			if at, bad := rawControls(out); bad {
				t.Errorf("check %s prints a raw control or invisible character near %q:\n%s", name, at, out)
			}
		}
		all := string(stdout) + string(stderr)
		for _, want := range []string{
			`Hostile clear\x1b[2J osc52\x1b]52;c;`,         // the tool description
			`| mcptest: clear\x1b[2J osc52\x1b]52;c;`,      // the failed server's stderr tail
			`arg\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\r\u202e`, // the args in "runs:"
		} {
			if !strings.Contains(all, want) {
				t.Errorf("check output lacks %q:\n%s", want, all)
			}
		}
	})

	// The JSON carries the server's text exactly, as JSON escapes: a person reading it on the
	// terminal sees \u202e, and a program decoding it gets the character back.
	t.Run("check --json", func(t *testing.T) {
		stdout, stderr := runBinary(t, bin, "check", "--json", "--config", cfg, "--workspace", dir)
		if at, bad := rawControls(append(stdout, stderr...)); bad {
			t.Errorf("check --json prints a raw control or invisible character near %q:\n%s", at, stdout)
		}
		var rep checkReport
		if err := json.Unmarshal(stdout, &rep); err != nil {
			t.Fatalf("check --json: %v\n%s", err, stdout)
		}
		found := false
		for _, tool := range rep.Tools {
			found = found || strings.Contains(tool.Description, "rlo\u202etxt.exe zw\u200b")
		}
		if !found {
			t.Errorf("check --json: no tool description carries the server's text as it sent it:\n%s", stdout)
		}
	})

	t.Run("call", func(t *testing.T) {
		stdout, stderr := runBinary(t, bin, "call", "mcp__h__hostile", "--config", cfg, "--mode", "always-allow")
		for name, out := range map[string][]byte{"stdout": stdout, "stderr": stderr} {
			if at, bad := rawControls(out); bad {
				t.Errorf("call %s prints a raw control or invisible character near %q:\n%s", name, at, out)
			}
		}
		want := "result line 1\n\tindented clear\\x1b[2J osc52\\x1b]52;c;cm0gLXJmIH4=\\x07 bel\\x07 cr\\rFAKE rlo\\u202etxt.exe zw\\u200b\n"
		if string(stdout) != want {
			t.Errorf("call stdout = %q, want %q (block form: lines and tabs kept, the rest escaped)", stdout, want)
		}
	})
}
