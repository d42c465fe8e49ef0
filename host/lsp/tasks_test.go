package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// tasksOf runs switchboard.tasks.
func tasksOf(env *hosttest.Env) []wire.TaskInfo {
	var r wire.TasksResult
	env.MustCommand(wire.CmdTasks, nil, &r)
	return r.Tasks
}

// TestTaskProgressAndCancel: a call its server runs as an MCP task shows the task's status
// message and elapsed time as the call's work-done progress, is listed by switchboard.tasks, and
// cancelling the progress sends the server tasks/cancel; the call answers that the user cancelled.
func TestTaskProgressAndCancel(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec")
	env := runWith(t, hosttest.Config{WorkDoneProgress: true,
		InitOptions: initOpts(map[string]any{"t": server("--tasks", "--task-poll-ms", "1", "--record", rec)})})
	awaitProgress(env, "Switchboard", lastIs("end", "Connected 1 MCP server"))
	const title = "Switchboard: mcp__t__task_slow"

	var res toolResult
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__task_slow", "arguments": map[string]any{"polls": 3}, "mode": "always-allow"}, &res)
	if res.IsError || res.Text != "task_slow done after 3 polls" {
		t.Fatalf("callTool = %+v", res)
	}
	ps := awaitProgress(env, title, lastIs("end", "done"))
	var lines []string
	for _, p := range ps {
		lines = append(lines, p.Value.Message)
	}
	if !strings.HasPrefix(ps[0].Value.Message, "started · ") || !strings.Contains(strings.Join(lines, "\n"), "step 2 of 3 · ") || !ps[0].Value.Cancellable {
		t.Errorf("progress = %q (begin %+v); want the status messages with the elapsed time, cancellable", lines, ps[0].Value)
	}
	tasks := tasksOf(env)
	if len(tasks) != 1 || tasks[0].State != "completed" || tasks[0].Tool != "mcp__t__task_slow" || tasks[0].StartedBy != "callTool" || tasks[0].Here {
		t.Fatalf("tasks = %+v", tasks)
	}

	params := map[string]any{"command": wire.CmdCallTool, "arguments": []any{map[string]any{
		"name": "mcp__t__task_slow", "arguments": map[string]any{"polls": 1000000}, "mode": "always-allow"}}}
	if err := env.Editor.RawCall(`"long"`, wire.MethodExecuteCommand, params); err != nil {
		t.Fatal(err)
	}
	ps = awaitProgress(env, title, func(ps []toolProgress) bool {
		return len(ps) > 0 && ps[len(ps)-1].Value.Kind != "end" && strings.HasPrefix(ps[len(ps)-1].Value.Message, "step ")
	})
	running := tasksOf(env)
	if len(running) != 2 || running[0].State != "running" || !running[0].Here || !strings.HasPrefix(running[0].Message, "step ") {
		t.Fatalf("tasks while one runs = %+v", running)
	}
	env.Notify(wire.MethodWorkDoneProgressCancel, map[string]any{"token": ps[len(ps)-1].Token}) // the second call's
	r := env.AwaitResponse(`"long"`)
	if r.Code != 0 || json.Unmarshal(r.Result, &res) != nil || !res.IsError || res.Text != "the user cancelled this tool call" {
		t.Fatalf("callTool answered %+v; want the user cancelled it", r)
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"method":"tasks/cancel"`); n != 1 {
		t.Errorf("the server got %d tasks/cancel, want 1", n)
	}
	if got := tasksOf(env); got[0].State != "cancelled" {
		t.Errorf("the cancelled task = %+v", got[0])
	}
}

// TestCancelTaskCommand: switchboard.cancelTask cancels a running task by its id; an unknown id
// is InvalidParams.
func TestCancelTaskCommand(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec")
	env := runWith(t, hosttest.Config{InitOptions: initOpts(map[string]any{"t": server("--tasks", "--task-poll-ms", "1", "--record", rec)})})
	params := map[string]any{"command": wire.CmdCallTool, "arguments": []any{map[string]any{
		"name": "mcp__t__task_slow", "arguments": map[string]any{"polls": 1000000}, "mode": "always-allow"}}}
	if err := env.Editor.RawCall(`"long"`, wire.MethodExecuteCommand, params); err != nil {
		t.Fatal(err)
	}
	var id string
	env.Await("the task listed", func(*hosttest.State) bool {
		ts := tasksOf(env)
		if len(ts) == 1 && ts[0].State == "running" {
			id = ts[0].ID
		}
		return id != ""
	})
	if err := env.Command(wire.CmdCancelTask, map[string]any{"id": "nope"}, nil); err == nil || !strings.Contains(err.Error(), "no task") {
		t.Errorf("cancelTask of an unknown id: %v", err)
	}
	var after wire.TasksResult
	env.MustCommand(wire.CmdCancelTask, map[string]any{"id": id}, &after)
	r := env.AwaitResponse(`"long"`)
	var res toolResult
	if r.Code != 0 || json.Unmarshal(r.Result, &res) != nil || !res.IsError || res.Text != "the user cancelled this tool call" {
		t.Fatalf("callTool answered %+v; want the user cancelled it", r)
	}
	b, _ := os.ReadFile(rec)
	if n := strings.Count(string(b), `"method":"tasks/cancel"`); n != 1 {
		t.Errorf("the server got %d tasks/cancel, want 1", n)
	}
}

// TestTaskQuestionInEditor: a task's input_required question is the editor's elicitation form, as
// any server question, and the answer goes back by the era's path (tasks/result for 2025-11-25,
// tasks/update for 2026-07-28); meanwhile the task's line says it waits.
func TestTaskQuestionInEditor(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec")
			args := []string{"--tasks", "--task-poll-ms", "1", "--record", rec}
			if era == "2026-07-28" {
				args = append(args, "--protocol", era)
			}
			env := runWith(t, hosttest.Config{Elicitation: true, WorkDoneProgress: true, InitOptions: initOpts(map[string]any{"t": server(args...)})})
			ch := callAsync(env, "mcp__t__task_ask", map[string]any{"message": "Which Go?"}, "always-allow")
			el := awaitElicitation(env, 1)
			if el.Server != "t" || el.Message != "Which Go?" {
				t.Errorf("elicitation = %+v", el)
			}
			awaitProgress(env, "Switchboard: mcp__t__task_ask", func(ps []toolProgress) bool {
				return len(ps) > 0 && strings.HasPrefix(ps[len(ps)-1].Value.Message, "waiting for your answer · ")
			})
			env.MustCommand(wire.CmdElicit, map[string]any{"id": el.ID, "action": "accept", "content": map[string]any{"name": "Ada", "agree": true}}, nil)
			out := <-ch
			if out.err != nil || out.res.IsError || out.res.Text != `answer: {"action":"accept","content":{"agree":true,"name":"Ada"}}` {
				t.Fatalf("call = %+v, %v", out.res, out.err)
			}
			b, _ := os.ReadFile(rec)
			method := `"method":"tasks/result"`
			if era == "2026-07-28" {
				method = `"method":"tasks/update"`
			}
			if !strings.Contains(string(b), method) {
				t.Errorf("the answer did not go back by %s", method)
			}
		})
	}
}
