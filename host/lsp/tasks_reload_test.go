package lsp_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/lsp"
)

// TestTaskFollowedAfterOwnerExits: an editor's reload starts the new window's host while the old
// one still runs and still names itself the follower of a task in tasks.json. The new host must
// not leave the task unfollowed for its whole session: once the old host has exited, it follows
// the task (never calling the tool again) and the task's end is recorded.
func TestTaskFollowedAfterOwnerExits(t *testing.T) {
	state := t.TempDir()
	done := filepath.Join(state, "done")
	srv := server("--tasks", "--task-poll-ms", "1", "--task-state", filepath.Join(state, "server-tasks.json"))
	restartWithTask(t, state, done, srv)

	// The old host, still alive: a process of ours that the test ends when it chooses.
	old := exec.Command("sleep", "600")
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { old.Wait(); close(exited) }() // ignore error: killed
	t.Cleanup(func() { old.Process.Kill(); <-exited })
	setTaskOwner(t, state, old.Process.Pid)
	env, waiting := startWatchedHost(t, state, srv)
	select { // the new host has looked at the file and left the task to the old one
	case <-waiting.seen:
	case <-time.After(30 * time.Second):
		t.Fatal("the new host never said it waits for the old one")
	}
	if ts := tasksOf(env); len(ts) != 1 || ts[0].State != "running" {
		t.Fatalf("tasks = %+v; want the task running, left to the old host", ts)
	}
	writeFile(t, done, "") // the server's task can end now; only a host that follows it sees that
	old.Process.Kill()     // the old host exits
	<-exited
	env.Await("the task followed to its end", func(*hosttest.State) bool {
		ts := tasksOf(env)
		return len(ts) == 1 && ts[0].State == "completed"
	})
}

// logWatch is a log's writer that closes seen at the first line holding want.
type logWatch struct {
	want string
	seen chan struct{}
	once sync.Once
}

func (w *logWatch) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// TestTaskFollowedAfterOwnerExitsUnreaped: the old host has exited but its parent has not yet
// reaped it (a zombie, as between an editor host's exit and its parent's wait). Its pidfd says it
// exited while a signal to its pid still succeeds: the new host follows the task all the same,
// instead of finding the old one alive and never looking again.
func TestTaskFollowedAfterOwnerExitsUnreaped(t *testing.T) {
	state := t.TempDir()
	done := filepath.Join(state, "done")
	srv := server("--tasks", "--task-poll-ms", "1", "--task-state", filepath.Join(state, "server-tasks.json"))
	restartWithTask(t, state, done, srv)

	old := exec.Command("sleep", "600")
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { old.Process.Kill(); old.Wait() }) // ignore errors: killed; reaped only here
	setTaskOwner(t, state, old.Process.Pid)
	env, waiting := startWatchedHost(t, state, srv)
	select {
	case <-waiting.seen:
	case <-time.After(30 * time.Second):
		t.Fatal("the new host never said it waits for the old one")
	}
	writeFile(t, done, "")
	old.Process.Kill() // exits, and stays a zombie: nobody waits for it until the cleanup
	env.Await("the task followed to its end", func(*hosttest.State) bool {
		ts := tasksOf(env)
		return len(ts) == 1 && ts[0].State == "completed"
	})
}

// setTaskOwner makes pid the follower of the one task in state's tasks.json, as another live
// window's host would be.
func setTaskOwner(t *testing.T, state string, pid int) {
	t.Helper()
	tasksFile := filepath.Join(state, "tasks.json")
	data, err := os.ReadFile(tasksFile)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string][]map[string]any
	if err := json.Unmarshal(data, &f); err != nil || len(f["tasks"]) != 1 {
		t.Fatalf("tasks.json = %s (%v)", data, err)
	}
	f["tasks"][0]["owner"] = pid
	data, _ = json.Marshal(f)
	writeFile(t, tasksFile, string(data))
}

// startWatchedHost starts a host on state with srv as server t; its log's watch sees the host
// say it waits for another host to exit.
func startWatchedHost(t *testing.T, state string, srv map[string]any) (*hosttest.Env, *logWatch) {
	t.Helper()
	waiting := &logWatch{want: "once it exits", seen: make(chan struct{})}
	env := runWith(t, hosttest.Config{NoWorkspace: true,
		Options: func(o *lsp.Options) {
			o.PinsPath = filepath.Join(state, "pins.json")
			o.Logger = slog.New(slog.NewTextHandler(waiting, &slog.HandlerOptions{Level: slog.LevelInfo}))
		},
		InitOptions: initOpts(map[string]any{"t": srv})})
	return env, waiting
}

// TestTaskOfAnotherWindowFollowedAfterItCloses: two windows run; the other one starts a task after
// this one looked at tasks.json, and then closes while the task runs. This window follows the task
// once that window's host has exited, instead of leaving it unfollowed until a host starts.
func TestTaskOfAnotherWindowFollowedAfterItCloses(t *testing.T) {
	state, done, srv, tasksFile, f := taskLeftBehind(t)

	other := exec.Command("sleep", "600") // the other window's host
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { other.Wait(); close(exited) }() // ignore error: killed
	t.Cleanup(func() { other.Process.Kill(); <-exited })

	env, waiting := startWatchedHost(t, state, srv)
	env.AwaitServer("t", "ready")
	if ts := tasksOf(env); len(ts) != 0 {
		t.Fatalf("tasks = %+v; want none yet", ts)
	}
	// The other window starts its task now: it names itself the follower.
	f["tasks"][0]["owner"] = other.Process.Pid
	data, _ := json.Marshal(f)
	writeFile(t, tasksFile+".tmp", string(data))
	if err := os.Rename(tasksFile+".tmp", tasksFile); err != nil {
		t.Fatal(err)
	}
	select { // this window has seen it and waits for the other one
	case <-waiting.seen:
	case <-time.After(30 * time.Second):
		t.Fatal("this window never said it waits for the other one")
	}
	writeFile(t, done, "") // the server's task can end now; only a host that follows it sees that
	other.Process.Kill()   // the other window closes
	<-exited
	env.Await("the task followed to its end", func(*hosttest.State) bool {
		ts := tasksOf(env)
		return len(ts) == 1 && ts[0].State == "completed"
	})
}

// TestTaskLeftUnfollowedSeenLaterFollowed: this window's watch of tasks.json sees a running task
// that no live host follows: the window that started it closed (its host wrote it left running,
// with no follower) before this one had seen it followed, as a window that starts a task and
// closes within the watch's settling time does. This window follows it, instead of leaving it
// unfollowed until a host starts.
func TestTaskLeftUnfollowedSeenLaterFollowed(t *testing.T) {
	state, done, srv, tasksFile, f := taskLeftBehind(t)

	env, _ := startWatchedHost(t, state, srv)
	env.AwaitServer("t", "ready")
	if ts := tasksOf(env); len(ts) != 0 {
		t.Fatalf("tasks = %+v; want none yet", ts)
	}
	delete(f["tasks"][0], "owner") // left running by a host that has exited
	data, _ := json.Marshal(f)
	writeFile(t, tasksFile+".tmp", string(data))
	if err := os.Rename(tasksFile+".tmp", tasksFile); err != nil {
		t.Fatal(err)
	}
	writeFile(t, done, "") // the server's task can end now; only a host that follows it sees that
	env.Await("the task followed to its end", func(*hosttest.State) bool {
		ts := tasksOf(env)
		return len(ts) == 1 && ts[0].State == "completed"
	})
}

// taskLeftBehind runs a window that starts a task on a tasks server and is replaced while the
// task runs (restartWithTask), then hides the task from the next window: it returns the state
// folder, the file that lets the server's task end, the server, the tasks file (now empty) and
// what it held (the one task).
func taskLeftBehind(t *testing.T) (state, done string, srv map[string]any, tasksFile string, f map[string][]map[string]any) {
	t.Helper()
	state = t.TempDir()
	done = filepath.Join(state, "done")
	srv = server("--tasks", "--task-poll-ms", "1", "--task-state", filepath.Join(state, "server-tasks.json"))
	restartWithTask(t, state, done, srv)
	tasksFile = filepath.Join(state, "tasks.json")
	data, err := os.ReadFile(tasksFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &f); err != nil || len(f["tasks"]) != 1 {
		t.Fatalf("tasks.json = %s (%v)", data, err)
	}
	writeFile(t, tasksFile, `{"tasks": []}`) // the next window starts with nothing to follow
	return state, done, srv, tasksFile, f
}
