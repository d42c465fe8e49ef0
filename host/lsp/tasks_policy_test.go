package lsp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/lsp"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/permissions/policy"
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

// TestRunningTaskPolicyDenied: while the agent's task runs, the organisation's policy file
// changes to deny its tool. The task is cancelled on its server (tasks/cancel), the model's result
// says the policy denied the tool (never the task's output), the person gets one sentence naming
// the rule, and the task is listed as cancelled, nothing waiting for the agent.
func TestRunningTaskPolicyDenied(t *testing.T) {
	ps := policyTree(t, "")
	state := t.TempDir()
	rec := filepath.Join(state, "rec")
	done := filepath.Join(state, "done") // never written: the task runs until something stops it
	script := filepath.Join(state, "script")
	writeFile(t, script, fmt.Sprintf("reply tool_call id=c1 name=mcp__t__task_slow args={\"file\":%q}\n\n", done)+
		"expect last_tool_result id=c1 ~ `^Tool call mcp__t__task_slow was stopped: the organisation's policy came to deny this tool while its task ran \\(rule .*#/permissions/deny/0\\)`\n"+
		"reply text \"ok\"\n")
	env := runWith(t, hosttest.Config{NoWorkspace: true, Options: withPolicy(ps),
		InitOptions: initOpts(map[string]any{"t": server("--tasks", "--task-poll-ms", "1", "--record", rec)},
			"provider", map[string]any{"type": "script", "script": script})})
	var res chatResult
	env.MustCommand(wire.CmdChat, map[string]any{"prompt": "research go", "mode": "always-allow"}, &res)
	env.Await("the agent's task running", func(*hosttest.State) bool {
		ts := tasksOf(env)
		return len(ts) == 1 && ts[0].State == "running" && strings.HasPrefix(ts[0].Message, "step ")
	})
	writePolicy(t, filepath.Join(ps.Dir, policy.SettingsFile), `{"permissions": {"deny": ["mcp__t__task_slow"]}}`)
	st := env.Await("the person told the task was cancelled", func(s *hosttest.State) bool {
		return len(s.Messages("window/showMessage", "policy")) > 0
	})
	msg := st.Messages("window/showMessage", "policy")[0].Message
	if !strings.Contains(msg, "mcp__t__task_slow") || !strings.Contains(msg, "#/permissions/deny/0") || !strings.Contains(msg, "cancelled") {
		t.Errorf("message = %q; want the task's tool, that it was cancelled, and the rule", msg)
	}
	for _, e := range awaitDone(env, res.Turn) {
		if e.Kind == "error" {
			t.Errorf("turn failed (the model did not get the policy's result): %+v", e)
		}
	}
	ts := tasksOf(env)
	if len(ts) != 1 || ts[0].State != "cancelled" || ts[0].ForAgent || !strings.Contains(ts[0].Message, "policy") {
		t.Fatalf("tasks = %+v; want the task cancelled for the policy, nothing for the agent", ts)
	}
	if b, _ := os.ReadFile(rec); strings.Count(string(b), `"method":"tasks/cancel"`) != 1 {
		t.Errorf("the server did not get one tasks/cancel:\n%s", b)
	}
}

// TestRunningTaskPolicyAsk: a policy change that makes a running task's tool "ask" leaves the
// task running (the call was approved before its task existed; an ask rule governs the calls
// that start after it), and its result reaches the model when it ends.
func TestRunningTaskPolicyAsk(t *testing.T) {
	ps := policyTree(t, "")
	state := t.TempDir()
	rec := filepath.Join(state, "rec")
	done := filepath.Join(state, "done")
	script := filepath.Join(state, "script")
	writeFile(t, script, fmt.Sprintf("reply tool_call id=c1 name=mcp__t__task_slow args={\"file\":%q}\n\n", done)+
		"expect last_tool_result id=c1 ~ `^task_slow done`\nreply text \"ok\"\n")
	env := runWith(t, hosttest.Config{NoWorkspace: true, Options: withPolicy(ps),
		InitOptions: initOpts(map[string]any{"t": server("--tasks", "--task-poll-ms", "1", "--record", rec), "o": server("-name", "o")},
			"provider", map[string]any{"type": "script", "script": script})})
	var res chatResult
	env.MustCommand(wire.CmdChat, map[string]any{"prompt": "research go", "mode": "always-allow"}, &res)
	env.Await("the agent's task running", func(*hosttest.State) bool {
		ts := tasksOf(env)
		return len(ts) == 1 && ts[0].State == "running" && strings.HasPrefix(ts[0].Message, "step ")
	})
	// Blocking server o too shows when the host has applied this policy (the same change).
	writePolicy(t, filepath.Join(ps.Dir, policy.SettingsFile), `{"permissions": {"ask": ["mcp__t__task_slow"]}, "deniedMcpServers": [{"serverName": "o"}]}`)
	env.AwaitServer("o", "blocked")
	if ts := tasksOf(env); len(ts) != 1 || ts[0].State != "running" {
		t.Fatalf("tasks after the ask rule = %+v; want the task still running", ts)
	}
	writeFile(t, done, "")
	for _, e := range awaitDone(env, res.Turn) {
		if e.Kind == "error" {
			t.Errorf("turn failed (the model did not get the task's result): %+v", e)
		}
	}
	if b, _ := os.ReadFile(rec); strings.Contains(string(b), `"method":"tasks/cancel"`) {
		t.Errorf("the server got tasks/cancel for an ask rule")
	}
}

// TestResumedTaskLivePolicyDenied: a task followed again after a restart is running when the
// organisation's policy comes to deny its tool. It is cancelled on its server, nothing of it
// waits for the agent or is offered to the person as the tool's result, and the person is told
// naming the rule.
func TestResumedTaskLivePolicyDenied(t *testing.T) {
	state := t.TempDir()
	done := filepath.Join(state, "done") // never written
	serverState := filepath.Join(state, "server-tasks.json")
	srv := server("--tasks", "--task-poll-ms", "1", "--task-state", serverState)
	restartWithTask(t, state, done, srv)

	ps := policyTree(t, "")
	script := filepath.Join(state, "second.script")
	writeFile(t, script, "expect last_user ~ \"^hello$\"\nreply text \"ok\"\n")
	env := runWith(t, hosttest.Config{NoWorkspace: true,
		Options: func(o *lsp.Options) {
			o.PinsPath = filepath.Join(state, "pins.json")
			withPolicy(ps)(o)
		},
		InitOptions: initOpts(map[string]any{"t": srv}, "provider", map[string]any{"type": "script", "script": script})})
	env.Await("the task followed again", func(*hosttest.State) bool {
		ts := tasksOf(env)
		return len(ts) == 1 && ts[0].State == "running" && ts[0].Here
	})
	writePolicy(t, filepath.Join(ps.Dir, policy.SettingsFile), `{"permissions": {"deny": ["mcp__t__task_slow"]}}`)
	st := env.Await("the person told the task was cancelled", func(s *hosttest.State) bool {
		return len(s.Messages("window/showMessage", "policy")) > 0
	})
	msg := st.Messages("window/showMessage", "policy")[0].Message
	if !strings.Contains(msg, "mcp__t__task_slow") || !strings.Contains(msg, "#/permissions/deny/0") {
		t.Errorf("message = %q; want the tool and the rule named", msg)
	}
	ts := tasksOf(env)
	if len(ts) != 1 || ts[0].State != "cancelled" || ts[0].ForAgent || ts[0].Result != "" || !strings.Contains(ts[0].Message, "policy") {
		t.Fatalf("tasks = %+v; want the task cancelled for the policy, nothing kept or waiting for the agent", ts)
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
