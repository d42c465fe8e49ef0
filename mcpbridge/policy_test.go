package mcpbridge

import (
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// TestAdmitBlocks: a server the policy blocks is never dialed, shows state blocked with the
// person's sentence and the rule, and starts once the policy lets it (Apply again); the policy
// sees the launch resolved, so ${env:X} cannot dodge it.
func TestAdmitBlocks(t *testing.T) {
	servers := inProc{"a": newInProcServer("a", "t"), "b": newInProcServer("b", "t")}
	var dials atomic.Int32
	const blockCmd = "/opt/evil/server"
	var deny atomic.Bool
	deny.Store(true)
	var seen atomic.Value
	r := newTestRegistry(t, Options{
		Getenv: func(k string) (string, bool) {
			if k == "EVIL" {
				return blockCmd, true
			}
			return "", false
		},
		Admit: func(c config.ServerConfig) *Blocked {
			seen.Store(c.Command)
			if deny.Load() && c.Command == blockCmd {
				return &Blocked{Message: "Blocked by your organisation: x.", Rule: "/etc/switchboard/managed-settings.json#/deniedMcpServers/0", Source: "/etc/switchboard/managed-settings.json"}
			}
			return nil
		},
	})
	r.dial = func(c config.ServerConfig, env []string, log *slog.Logger) (transport.Interface, error) {
		dials.Add(1)
		return servers.dial(c, env, log)
	}
	a, b := inProcCfg("a"), inProcCfg("b")
	a.Command = "${env:EVIL}"
	st := applyAndWait(t, r, a, b)
	if st["a"].State != StateBlocked || !strings.HasPrefix(st["a"].Error, "Blocked by your organisation") ||
		st["a"].Policy == nil || !strings.HasSuffix(st["a"].Policy.Rule, "#/deniedMcpServers/0") {
		t.Fatalf("a = %+v (the policy saw %v)", st["a"], seen.Load())
	}
	if st["b"].State != StateReady || dials.Load() != 1 {
		t.Fatalf("b = %+v, dials %d", st["b"], dials.Load())
	}
	for _, tl := range r.Tools() {
		if tl.Server == "a" {
			t.Fatalf("a blocked server's tool is registered: %s", tl.Name)
		}
	}
	deny.Store(false)
	st = applyAndWait(t, r, a, b)
	if st["a"].State != StateReady || st["a"].Policy != nil {
		t.Fatalf("after the policy changed: %+v", st["a"])
	}
}
