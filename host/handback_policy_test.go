package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// TestHandBackPolicyDenied: a task result waiting for the agent (its task ended under a host
// started after the one that began it) is not handed to the next chat turn once the
// organisation's policy denies its tool: the deny says the model gets nothing of the tool's. It
// is dropped, saying why; another tool's waiting result still goes.
func TestHandBackPolicyDenied(t *testing.T) {
	a := handBackApp(t, `{"permissions": {"deny": ["mcp__t__slow"]}}`)
	now := handBackNow
	waitingResults(a,
		&TaskEntry{ID: "x", Server: "t", Tool: "mcp__t__slow", State: TaskCompleted, Started: now, Updated: now,
			Result: "the denied tool's result", ForAgent: true, Folders: []string{"/ws"}},
		&TaskEntry{ID: "y", Server: "t", Tool: "mcp__t__other", State: TaskCompleted, Started: now, Updated: now,
			Result: "another tool's result", ForAgent: true, Folders: []string{"/ws"}},
	)

	note, ids := a.handBack()
	if len(ids) != 1 || ids[0] != "y" || strings.Contains(note, "denied tool's result") {
		t.Fatalf("handed %v:\n%s\nwant y only", ids, note)
	}
	for _, e := range a.Tasks() {
		if e.ID == "x" && (e.ForAgent || !strings.Contains(e.Message, "policy")) {
			t.Errorf("x after the turn = %+v; want it no longer waiting, saying why", e)
		}
	}
	if note, ids := a.handBack(); len(ids) != 0 {
		t.Errorf("the next turn was handed %v:\n%s", ids, note)
	}
}

// TestHandBackServerBlocked: a waiting task result of a server the organisation's policy has come
// to block altogether (deniedMcpServers) is not handed to the next chat turn either: a blocked
// server's tools are denied one and all, though no tool rule names them.
func TestHandBackServerBlocked(t *testing.T) {
	a := handBackApp(t, `{"deniedMcpServers": [{"serverName": "t"}]}`)
	// What the registry asks of each server it is given (its Admit): t is blocked, u is not.
	if b := a.admit(config.ServerConfig{Name: "t", Command: "mcptest"}); b == nil {
		t.Fatal("the policy does not block t")
	}
	if b := a.admit(config.ServerConfig{Name: "u", Command: "mcptest"}); b != nil {
		t.Fatalf("the policy blocks u: %+v", b)
	}
	now := handBackNow
	waitingResults(a,
		&TaskEntry{ID: "x", Server: "t", Tool: "mcp__t__slow", State: TaskCompleted, Started: now, Updated: now,
			Result: "the blocked server's result", ForAgent: true, Folders: []string{"/ws"}},
		&TaskEntry{ID: "y", Server: "u", Tool: "mcp__u__slow", State: TaskCompleted, Started: now, Updated: now,
			Result: "another server's result", ForAgent: true, Folders: []string{"/ws"}},
	)

	note, ids := a.handBack()
	if len(ids) != 1 || ids[0] != "y" || strings.Contains(note, "blocked server's result") {
		t.Fatalf("handed %v:\n%s\nwant y only", ids, note)
	}
	for _, e := range a.Tasks() {
		if e.ID == "x" && (e.ForAgent || !strings.Contains(e.Message, "policy")) {
			t.Errorf("x after the turn = %+v; want it no longer waiting, saying why", e)
		}
	}
}

// TestHandBackMadeSafeNameServerGone: a waiting task result of a tool the registry knew under a
// made-safe name (files.read as mcp__t__files_read_<hash>) is judged by the rule that names the
// server's own name even when its server is not running to say that name (after a restart, at
// the first chat turn, with the server still starting or failed): the entry keeps it.
func TestHandBackMadeSafeNameServerGone(t *testing.T) {
	a := handBackApp(t, `{"permissions": {"deny": ["mcp__t__files_read"]}}`)
	now := handBackNow
	waitingResults(a,
		&TaskEntry{ID: "x", Server: "t", Tool: "mcp__t__files_read_1a2b3c4d", ServerTool: "files.read", State: TaskCompleted,
			Started: now, Updated: now, Result: "the denied tool's result", ForAgent: true, Folders: []string{"/ws"}},
	)
	if note, ids := a.handBack(); len(ids) != 0 || strings.Contains(note, "denied tool's result") {
		t.Fatalf("handed %v:\n%s\nwant nothing: the policy denies files.read", ids, note)
	}
}

// handBackNow is the time of the hand-back tests' tasks and of their App's clock.
var handBackNow = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

// handBackApp is an App under the organisation's policy policyJSON (a root-owned folder), in the
// workspace /ws, with a task book of its own and its clock at handBackNow.
func handBackApp(t *testing.T, policyJSON string) *App {
	t.Helper()
	dir := rootPolicyDir(t, policyJSON)
	a := &App{gone: make(chan struct{}), folders: []string{"/ws"}, policyW: policy.NewWatcher(policy.Options{Paths: policy.Paths{Dir: dir}})}
	if err := a.Policy().Broken(); err != nil {
		t.Fatal(err)
	}
	a.tasks = taskBook{path: filepath.Join(t.TempDir(), TasksFile), log: func(m string) { t.Log(m) }}
	a.opts.Now = func() time.Time { return handBackNow }
	return a
}

// waitingResults puts entries in a's task book and its file.
func waitingResults(a *App, entries ...*TaskEntry) {
	b := &a.tasks
	b.mu.Lock()
	defer b.mu.Unlock()
	b.loadLocked()
	for _, e := range entries {
		b.entries[e.ID] = e
	}
	b.saveLocked()
}

// rootPolicyDir is a policy folder as the host trusts one (root-owned, not writable by others)
// holding data as its settings file; the test is skipped when it cannot make root-owned files.
func rootPolicyDir(t *testing.T, data string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make root-owned policy files")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	dir := filepath.Join(base, "switchboard")
	os.MkdirAll(dir, 0o755)
	f := filepath.Join(dir, policy.SettingsFile)
	if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(f, 0o644)
	return dir
}
