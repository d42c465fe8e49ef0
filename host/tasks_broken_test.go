package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// TestTaskFileBrokenTold: with tasks.json broken (hand-edited, cut short), a task cannot be kept
// for a restart. The person is told so once, naming the file and line; the task is not left
// running unseen on its server when the host goes away (KeepTask: tasks/cancel goes out); the
// file is not written over; and once the person fixes it, tasks are kept again without a restart.
func TestTaskFileBrokenTold(t *testing.T) {
	path := filepath.Join(t.TempDir(), TasksFile)
	const broken = "{\"tasks\": [\n  {\"id\": \"x\",\n" // cut short at line 3
	if err := os.WriteFile(path, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	ui := &offerUI{}
	a := &App{gone: make(chan struct{}), ui: ui}
	var logged []string
	a.tasks = taskBook{path: path, log: func(m string) { logged = append(logged, m) }}
	a.opts.Now = func() time.Time { return time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC) }
	start := func(taskID string) (context.Context, *taskWatch) {
		ctx, cancel := context.WithCancelCause(context.Background())
		t.Cleanup(func() { cancel(nil) })
		ctx, w := a.watchTask(ctx, cancel, nil, "callTool", "mcp__s__slow", json.RawMessage(`{}`))
		w.update(mcpbridge.TaskUpdate{Server: "s", Tool: "mcp__s__slow", TaskID: taskID, Status: mcpbridge.TaskWorking})
		return ctx, w
	}
	_, w1 := start("one")
	start("two")
	if data, _ := os.ReadFile(path); string(data) != broken {
		t.Errorf("the broken file was rewritten:\n%s", data)
	}
	ui.mu.Lock()
	notes := ui.notes
	ui.mu.Unlock()
	if len(notes) != 1 || !strings.Contains(notes[0], path+":3") || !strings.Contains(notes[0], "restart") {
		t.Errorf("notes = %q, want one sentence naming %s:3 and saying the task will not survive a restart", notes, path)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], path+":3") {
		t.Errorf("logged %q, want one warning naming %s:3", logged, path)
	}
	close(a.gone) // the host goes away
	if w1.KeepTask() {
		t.Errorf("KeepTask while closing with the task file broken: the task would run on with nobody to follow it")
	}
	if err := os.WriteFile(path, []byte(`{"tasks": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a.gone = make(chan struct{})
	_, w3 := start("three")
	var f struct{ Tasks []TaskEntry }
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &f); err != nil || len(f.Tasks) == 0 {
		t.Fatalf("after the fix, the new task was not kept (%v):\n%s", err, data)
	}
	close(a.gone)
	if !w3.KeepTask() {
		t.Errorf("KeepTask false with the task file fixed: the task would be cancelled, not resumed")
	}
}

// An owner pid past pid_t (a hand-edited tasks.json) is no running process: cut to 32 bits,
// 4294967295 was -1, and kill(-1, 0) answered for every process, so its task waited forever.
func TestProcessAlivePastPidT(t *testing.T) {
	for _, pid := range []int{1<<32 - 1, 1<<32 + 1, 1 << 31} {
		if processAlive(pid) {
			t.Errorf("processAlive(%d) = true", pid)
		}
	}
}
