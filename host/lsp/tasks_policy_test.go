package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/lsp"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// TestResumedTaskPolicyDenied: a task the agent started is left running by a host that stopped;
// while no host ran, the organisation's policy came to deny its tool. The next host must not
// follow it and hand its result to the agent (or offer it to the person as the tool's): it
// cancels the task on its server (tasks/cancel) and says why, naming the rule.
func TestResumedTaskPolicyDenied(t *testing.T) {
	state := t.TempDir()
	done := filepath.Join(state, "done") // never written: the task runs until something stops it
	serverState := filepath.Join(state, "server-tasks.json")
	srv := server("--tasks", "--task-poll-ms", "1", "--task-state", serverState)
	restartWithTask(t, state, done, srv)

	ps := policyTree(t, `{"permissions": {"deny": ["mcp__t__task_slow"]}}`)
	script := filepath.Join(state, "second.script")
	writeFile(t, script, "expect last_user ~ \"^hello$\"\nreply text \"ok\"\n")
	env := runWith(t, hosttest.Config{NoWorkspace: true,
		Options: func(o *lsp.Options) {
			o.PinsPath = filepath.Join(state, "pins.json")
			withPolicy(ps)(o)
		},
		InitOptions: initOpts(map[string]any{"t": srv}, "provider", map[string]any{"type": "script", "script": script})})
	st := env.Await("the person told the task was cancelled", func(s *hosttest.State) bool {
		return len(s.Messages("window/showMessage", "policy")) > 0
	})
	msg := st.Messages("window/showMessage", "policy")[0].Message
	if !strings.Contains(msg, "mcp__t__task_slow") || !strings.Contains(msg, "#/permissions/deny/0") {
		t.Errorf("message = %q; want the tool and the rule named", msg)
	}
	ts := tasksOf(env)
	if len(ts) != 1 || ts[0].State != "cancelled" || ts[0].ForAgent {
		t.Fatalf("tasks = %+v; want the task cancelled, nothing for the agent", ts)
	}
	if data, _ := os.ReadFile(serverState); !strings.Contains(string(data), `"cancelled": true`) && !strings.Contains(string(data), `"cancelled":true`) {
		t.Errorf("the server's task was not cancelled:\n%s", data)
	}
	var res chatResult
	env.MustCommand(wire.CmdChat, map[string]any{"prompt": "hello"}, &res)
	for _, e := range awaitDone(env, res.Turn) {
		if e.Kind == "error" {
			t.Errorf("turn failed (the script expects nothing handed back): %+v", e)
		}
	}
}
