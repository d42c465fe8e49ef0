//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSharedHostileTextEscaped: a shared server whose arguments and stderr carry terminal escapes
// (ESC[2J, OSC 52, BEL, CR, RLO, a zero-width space): `switchboard daemon status` shows its
// display form escaped, and when it crashes, both windows using it get its failure and stderr
// tail (relayed by the daemon, not read from a pipe of their own) escaped.
func TestSharedHostileTextEscaped(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	_, env := sharedRuntime(t, bin)
	evil := "\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\r\u202e\u200b"
	servers := map[string]any{"h": map[string]any{"command": mcptest, "args": []string{"--hostile", "--crash-after", "1", "--", "arg" + evil}, "shared": true}}
	var wins []*e2eEditor
	for i := range 2 {
		e := startE2E(t, bin, env)
		t.Cleanup(func() { e.stdin.Close(); e.wait() })
		e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
			"initializationOptions": map[string]any{"daemonIdleSeconds": 5, "servers": servers}})
		e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		e.await("h ready, shared", func(ms []e2eMsg) bool {
			s, ok := lastStatus(ms, "h")
			return ok && s.State == "ready" && s.Shared != nil && s.Shared.Windows == i+1
		})
		wins = append(wins, e)
	}
	cmd := exec.Command(bin, "daemon", "status")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "  h  user scope, 2 windows") {
		t.Fatalf("daemon status: %v\n%s", err, out)
	}
	if ctx, bad := rawControls(out); bad {
		t.Errorf("daemon status printed a raw control or bidi character: %q", ctx)
	}
	echo(wins[0], "h", "one")
	echo(wins[0], "h", "two") // the server exits in the middle of its second call
	for i, e := range wins {
		e.await("h failed", func(ms []e2eMsg) bool {
			s, _ := lastStatus(ms, "h")
			return s.State == "failed"
		})
		msgs, _ := e.lsp.Messages()
		var st struct{ Error, StderrTail string }
		for j := len(msgs) - 1; j >= 0; j-- {
			if msgs[j].Method == "switchboard/serversChanged" {
				var p struct {
					Servers []struct{ Name, Error, StderrTail string }
				}
				json.Unmarshal(msgs[j].Params, &p)
				for _, s := range p.Servers {
					if s.Name == "h" {
						st.Error, st.StderrTail = s.Error, s.StderrTail
					}
				}
				break
			}
		}
		if !strings.Contains(st.StderrTail, "osc52") {
			t.Errorf("window %d: h failed without its stderr tail: %+v", i, st)
		}
		for _, s := range []string{st.Error, st.StderrTail} {
			if ctx, bad := rawControls([]byte(s)); bad {
				t.Errorf("window %d: a raw control or bidi character in h's status: %q", i, ctx)
			}
		}
	}
}
