package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/lsp"
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

// restartWithTask runs a host whose agent starts task_slow (it ends once the file done exists) in
// a chat turn, and ends that host (shutdown, exit) while the task runs: the task is left running,
// to be followed by the next host started with the same state folder and server definition. It
// returns the ended host's environment, whose log the caller may read.
func restartWithTask(t *testing.T, state, done string, srv map[string]any) *hosttest.Env {
	t.Helper()
	script := filepath.Join(state, "first.script")
	writeFile(t, script, fmt.Sprintf("reply tool_call id=c1 name=mcp__t__task_slow args={\"file\":%q}\n\nreply text \"unreachable\"\n", done))
	env := runWith(t, hosttest.Config{NoWorkspace: true,
		Options:     func(o *lsp.Options) { o.PinsPath = filepath.Join(state, "pins.json") },
		InitOptions: initOpts(map[string]any{"t": srv}, "provider", map[string]any{"type": "script", "script": script})})
	env.MustCommand(wire.CmdChat, map[string]any{"prompt": "research go", "mode": "always-allow"}, nil)
	env.Await("the agent's task running", func(*hosttest.State) bool {
		ts := tasksOf(env)
		return len(ts) == 1 && ts[0].State == "running" && ts[0].StartedBy == "agent" && strings.HasPrefix(ts[0].Message, "step ")
	})
	env.Call("shutdown", nil, nil)
	env.Notify("exit", nil)
	if err := env.Served(); err != nil {
		t.Fatalf("the first host: %v", err)
	}
	return env
}

// TestTaskLeftForTheNextHostWhileClosing: a host that closes while a task runs leaves the task
// to the next host, and its own watch of the tasks file, which sees it write that, does not
// claim the task back while its servers end. A server slow to end (--linger: it outlives its
// stdin, and closing waits for it) let the closing host's watch follow the task again, find its
// server gone and record the task lost: the next host then had nothing to follow, and the
// person never got the result.
func TestTaskLeftForTheNextHostWhileClosing(t *testing.T) {
	state := t.TempDir()
	done := filepath.Join(state, "done")
	srv := server("--tasks", "--task-poll-ms", "1", "--task-state", filepath.Join(state, "server-tasks.json"), "--linger")
	first := restartWithTask(t, state, done, srv)
	for _, raw := range first.State().Params("window/showMessage") {
		if strings.Contains(string(raw), "could not be followed") {
			t.Errorf("the closing host gave the task up: %s", raw)
		}
	}
	writeFile(t, done, "")
	env := runWith(t, hosttest.Config{NoWorkspace: true,
		Options:     func(o *lsp.Options) { o.PinsPath = filepath.Join(state, "pins.json") },
		InitOptions: initOpts(map[string]any{"t": srv}),
		Responder:   func(context.Context, hosttest.ShowMessageRequestParams) string { return "" }})
	env.Await("the next host's offer of the result", func(s *hosttest.State) bool {
		for _, raw := range s.RequestParams(wire.MethodShowMessageRequest) {
			if strings.Contains(string(raw), "has finished") {
				return true
			}
		}
		return false
	})
}

// TestTaskResultShownAfterRestart: a task the agent started ends under the next host (the first
// one was closed while it ran). The person is told with a Show result action; choosing it shows
// the result, escaped (the server puts terminal escapes in it): an editor that declares
// taskResults gets switchboard/showTaskResult, any other a read-only file opened with
// window/showDocument. The conversation is gone, so the result waits for the agent: the next chat
// turn in the workspace gets it once, quoted and fenced, and the turn after that does not.
func TestTaskResultShownAfterRestart(t *testing.T) {
	for _, own := range []bool{true, false} {
		t.Run(fmt.Sprintf("taskResults=%v", own), func(t *testing.T) {
			state := t.TempDir()
			done := filepath.Join(state, "done")
			srv := server("--tasks", "--task-poll-ms", "1", "--task-state", filepath.Join(state, "server-tasks.json"), "--hostile")
			restartWithTask(t, state, done, srv)
			writeFile(t, done, "")

			script := filepath.Join(state, "second.script")
			writeFile(t, script, "expect last_user ~ \"^[^\\x1b\\x07\\r\\u202e]*$\"\n"+
				"expect last_user ~ `(?s)^A tool call you started before Switchboard restarted.*Call mcp__t__task_slow \\(task [0-9a-f]+, completed.*\\n<task-result server=\"t\">\\n> task_slow done after \\d+ polls clear\\\\x1b\\[2J.*\\n</task-result>\\n\\nhello$`\n"+
				"reply text \"thanks\"\n\nexpect last_user ~ \"^again$\"\nreply text \"ok\"\n")
			env := runWith(t, hosttest.Config{NoWorkspace: true, TaskResults: own,
				Options:     func(o *lsp.Options) { o.PinsPath = filepath.Join(state, "pins.json") },
				InitOptions: initOpts(map[string]any{"t": srv}, "provider", map[string]any{"type": "script", "script": script}),
				Responder: func(_ context.Context, p hosttest.ShowMessageRequestParams) string {
					if strings.Contains(p.Message, "has finished") && len(p.Actions) == 1 {
						return p.Actions[0].Title
					}
					return ""
				}})
			st := env.Await("the offer of the result", func(s *hosttest.State) bool {
				for _, raw := range s.RequestParams(wire.MethodShowMessageRequest) {
					if strings.Contains(string(raw), "has finished") {
						return true
					}
				}
				return false
			})
			var offer hosttest.ShowMessageRequestParams
			for _, raw := range st.RequestParams(wire.MethodShowMessageRequest) {
				if strings.Contains(string(raw), "has finished") {
					json.Unmarshal(raw, &offer)
				}
			}
			if len(offer.Actions) != 1 || offer.Actions[0].Title != wire.TitleShowResult || !strings.Contains(offer.Message, "mcp__t__task_slow") ||
				!strings.Contains(offer.Message, "The agent gets it with your next chat message") {
				t.Errorf("offer = %+v", offer)
			}
			var shown string
			if own {
				st = env.Await("switchboard/showTaskResult", func(s *hosttest.State) bool { return len(s.Params(wire.NotifyShowTaskResult)) > 0 })
				var ti wire.TaskInfo
				json.Unmarshal(st.Params(wire.NotifyShowTaskResult)[0], &ti)
				if ti.Tool != "mcp__t__task_slow" || ti.State != "completed" {
					t.Errorf("showTaskResult = %+v", ti)
				}
				shown = ti.Result
			} else {
				st = env.Await("window/showDocument", func(s *hosttest.State) bool { return len(s.RequestParams(wire.MethodShowDocument)) > 0 })
				var p struct {
					URI      string `json:"uri"`
					External bool   `json:"external"`
				}
				json.Unmarshal(st.RequestParams(wire.MethodShowDocument)[0], &p)
				u, err := url.Parse(p.URI)
				if err != nil || u.Scheme != "file" {
					t.Fatalf("showDocument uri %q: %v", p.URI, err)
				}
				path := u.Path
				if p.External || filepath.Dir(path) != filepath.Join(state, "task-results") {
					t.Fatalf("showDocument %+v; want a file in the state folder, opened in the editor", p)
				}
				fi, err := os.Stat(path)
				if err != nil || fi.Mode().Perm() != 0o400 {
					t.Errorf("result file %v, %v; want read-only", fi, err)
				}
				shown = readFile(t, path)
				if !strings.HasPrefix(shown, "Result of mcp__t__task_slow (task ") {
					t.Errorf("result file:\n%s", shown)
				}
			}
			if !strings.Contains(shown, "task_slow done after ") || !strings.Contains(shown, `clear\x1b[2J`) {
				t.Errorf("result shown = %q; want the result, escaped", shown)
			}
			for _, bad := range []string{"\x1b", "\a", "\r", "\u202e", "\u200b"} {
				if strings.Contains(shown, bad) {
					t.Errorf("the result shown carries %q raw: %q", bad, shown)
				}
			}
			if ts := tasksOf(env); len(ts) != 1 || !ts[0].ForAgent {
				t.Fatalf("tasks = %+v; want the result waiting for the agent", ts)
			}

			for _, prompt := range []string{"hello", "again"} {
				var res chatResult
				env.MustCommand(wire.CmdChat, map[string]any{"prompt": prompt}, &res)
				for _, e := range awaitDone(env, res.Turn) {
					if e.Kind == "error" {
						t.Errorf("turn %q failed: %+v", prompt, e)
					}
				}
			}
			if ts := tasksOf(env); len(ts) != 1 || ts[0].ForAgent {
				t.Errorf("tasks = %+v; want the result handed back", ts)
			}
		})
	}
}

// startHTTPMCPTest runs mcptest --http on a free port with args and returns its MCP URL.
func startHTTPMCPTest(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(mcptestBin, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "mcptest: listening on "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return u
		}
	}
	t.Fatal("mcptest --http did not report its address")
	return ""
}

// TestTaskOverHTTP: a streamable HTTP server's task tools run as tasks in both eras, as over
// stdio: a long one completes after its polls with its line shown, and a task's question is the
// editor's form, its answer going back by the era's path (2025-11-25: the question arrives in
// the tasks/result event stream and the answer is a POST of its own; 2026-07-28: tasks/update).
func TestTaskOverHTTP(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec")
			args := []string{"--tasks", "--task-poll-ms", "1", "--record", rec}
			if era == "2026-07-28" {
				args = append(args, "--protocol", era)
			}
			u := startHTTPMCPTest(t, args...)
			// The server speaks both eras unless told otherwise: the entry picks the older one.
			entry := map[string]any{"type": "http", "url": u, "protocol": era}
			env := runWith(t, hosttest.Config{Elicitation: true, WorkDoneProgress: true, InitOptions: initOpts(map[string]any{"t": entry})})
			var servers []wire.ServerStatus
			env.MustCommand(wire.CmdServers, nil, &servers)
			if len(servers) != 1 || servers[0].Transport != "http" || servers[0].ProtocolVersion != era {
				t.Fatalf("servers = %+v, want t over http speaking %s", servers, era)
			}

			var res toolResult
			env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__task_slow", "arguments": map[string]any{"polls": 3}, "mode": "always-allow"}, &res)
			if res.IsError || res.Text != "task_slow done after 3 polls" {
				t.Fatalf("task_slow = %+v", res)
			}
			awaitProgress(env, "Switchboard: mcp__t__task_slow", lastIs("end", "done"))

			ch := callAsync(env, "mcp__t__task_ask", map[string]any{"message": "Which Go?"}, "always-allow")
			el := awaitElicitation(env, 1)
			if el.Server != "t" || el.Message != "Which Go?" {
				t.Errorf("elicitation = %+v", el)
			}
			env.MustCommand(wire.CmdElicit, map[string]any{"id": el.ID, "action": "accept", "content": map[string]any{"name": "Ada", "agree": true}}, nil)
			out := <-ch
			if out.err != nil || out.res.IsError || out.res.Text != `answer: {"action":"accept","content":{"agree":true,"name":"Ada"}}` {
				t.Fatalf("task_ask = %+v, %v", out.res, out.err)
			}
			b, _ := os.ReadFile(rec)
			method := `"method":"tasks/result"`
			if era == "2026-07-28" {
				method = `"method":"tasks/update"`
			}
			if !strings.Contains(string(b), method) || !strings.Contains(string(b), `"task_slow"`) {
				t.Errorf("the server did not get %s over HTTP:\n%s", method, b)
			}
			if ts := tasksOf(env); len(ts) != 2 || ts[0].State != "completed" || ts[1].State != "completed" {
				t.Errorf("tasks = %+v", ts)
			}
		})
	}
}
