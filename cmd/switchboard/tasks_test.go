//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

type fTask struct {
	ID, Tool, TaskID, State, Status, Message, Result, StartedBy string
	Here                                                        bool
}

// tasks runs switchboard.tasks.
func (e *fEditor) tasks() []fTask {
	e.t.Helper()
	var r struct{ Tasks []fTask }
	e.command("switchboard.tasks", nil, &r)
	return r.Tasks
}

// waitTasks re-reads switchboard.tasks after every notification until ok holds (bounded).
func (e *fEditor) waitTasks(what string, ok func([]fTask) bool) []fTask {
	e.t.Helper()
	deadline := time.After(faultBound())
	tick := time.NewTicker(100 * time.Millisecond) // the task file moves without notifications too
	defer tick.Stop()
	for {
		_, sig := e.notes()
		ts := e.tasks()
		if ok(ts) {
			return ts
		}
		select {
		case <-sig:
		case <-tick.C:
		case <-e.exited:
			e.t.Fatalf("waiting for %s: the host exited", what)
		case <-deadline:
			e.t.Fatalf("waiting for %s: not within %v; tasks: %+v", what, faultBound(), ts)
		}
	}
}

// waitMessages waits (bounded) until ok holds for every message the host sent so far, requests
// included (notes has notifications only).
func (e *fEditor) waitMessages(what string, ok func([]fMsg) bool) {
	e.t.Helper()
	deadline := time.After(faultBound())
	for {
		msgs, sig := e.lsp.Messages()
		if ok(msgs) {
			return
		}
		select {
		case <-sig:
		case <-e.exited:
			e.t.Fatalf("waiting for %s: the host exited", what)
		case <-deadline:
			e.t.Fatalf("waiting for %s: not within %v", what, faultBound())
		}
	}
}

// TestTaskSurvivesHostKill: a host killed (SIGKILL) while a tool call runs as an MCP task leaves
// the task running; the next host finds it in its state file, follows it by id without calling the
// tool again, and tells the person its result.
func TestTaskSurvivesHostKill(t *testing.T) {
	needFaultBinaries(t)
	dir := t.TempDir()
	rec, done := filepath.Join(dir, "server.rec"), filepath.Join(dir, "done")
	servers := map[string]fServer{"t": fMcptest("--tasks", "--task-poll-ms", "1",
		"--task-state", filepath.Join(dir, "server-tasks.json"), "--record", rec)}
	e1 := startFaultHost(t, fHostOpts{dir: dir, servers: servers})
	e1.waitServers("t ready", fStateIs("t", "ready"))
	e1.send("workspace/executeCommand", fCallToolParams("mcp__t__task_slow", map[string]any{"file": done}, "always-allow"))
	running := e1.waitTasks("the task running", func(ts []fTask) bool {
		return len(ts) == 1 && ts[0].State == "running" && strings.HasPrefix(ts[0].Message, "step ")
	})
	fWaitFile(t, filepath.Join(dir, "state", "switchboard", "tasks.json"), "the task in the host's state file", fContains(running[0].TaskID))
	e1.noteChildren()
	syscall.Kill(-e1.cmd.Process.Pid, syscall.SIGKILL) // ignore error: checked by the wait
	e1.waitExit("the killed host")

	e2 := startFaultHost(t, fHostOpts{dir: dir, servers: servers})
	resumed := e2.waitTasks("the task followed again", func(ts []fTask) bool {
		return len(ts) == 1 && ts[0].State == "running" && ts[0].Here
	})
	if resumed[0].ID != running[0].ID || resumed[0].StartedBy != "callTool" {
		t.Errorf("resumed %+v, was %+v", resumed[0], running[0])
	}
	if err := os.WriteFile(done, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ended := e2.waitTasks("the task completed", func(ts []fTask) bool { return len(ts) == 1 && ts[0].State == "completed" })
	if !strings.HasPrefix(ended[0].Result, "task_slow done after ") {
		t.Errorf("result kept for the person = %q", ended[0].Result)
	}
	e2.waitMessages("the person told, with Show result", func(ms []fMsg) bool {
		for _, m := range ms {
			if m.Method == "window/showMessageRequest" && strings.Contains(string(m.Params), "has finished") && strings.Contains(string(m.Params), `"Show result"`) {
				return true
			}
		}
		return false
	})
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"method":"tools/call"`); n != 1 {
		t.Errorf("tools/call reached the server %d times across both hosts, want 1", n)
	}
	if strings.Contains(string(b), `"method":"tasks/cancel"`) {
		t.Error("a host sent tasks/cancel: the kill or the restart cancelled the task")
	}
	e2.shutdown()
}

// TestCallTaskInterrupted: `switchboard call` of a tool that runs as a task shows the task's line on
// stderr, and Ctrl-C (SIGINT) sends the server tasks/cancel before it exits.
func TestCallTaskInterrupted(t *testing.T) {
	needFaultBinaries(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "server.rec")
	cfg := filepath.Join(dir, "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": map[string]any{
		"command": fBins.mcptest, "args": []string{"--tasks", "--task-poll-ms", "1", "--record", rec}}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	errf := filepath.Join(dir, "stderr")
	ef, err := os.Create(errf)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	var out bytes.Buffer
	cmd := exec.Command(fBins.switchboard, "call", "mcp__t__task_slow", `{"polls":1000000}`, "--config", cfg, "--mode", "always-allow")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_STATE_HOME=" + filepath.Join(dir, "state")}
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, ef, strings.NewReader("")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // ignore error: exited
	fWaitFile(t, errf, "the task's line on stderr", fContains("switchboard call: mcp__t__task_slow: step 1 of 1000000 · "))
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("exit code 0 after Ctrl-C (err %v)", err)
	}
	got, _ := os.ReadFile(rec)
	if n := strings.Count(string(got), `"method":"tasks/cancel"`); n != 1 {
		t.Errorf("the server got %d tasks/cancel, want 1", n)
	}
}

// TestCallServerEverythingTask: the issue's command, `switchboard call
// mcp__everything__simulate-research-query '{"topic":"go"}' --mode always-allow`, completes through
// server-everything's task (npx -y, as users run it).
func TestCallServerEverythingTask(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the npm reference server")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": "npx", "args": []string{"-y", npmEverything, "stdio"}, "startupTimeoutSeconds": 240},
	}})
	file := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"topic":"go"}`, `{"topic":"go","ambiguous":true}`} {
		var out, errb bytes.Buffer
		code := run([]string{"call", "mcp__everything__simulate-research-query", args, "--mode", "always-allow", "--config", file, "--workspace", dir}, &out, &errb)
		if code != 0 || !strings.Contains(out.String(), "# Research Report: go") {
			t.Fatalf("call %s: exit %d\nstdout: %s\nstderr: %s", args, code, out.String(), errb.String())
		}
		if !strings.Contains(errb.String(), "simulate-research-query: Gathering sources...") {
			t.Errorf("call %s: stderr has no task line:\n%s", args, errb.String())
		}
	}
}

// TestCallTaskHostileStatus: a task's status message with terminal escapes (screen clear, OSC 52,
// BEL, CR, RLO) reaches the terminal escaped.
func TestCallTaskHostileStatus(t *testing.T) {
	needFaultBinaries(t)
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": map[string]any{
		"command": fBins.mcptest, "args": []string{"--tasks", "--task-poll-ms", "1", "--hostile"}}}})
	file := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"call", "mcp__t__task_slow", `{"polls":2}`, "--mode", "always-allow", "--config", file, "--workspace", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "step 1 of 2 clear") {
		t.Fatalf("no task line on stderr:\n%s", errb.String())
	}
	for _, bad := range []string{"\x1b", "\a", "\r", "\u202e", "\u200b"} {
		if strings.Contains(errb.String(), bad) {
			t.Errorf("stderr carries %q raw:\n%q", bad, errb.String())
		}
	}
}
