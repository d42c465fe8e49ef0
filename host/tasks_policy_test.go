package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// TestTaskEndedAsPolicyDenied: a task that ends as the organisation's policy comes to deny its
// tool, before the policy watch stopped it, hands nothing on: its result is discarded (not kept,
// not offered), the call's caller is told the rule, and so is the person. A task whose first
// update comes after the policy denies its tool (the gate looked before the change) is stopped
// at once for the policy.
func TestTaskEndedAsPolicyDenied(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make root-owned policy files")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	dir := filepath.Join(base, "switchboard")
	os.MkdirAll(dir, 0o755)
	f := filepath.Join(dir, policy.SettingsFile)
	write := func(data string) {
		os.WriteFile(f, []byte(data), 0o644)
		os.Chmod(f, 0o644)
	}
	write(`{}`)
	ui := &offerUI{}
	a := &App{gone: make(chan struct{}), ui: ui, policyW: policy.NewWatcher(policy.Options{Paths: policy.Paths{Dir: dir}})}
	a.tasks = taskBook{path: filepath.Join(t.TempDir(), TasksFile), log: func(m string) { t.Log(m) }}
	var mu sync.Mutex
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	a.opts.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ctx, w := a.watchTask(ctx, cancel, nil, "callTool", "mcp__s__slow", json.RawMessage(`{}`))
	u := mcpbridge.TaskUpdate{Server: "s", Tool: "mcp__s__slow", TaskID: "t1", Status: mcpbridge.TaskWorking}
	w.update(u)
	write(`{"permissions": {"deny": ["mcp__s__slow"]}}`)
	if !a.policyW.Reload() || a.Policy().Broken() != nil {
		t.Fatalf("the policy did not change: %v", a.Policy().Broken())
	}
	mu.Lock()
	now = now.Add(2 * time.Minute) // long enough to be offered, were it the tool's
	mu.Unlock()
	u.Status = mcpbridge.TaskCompleted
	w.update(u)
	w.end(ctx, mcpbridge.Result{Name: "mcp__s__slow", Text: "the denied tool's output"}, nil)
	if rule := w.deniedAtEnd(); !strings.HasSuffix(rule, "#/permissions/deny/0") {
		t.Errorf("denied at end = %q; want the rule", rule)
	}
	ts := a.Tasks()
	if len(ts) != 1 || ts[0].Result != "" || ts[0].ForAgent || !strings.Contains(ts[0].Message, "discarded") {
		t.Errorf("tasks = %+v; want the result discarded, saying why", ts)
	}
	ui.mu.Lock()
	offers, notes := ui.offers, ui.notes
	ui.mu.Unlock()
	if len(offers) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "#/permissions/deny/0") {
		t.Errorf("offers %q, notes %q; want no offer, one notice naming the rule", offers, notes)
	}

	ctx2, cancel2 := context.WithCancelCause(context.Background())
	defer cancel2(nil)
	ctx2, w2 := a.watchTask(ctx2, cancel2, nil, "", "mcp__s__slow", json.RawMessage(`{}`))
	w2.update(mcpbridge.TaskUpdate{Server: "s", Tool: "mcp__s__slow", TaskID: "t2", Status: mcpbridge.TaskWorking})
	if !isPolicyStop(context.Cause(ctx2)) {
		t.Errorf("a task first seen after the deny runs on: cause %v", context.Cause(ctx2))
	}
}
