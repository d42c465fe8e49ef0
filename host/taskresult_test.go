package host

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTaskResultFileKeepsOthersFiles: writing a result file tidies the result folder of results no
// longer in the book, and only those. A task-results planted as a symlink to another folder (or
// a file of someone else's in it) is not emptied: the write is refused, and nothing there goes.
func TestTaskResultFileKeepsOthersFiles(t *testing.T) {
	state := t.TempDir()
	a := &App{gone: make(chan struct{})}
	a.tasks = taskBook{path: filepath.Join(state, TasksFile), log: func(m string) { t.Log(m) }}
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	const id = "0123456789ab"
	b := &a.tasks
	b.mu.Lock()
	b.loadLocked()
	b.entries[id] = &TaskEntry{ID: id, Server: "t", Tool: "mcp__t__slow", State: TaskCompleted, Started: now, Updated: now, Result: "done"}
	// tasks.json is any writer's: an id there is not a file name.
	b.entries["../../escaped"] = &TaskEntry{ID: "../../escaped", Server: "t", Tool: "mcp__t__slow", State: TaskCompleted, Started: now, Updated: now}
	b.saveLocked()
	b.mu.Unlock()

	if path, err := a.TaskResultFile("../../escaped"); err == nil {
		t.Errorf("a task id from the file made the path %s", path)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(state), "escaped.txt")); err == nil {
		t.Errorf("a task id from the file wrote outside the result folder")
	}

	// Someone else's folder, which task-results points to.
	victim := t.TempDir()
	precious := filepath.Join(victim, "id_ed25519")
	if err := os.WriteFile(precious, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(state, TaskResultDir)); err != nil {
		t.Fatal(err)
	}
	if path, err := a.TaskResultFile(id); err == nil {
		t.Errorf("wrote %s through a task-results that is a symlink", path)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Errorf("a file of the folder task-results points to was removed: %v", err)
	}

	// In the real folder, a file that is not a result is left too; a stale result goes.
	if err := os.Remove(filepath.Join(state, TaskResultDir)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, TaskResultDir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	notes, stale := filepath.Join(dir, "notes"), filepath.Join(dir, "fedcba987654.txt")
	for _, f := range []string{notes, stale} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path, err := a.TaskResultFile(id)
	if err != nil || filepath.Dir(path) != dir {
		t.Fatalf("TaskResultFile = %q, %v; want a file in %s", path, err, dir)
	}
	if _, err := os.Stat(notes); err != nil {
		t.Errorf("a file that is no result was removed: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the result of a task no longer kept stays: %v", err)
	}
}
