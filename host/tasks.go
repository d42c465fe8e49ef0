package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/gofrs/flock"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// Long calls (MCP tasks, issue 30). A tool call that its server runs as a task (mcpbridge/tasks.go)
// is shown like any long call, with the task's status message and the time it has run, and is
// kept in a small state file beside the pins (tasks.json, written atomically): server definition,
// task id, tool, a hash of the arguments, who started it and when. A host that stops while a task
// runs (an editor reload, a crash, a kill) leaves it running on its server; the next host that
// starts (Start, not the one-shot StartAndWait) follows it again by its id, never calling the tool
// again, and tells the person its outcome. The person lists them (Tasks) and cancels one
// (CancelTask), which sends tasks/cancel. Each entry names the process that follows it; another
// host (a second editor window) leaves it alone while that process lives.

// TaskEntry is one tool call that runs as an MCP task, as kept in the state file.
type TaskEntry struct {
	ID         string `json:"id"` // the host's: stable, from the server and the task id
	Server     string `json:"server"`
	Definition string `json:"definition"` // the server definition's fingerprint
	Tool       string `json:"tool"`       // registered name
	// ServerTool is the server's own name for the tool when it differs from the registered one
	// (made safe): an organisation's rule names that, and the server may not be running when the
	// rule is asked again (a result waiting for the agent after a restart).
	ServerTool string    `json:"serverTool,omitempty"`
	TaskID     string    `json:"taskId"`
	Era        string    `json:"era"`
	ArgsHash   string    `json:"argsHash"`  // sha256 of the arguments as sent (never the arguments)
	StartedBy  string    `json:"startedBy"` // "agent", or the front end's command ("callTool", "call")
	Started    time.Time `json:"started"`
	Updated    time.Time `json:"updated"`
	// State is TaskRunning while someone follows it (or will, after a restart), else how it ended:
	// completed, failed, cancelled, or lost (the host could no longer follow it).
	State   string `json:"state"`
	Status  string `json:"status"`  // the server's last status
	Message string `json:"message"` // the server's last status message, escaped and bounded
	// Result is the result text of a finished task that was resumed (nobody else received it),
	// capped at maxTaskResult.
	Result  string `json:"result,omitempty"`
	IsError bool   `json:"isError,omitempty"`
	// ForAgent: the agent started this call in a conversation that did not survive a restart, and
	// its result waits to be handed to the agent at the next chat turn in one of Folders (handBack).
	ForAgent bool `json:"forAgent,omitempty"`
	// Folders are the workspace folders of the host that started it.
	Folders []string `json:"folders,omitempty"`
	// RequestState is the server's latest opaque requestState (2026-07-28), to resume.
	RequestState string `json:"requestState,omitempty"`
	Owner        int    `json:"owner,omitempty"` // pid of the host that follows it
	// Here: this host follows it now (Tasks; not kept).
	Here bool `json:"-"`
}

// Task states (TaskEntry.State).
const (
	TaskRunning   = "running"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
	TaskLost      = "lost"
)

// TasksFile is the state file's name, in the directory of the pin file.
const TasksFile = "tasks.json"

const (
	maxTaskResult = 64 << 10 // bytes of a resumed task's result kept for the person
	maxTaskRecent = 20       // finished tasks kept
	tickEvery     = time.Second
	// taskNoticeAfter: a task followed from its start that ran this long is told to the person
	// when it ends, with its result offered (Show result): they have likely looked elsewhere.
	taskNoticeAfter = time.Minute
)

// errTaskCancelled is the cause of a call stopped by CancelTask.
var errTaskCancelled = errors.New("host: task cancelled by the person")

// policyStop is the cause of a task call stopped because the organisation's policy came to deny
// its tool while it ran (stopDeniedTasks); rule is the denying rule (file#/json/pointer).
type policyStop struct{ rule string }

func (p *policyStop) Error() string {
	return "host: the organisation's policy denies the tool (" + p.rule + ")"
}

// stopDeniedTasks cancels every task this host follows whose tool the policy (just changed) now
// denies: its call ends with an error result saying so, the server gets tasks/cancel, and its
// result reaches neither the model nor the person as the tool's. A tool the policy now makes
// "ask" is left running: the gate approved the call before its task existed, and an ask rule
// governs the calls that start after it (as a new deny does at the gate); only a deny withdraws
// what was approved.
func (a *App) stopDeniedTasks() {
	b := &a.tasks
	type run struct {
		tool, server, own string
		stop              context.CancelCauseFunc
	}
	var runs []run
	b.mu.Lock()
	b.loadLocked()
	for id, stop := range b.runs {
		if e := b.entries[id]; e != nil && e.State == TaskRunning {
			runs = append(runs, run{e.Tool, e.Server, e.ServerTool, stop})
		}
	}
	b.mu.Unlock()
	for _, r := range runs {
		if rule := a.toolDenied(r.tool, r.server, r.own); rule != "" {
			r.stop(&policyStop{rule: rule})
		}
	}
}

// deniedRule is the rule that stopped the call of ctx for the policy, else, for a call that ran
// as a task, the rule that denies its tool now ("" neither): a task that ended as the policy
// changed, before stopDeniedTasks reached it, hands nothing on either.
func (w *taskWatch) deniedRule(ctx context.Context) string {
	if ps, ok := context.Cause(ctx).(*policyStop); ok {
		return ps.rule
	}
	w.mu.Lock()
	id, server := w.id, w.last.Server
	w.mu.Unlock()
	if id == "" {
		return ""
	}
	return w.a.toolDenied(w.name, server, "")
}

func isPolicyStop(err error) bool {
	_, ok := err.(*policyStop)
	return ok
}

// policyStoppedText is the model's result for a call whose task the policy stopped.
func policyStoppedText(tool, rule string) string {
	return "Tool call " + tool + " was stopped: the organisation's policy came to deny this tool while its task ran (rule " + rule +
		"). Switchboard cancelled the task on its server (tasks/cancel) if it was still running, and discarded whatever it produced. " +
		"Do not call this tool again and do not try to get its effect another way; tell the user that their organisation's policy now denies it."
}

// policyStoppedResult is the call's result then, in place of the tool's.
func policyStoppedResult(tool, rule string) mcpbridge.Result {
	msg := policyStoppedText(tool, rule)
	return mcpbridge.Result{Name: tool, IsError: true, Text: msg, Bytes: len(msg)}
}

// endDenied records a task call that end found denied by rule: its result is not handed on, and
// the person is told. cancelled: the policy stopped it; else it ended as the policy changed.
func (w *taskWatch) endDenied(rule string, cancelled bool) {
	w.mu.Lock()
	w.denied = rule
	w.mu.Unlock()
	if cancelled {
		w.a.ui.Notify(LevelWarning, policyStoppedNotice(w.name, rule))
		return
	}
	w.a.ui.Notify(LevelWarning, fmt.Sprintf("The result of the task of %s was discarded: your organisation's policy now denies the tool (%s).",
		safetext.Line(w.name), safetext.Line(rule)))
}

// deniedAtEnd is the rule end found denying the tool ("" none): the call's result is not the
// tool's to hand on.
func (w *taskWatch) deniedAtEnd() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.denied
}

// policyStoppedNotice is the person's sentence for it.
func policyStoppedNotice(tool, rule string) string {
	return fmt.Sprintf("The task of %s was cancelled: your organisation's policy now denies the tool (%s).", safetext.Line(tool), safetext.Line(rule))
}

// taskBook is the running and recent tasks and their state file. Safe for concurrent use.
type taskBook struct {
	path string
	log  func(string)

	mu     sync.Mutex
	loaded bool
	broken bool // the file could not be read: never overwritten (read again at each write)
	// brokenWhy says where and why (file:line:col), for the person; told: they were told.
	brokenWhy string
	told      bool
	entries   map[string]*TaskEntry
	runs      map[string]context.CancelCauseFunc // tasks this host follows now, by ID
	written   map[string]time.Time               // when each running entry was last written
	waits     map[int]bool                       // the other hosts this one waits for (followAfter)
}

func (b *taskBook) loadLocked() {
	if b.loaded {
		return
	}
	b.loaded = true
	b.entries, b.runs, b.written = map[string]*TaskEntry{}, map[string]context.CancelCauseFunc{}, map[string]time.Time{}
	if b.path == "" {
		return
	}
	tasks, ok := b.readLocked()
	if !ok {
		return
	}
	for _, e := range tasks {
		if e != nil && e.ID != "" {
			b.entries[e.ID] = e
		}
	}
}

// saveLocked writes the file atomically; finished entries beyond maxTaskRecent go. Every window's
// host (and `switchboard call`) writes this file: under a lock, what another one wrote since this
// one read it is read again and kept (the last writer would otherwise drop it).
func (b *taskBook) saveLocked() { b.syncLocked(nil) }

// syncLocked takes the file's lock, reads again what other processes wrote, runs f (nil: nothing)
// and writes the file.
func (b *taskBook) syncLocked(f func()) {
	if b.path == "" {
		if f != nil {
			f()
		}
		return
	}
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		b.log(fmt.Sprintf("host: task file %s: %v", b.path, err))
	}
	lock := flock.New(b.path + ".lock")
	if err := lock.Lock(); err == nil {
		defer lock.Unlock() // ignore error: closing the descriptor releases it anyway
	}
	b.mergeLocked()
	if f != nil {
		f()
	}
	if b.broken {
		return
	}
	list := b.listLocked()
	var keep []*TaskEntry
	done := 0
	for _, e := range list {
		if e.State != TaskRunning {
			if done++; done > maxTaskRecent {
				delete(b.entries, e.ID)
				continue
			}
		}
		keep = append(keep, e)
	}
	data, _ := json.MarshalIndent(struct { // ignore error: plain values
		Tasks []*TaskEntry `json:"tasks"`
	}{keep}, "", "  ")
	if err := writeFileAtomic(b.path, append(data, '\n'), 0o600); err != nil {
		b.log(fmt.Sprintf("host: task file %s: %v", b.path, err))
	}
}

// readLocked reads the file's entries (none, ok, when it does not exist). A file that cannot be
// read or parsed marks the book broken: it is never written over, and is read again at each
// write, so that a file the person fixed is used again without a restart.
func (b *taskBook) readLocked() ([]*TaskEntry, bool) {
	data, err := os.ReadFile(b.path)
	if errors.Is(err, os.ErrNotExist) {
		b.broken = false
		return nil, true
	}
	var f struct {
		Tasks []*TaskEntry `json:"tasks"`
	}
	why := ""
	if err == nil {
		if err = json.Unmarshal(data, &f); err != nil {
			why = fmt.Sprintf("%s:%s: %v", b.path, jsonPos(data, err), err)
		}
	} else {
		why = err.Error() // names the file
	}
	if err != nil {
		if !b.broken || why != b.brokenWhy { // once, not at every write while it stays broken
			b.log(fmt.Sprintf("host: task file %s (it is left as it is; tasks are not kept until it is fixed or removed)", why))
		}
		b.broken, b.brokenWhy = true, why
		return nil, false
	}
	b.broken, b.brokenWhy, b.told = false, "", false
	return f.Tasks, true
}

// jsonPos is where a JSON decoding error is in data, as line:col (1:1 when it does not say).
func jsonPos(data []byte, err error) string {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	line, col := 1, 1
	for _, c := range data[:min(int(off), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("%d:%d", line, col)
}

// keeping: the book can keep a task for a restart (its file is not broken).
func (b *taskBook) keeping() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.broken
}

// mergeLocked reads the file again: an entry another process added is kept, and one it changed
// later than this one did is taken, unless this host follows that task now.
func (b *taskBook) mergeLocked() {
	tasks, ok := b.readLocked()
	if !ok {
		return
	}
	for _, d := range tasks {
		if d == nil || d.ID == "" {
			continue
		}
		m := b.entries[d.ID]
		switch {
		case m == nil:
			b.entries[d.ID] = d
		case b.runs[d.ID] == nil && d.Updated.After(m.Updated):
			*m = *d
		}
	}
}

// listLocked is every entry, newest first.
func (b *taskBook) listLocked() []*TaskEntry {
	list := make([]*TaskEntry, 0, len(b.entries))
	for _, e := range b.entries {
		list = append(list, e)
	}
	slices.SortFunc(list, func(x, y *TaskEntry) int { return y.Started.Compare(x.Started) })
	return list
}

// update changes entry id under the lock (f) and writes the file.
func (b *taskBook) update(id string, f func(e *TaskEntry)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.loadLocked()
	if e := b.entries[id]; e != nil {
		f(e)
		b.saveLocked()
	}
}

// taskEntryID is the host's id of a task: stable across restarts, short, safe to show.
func taskEntryID(server, taskID string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + taskID))
	return hex.EncodeToString(sum[:6])
}

func argsHash(args json.RawMessage) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

// Tasks returns the running and recent tasks, newest first.
func (a *App) Tasks() []TaskEntry {
	b := &a.tasks
	b.mu.Lock()
	defer b.mu.Unlock()
	b.loadLocked()
	var out []TaskEntry
	for _, e := range b.listLocked() {
		x := *e
		x.Here = b.runs[e.ID] != nil
		x.RequestState = ""                 // the server's, kept to resume: nothing for a front end
		x.Result = safetext.Block(e.Result) // the server's text, on its way to a screen
		x.Folders = slices.Clone(e.Folders)
		out = append(out, x)
	}
	return out
}

// CancelTask cancels a running task this host follows (its call ends as cancelled by the person
// and the server gets tasks/cancel). An unknown id, or one that has ended, is an error.
func (a *App) CancelTask(id string) error {
	b := &a.tasks
	b.mu.Lock()
	b.loadLocked()
	e, stop := b.entries[id], b.runs[id]
	b.mu.Unlock()
	switch {
	case e == nil:
		return fmt.Errorf("host: no task %q", safetext.Line(id))
	case e.State != TaskRunning:
		return fmt.Errorf("host: task %s has already ended (%s)", id, e.State)
	case stop == nil:
		return fmt.Errorf("host: task %s is followed by another Switchboard (process %d); cancel it there", id, e.Owner)
	}
	stop(errTaskCancelled)
	return nil
}

// closing: the host is going away; its tasks are left running to be resumed.
func (a *App) closing() bool {
	select {
	case <-a.gone:
		return true
	default:
		return false
	}
}

// taskWatch follows one call that may become a task: it records the task, shows its line on the
// call's progress and lets CancelTask stop it.
type taskWatch struct {
	a      *App
	obs    ToolProgress // nil: not shown
	name   string
	args   json.RawMessage
	source string
	cancel context.CancelCauseFunc
	now    func() time.Time

	mu      sync.Mutex // serialises obs and guards below
	id      string     // the entry's, once the call became a task
	last    mcpbridge.TaskUpdate
	started time.Time
	tick    chan struct{} // closed to stop the elapsed-time ticker
	ended   bool
	// unkept: the server gave this call the task id of another call this host follows; the
	// book keeps the other's entry, and this call is followed (and shown) without one.
	unkept bool
	// resumed: a task a host that stopped left running (resumeTask tells its end itself).
	resumed bool
	// denied: the policy rule that denies the tool, found when the call ended (end): its
	// result is not handed on.
	denied string
}

// watchTask wraps a call's ctx (cancel is its cancel) and its observer.
// source is who started it (CallRequest.Source; "": the agent).
func (a *App) watchTask(ctx context.Context, cancel context.CancelCauseFunc, obs ToolProgress, source, name string, args json.RawMessage) (context.Context, *taskWatch) {
	if source == "" {
		source = "agent"
	}
	now := a.opts.Now
	if now == nil {
		now = time.Now
	}
	w := &taskWatch{a: a, obs: obs, name: name, args: args, source: source, cancel: cancel, now: now}
	return mcpbridge.WithTaskHooks(ctx, w), w
}

// TaskUpdate and KeepTask are mcpbridge.TaskHooks: updates go to update; a task is kept running
// on its server while the host is closing, unless the task file is broken: no host could follow
// it again, and it would run on with nobody to see its end (tasks/cancel goes out instead).
func (w *taskWatch) TaskUpdate(u mcpbridge.TaskUpdate) { w.update(u) }
func (w *taskWatch) KeepTask() bool                    { return w.a.closing() && w.a.tasks.keeping() }

// TaskProgress is a ToolProgress that shows a task's line itself (the terminal); other observers
// get the line as a Report's message.
type TaskProgress interface {
	Task(line string)
}

// Start, Report and End are ToolProgress, serialised with the task's lines.
func (w *taskWatch) Start(tool string, stop func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.obs.Start(tool, stop)
}

func (w *taskWatch) Report(p mcpbridge.Progress) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	w.obs.Report(p)
}

func (w *taskWatch) End(res mcpbridge.Result, cancelled bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.obs.End(res, cancelled)
}

// observer is what the call reports to: w itself when there is an observer.
func (w *taskWatch) observer() ToolProgress {
	if w.obs == nil {
		return nil
	}
	return w
}

// update is mcpbridge's TaskUpdate, on the call's goroutine.
func (w *taskWatch) update(u mcpbridge.TaskUpdate) {
	if u.Stopped != "" {
		w.a.ui.Notify(LevelWarning, safetext.Line(u.Stopped)) // mcpbridge stopped it (a task that kept asking)
	}
	w.mu.Lock()
	first := w.id == ""
	if first {
		w.id, w.started = taskEntryID(u.Server, u.TaskID), w.now()
		w.tick = make(chan struct{})
		go w.ticker(w.tick)
	}
	w.last = u
	id := w.id
	w.mu.Unlock()
	// The entry first, then the line: what the person sees is already in switchboard.tasks.
	defer func() {
		w.mu.Lock()
		w.showLocked()
		w.mu.Unlock()
	}()
	msg := safetext.Bounded(u.Message, 200)
	b := &w.a.tasks
	if first {
		b.mu.Lock()
		b.loadLocked()
		e := b.entries[id]
		if e != nil && b.runs[id] != nil {
			b.mu.Unlock()
			w.a.tasks.log(fmt.Sprintf("MCP server %s gave two running calls one task id; the second (%s) is not kept for restarts", safetext.Line(u.Server), safetext.Line(u.Tool)))
			w.mu.Lock()
			w.unkept = true
			w.mu.Unlock()
			return
		}
		if e == nil || e.State != TaskRunning {
			e = &TaskEntry{ID: id, Server: u.Server, Tool: u.Tool, ServerTool: w.a.serverTool(u.Tool, u.Server), TaskID: u.TaskID, Era: u.Era,
				ArgsHash: argsHash(w.args), StartedBy: w.source, Started: w.started, Definition: w.a.definition(u.Server),
				Folders: w.a.Folders()}
			b.entries[id] = e
		}
		e.Owner = os.Getpid()
		b.runs[id] = w.cancel
		b.mu.Unlock()
		// The policy may have come to deny the tool after the gate looked and before this task
		// was listed in runs, where stopDeniedTasks finds it: it stops here instead.
		if rule := w.a.toolDenied(u.Tool, u.Server, ""); rule != "" {
			w.cancel(&policyStop{rule: rule})
		}
	}
	w.mu.Lock()
	unkept := w.unkept
	w.mu.Unlock()
	if unkept {
		return
	}
	b.mu.Lock()
	e := b.entries[id]
	if e == nil {
		b.mu.Unlock()
		return
	}
	// The file is written when the status changes; a new message or requestState alone (a server
	// may change them at every poll) at most every stateWriteEvery, so that polling does not cost
	// a file write and fsync each time. After a crash, the state kept is at most that old.
	now := w.now()
	write := first || e.State != TaskRunning || e.Status != u.Status || now.Sub(b.written[id]) >= stateWriteEvery
	e.State, e.Status, e.Message, e.RequestState, e.Updated = TaskRunning, u.Status, msg, u.RequestState, now
	if write {
		b.written[id] = now
		b.saveLocked()
	}
	broken := ""
	if first && b.broken && !b.told {
		b.told, broken = true, b.brokenWhy // once, until the file is fixed
	}
	b.mu.Unlock()
	if broken != "" {
		w.a.ui.Notify(LevelWarning, fmt.Sprintf("Switchboard cannot keep the task of %s for a restart: its task file %s is not valid (it is left as it is). "+
			"Fix or remove the file; until then a task still running when Switchboard stops is cancelled.", safetext.Line(w.name), safetext.Line(broken)))
	}
}

// stateWriteEvery bounds how often a running task's file entry is rewritten for a new status
// message or requestState alone.
const stateWriteEvery = 5 * time.Second

// showLocked shows the task's line: status message and elapsed time.
func (w *taskWatch) showLocked() {
	if w.obs == nil || w.ended || w.id == "" {
		return
	}
	line := taskLine(w.last, w.now().Sub(w.started))
	if tp, ok := w.obs.(TaskProgress); ok {
		tp.Task(line)
		return
	}
	w.obs.Report(mcpbridge.Progress{Message: line})
}

// ticker refreshes the elapsed time every tickEvery until stop is closed.
func (w *taskWatch) ticker(stop chan struct{}) {
	if w.obs == nil {
		return
	}
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.mu.Lock()
			w.showLocked()
			w.mu.Unlock()
		case <-stop:
			return
		}
	}
}

// taskLine is the person's line for a running task.
func taskLine(u mcpbridge.TaskUpdate, elapsed time.Duration) string {
	msg := safetext.Bounded(u.Message, 160)
	switch {
	case u.Status == mcpbridge.TaskInputRequired && msg == "":
		msg = "waiting for your answer"
	case msg == "":
		msg = u.Status
	}
	return msg + " · " + formatElapsed(elapsed)
}

func formatElapsed(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return strconv.Itoa(s) + "s"
	case s < 3600:
		return fmt.Sprintf("%dm %02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh %02dm", s/3600, s/60%60)
}

// end records how the call ended (res, err as Registry.Call returned them).
func (w *taskWatch) end(ctx context.Context, res mcpbridge.Result, err error) {
	w.mu.Lock()
	w.ended = true
	if w.tick != nil {
		close(w.tick)
	}
	id, last, started := w.id, w.last, w.started
	unkept, resumed := w.unkept, w.resumed
	w.mu.Unlock()
	if id == "" {
		return // not a task
	}
	if unkept { // one whose id another call holds: no entry, but nothing handed on either
		if rule := w.deniedRule(ctx); rule != "" {
			w.endDenied(rule, isPolicyStop(context.Cause(ctx)))
		}
		return
	}
	b := &w.a.tasks
	b.mu.Lock()
	delete(b.runs, id)
	delete(b.written, id)
	b.mu.Unlock()
	if w.a.closing() && err != nil {
		// Left running: the next host resumes it (its entry says running), whether or not this
		// process is still exiting when that one starts.
		b.update(id, func(e *TaskEntry) { e.Owner, e.Updated = 0, w.now() })
		return
	}
	state := taskEndState(last, res, err, context.Cause(ctx))
	if rule := w.deniedRule(ctx); rule != "" {
		// Its result is the tool's no more: not kept, not offered, not handed to the agent.
		why := "cancelled: the organisation's policy denies the tool (" + rule + ")"
		if state != TaskCancelled {
			why = "result discarded: the organisation's policy denies the tool (" + rule + ")"
		}
		b.update(id, func(e *TaskEntry) {
			e.State, e.Updated, e.Owner, e.Message = state, w.now(), 0, why
			e.IsError, e.Result, e.ForAgent = true, "", false
		})
		w.endDenied(rule, state == TaskCancelled)
		return
	}
	ran := w.now().Sub(started)
	tell := !resumed && ran >= taskNoticeAfter && (state == TaskCompleted || state == TaskFailed)
	b.update(id, func(e *TaskEntry) {
		e.State, e.Updated, e.Owner = state, w.now(), 0
		e.IsError = res.IsError
		if tell {
			e.Result = keptResult(res.Text)
		}
	})
	if !tell {
		return
	}
	level, how := LevelInfo, "finished"
	if state != TaskCompleted {
		level, how = LevelWarning, "ended: "+state
	}
	w.a.offerResult(level, fmt.Sprintf("The task of %s has %s after %s.", safetext.Line(w.name), how, formatElapsed(ran)), id)
}

// taskEndState is how a followed task ended.
func taskEndState(last mcpbridge.TaskUpdate, res mcpbridge.Result, err, cause error) string {
	switch {
	case cause == errTaskCancelled || cause == errProgressCancelled || isPolicyStop(cause) || errors.Is(err, context.Canceled):
		return TaskCancelled
	case last.Status == mcpbridge.TaskCompleted && !res.IsError:
		return TaskCompleted
	case last.Status == mcpbridge.TaskCompleted || last.Status == mcpbridge.TaskFailed:
		return TaskFailed
	case last.Status == mcpbridge.TaskCancelled:
		return TaskCancelled
	}
	return TaskLost // ttl lapsed, server gone, malformed: nobody follows it any more
}

func (a *App) taskNow() time.Time {
	if a.opts.Now != nil {
		return a.opts.Now()
	}
	return time.Now()
}

// definition is the fingerprint of server's current definition ("" unknown).
func (a *App) definition(server string) string {
	for _, c := range a.cfgs.all() {
		if c.Name == server {
			return c.Fingerprint()
		}
	}
	return ""
}

// resumeTasks follows again the tasks a host that stopped left running, once the servers have
// started: one whose server is gone or defined otherwise is lost; one another live host follows
// is left to it while that host lives, and followed once it has exited (an editor's reload starts
// the new window's host before the old one has let its tasks go). Each outcome is told to the
// person.
func (a *App) resumeTasks() {
	select {
	case <-a.firstApplied:
	case <-a.baseCtx.Done():
		return
	}
	b := &a.tasks
	b.mu.Lock()
	b.loadLocked()
	// Nothing to follow (the usual start): the file is neither locked nor written again. Writing
	// it took an flock, a JSON encoding and an fsync'ed replace at every start, beside the
	// first servers' start (cmd/sbbench "first call"). A task whose host stops after this
	// read is not this host's to follow, as one that stops after the claim below is not.
	follow := false
	for _, e := range b.entries {
		follow = follow || b.claimable(e, 0)
	}
	owners := b.newOwnersLocked()
	b.mu.Unlock()
	a.awaitOwners(owners)
	if follow {
		a.claimTasks(0)
	}
	a.goBg(a.tasksWatch)
}

// tasksSettle is how long the tasks file's watch waits after a change before reading it (a write
// is a temporary file and a rename).
const tasksSettle = 100 * time.Millisecond

// tasksWatch follows, while this host runs, what another window's host leaves running when it
// exits, for tasks that host started after this one looked at the file: it watches the file and
// waits for the exit of each other live host that follows a running task (followAfter, once per
// host). Without it, closing one of two windows left its tasks unfollowed until a host started.
func (a *App) tasksWatch() {
	b := &a.tasks
	if b.path == "" {
		return
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		a.log.Debug("host: watching the tasks file", "error", err)
		return
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(b.path)); err != nil {
		a.log.Debug("host: watching the tasks file", "error", err)
		return
	}
	var settle <-chan time.Time
	for {
		select {
		case <-a.baseCtx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if filepath.Clean(ev.Name) == filepath.Clean(b.path) {
				settle = time.After(tasksSettle)
			}
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
			settle = time.After(tasksSettle)
		case <-settle:
			settle = nil
			b.mu.Lock()
			b.loadLocked()
			b.mergeLocked()
			owners := b.newOwnersLocked()
			// A running task no live host follows: its window closed (or was killed) before
			// this one saw it followed, within the settling time or before the watch began.
			follow := false
			for _, e := range b.entries {
				follow = follow || b.claimable(e, 0)
			}
			b.mu.Unlock()
			a.awaitOwners(owners)
			if follow {
				a.claimTasks(0)
			}
		}
	}
}

// newOwnersLocked is every live host, other than this one, that follows a running task of the
// book and that this host does not wait for yet; they are marked waited for.
func (b *taskBook) newOwnersLocked() []int {
	var pids []int
	for _, e := range b.entries {
		if e.State == TaskRunning && b.runs[e.ID] == nil && !b.waits[e.Owner] && processAlive(e.Owner) {
			if b.waits == nil {
				b.waits = map[int]bool{}
			}
			b.waits[e.Owner] = true
			pids = append(pids, e.Owner)
		}
	}
	return pids
}

// awaitOwners follows, for each host of pids, what it leaves running once it exits.
func (a *App) awaitOwners(pids []int) {
	for _, pid := range pids {
		a.log.Info(fmt.Sprintf("host: tasks are followed by another Switchboard (process %d); this one follows what it leaves running once it exits", pid))
		a.goBg(func() { a.followAfter(pid) })
	}
}

// followAfter waits for the host pid, which follows tasks of the file, to exit, and then follows
// what it left running.
func (a *App) followAfter(pid int) {
	awaitProcessExit(a.baseCtx, pid)
	a.tasks.mu.Lock()
	delete(a.tasks.waits, pid)
	a.tasks.mu.Unlock()
	if a.baseCtx.Err() == nil {
		a.claimTasks(pid)
	}
}

// claimTasks claims, under the file's lock and after reading it again, every task no live host
// follows, and follows each: of two windows starting at once, one follows each task. exited is a
// host known to have exited (0 none): its pidfd said so, while a signal to it still succeeds until
// its parent reaps it, which it may not have done yet.
func (a *App) claimTasks(exited int) {
	if a.closing() {
		return // what this host leaves running is the next host's (taskWatch.end), not its own again
	}
	b := &a.tasks
	var todo []TaskEntry
	b.mu.Lock()
	b.loadLocked()
	b.syncLocked(func() {
		for _, e := range b.entries {
			if b.claimable(e, exited) {
				e.Owner = os.Getpid() // ours now: another window starting leaves it
				e.Updated = a.taskNow()
				todo = append(todo, *e)
			}
		}
	})
	// Another window that claimed some of them first (it waited for the same host) follows
	// them now: wait for that one in turn.
	owners := b.newOwnersLocked()
	b.mu.Unlock()
	a.awaitOwners(owners)
	for _, e := range todo {
		a.goBg(func() { a.resumeTask(e) })
	}
}

// claimable: e is a running task no host follows (its owner is gone, or is exited), so this one may.
func (b *taskBook) claimable(e *TaskEntry, exited int) bool {
	return e.State == TaskRunning && b.runs[e.ID] == nil && (exited > 0 && e.Owner == exited || !processAlive(e.Owner))
}

// processAlive: pid is a running process other than this one (0: none). A pid past what the
// system's pid_t holds (a hand-edited tasks.json) is none: cut to 32 bits it could read as -1,
// and kill(-1, 0) asks after every process.
func processAlive(pid int) bool {
	if pid <= 0 || pid > math.MaxInt32 || pid == os.Getpid() {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// resumeTask follows one task left by a host that stopped.
func (a *App) resumeTask(e TaskEntry) {
	a.registry.WaitStarted(a.baseCtx, e.Server) // ignore error: closing; the call below says so
	b := &a.tasks
	// Claimed just before this host began to close: its servers are going, which says nothing
	// about the task. Left running for the next host, as taskWatch.end leaves one.
	leave := func() {
		b.update(e.ID, func(x *TaskEntry) {
			if x.State == TaskRunning && x.Owner == os.Getpid() {
				x.Owner, x.Updated = 0, a.taskNow()
			}
		})
	}
	if a.closing() {
		leave()
		return
	}
	lost := func(why string) {
		if a.closing() { // the server is "gone" because this host is closing
			leave()
			return
		}
		b.update(e.ID, func(x *TaskEntry) { x.State, x.Owner, x.Message = TaskLost, 0, why })
		a.ui.Notify(LevelWarning, fmt.Sprintf("The task of %s that was running when Switchboard stopped could not be followed again: %s.", safetext.Line(e.Tool), why))
	}
	if def := a.definition(e.Server); def == "" || def != e.Definition {
		lost("its server " + safetext.Line(e.Server) + " is no longer configured as it was")
		return
	}
	if _, ok := a.registry.Lookup(e.Tool); !ok {
		lost("its server " + safetext.Line(e.Server) + " is not running")
		return
	}
	if rule := a.toolDenied(e.Tool, e.Server, e.ServerTool); rule != "" {
		// The policy came to deny the tool while no host ran: its result reaches neither the
		// agent nor the person as the tool's, and the server stops working on it.
		a.registry.CancelTask(a.baseCtx, e.Tool, e.TaskID, e.RequestState) // ignore error: the server went away; nothing follows it
		b.update(e.ID, func(x *TaskEntry) {
			x.State, x.Owner, x.Updated, x.Message = TaskCancelled, 0, a.taskNow(), "cancelled: the organisation's policy denies the tool ("+rule+")"
		})
		a.ui.Notify(LevelWarning, fmt.Sprintf("The task of %s that was running when Switchboard stopped was cancelled: your organisation's policy now denies the tool (%s).",
			safetext.Line(e.Tool), safetext.Line(rule)))
		return
	}
	ctx, cancel := context.WithCancelCause(a.baseCtx)
	defer cancel(nil)
	ctx, w := a.watchTask(ctx, cancel, a.ui.ToolProgress(), e.StartedBy, e.Tool, nil)
	w.mu.Lock()
	w.id, w.started = e.ID, e.Started
	w.last = mcpbridge.TaskUpdate{Server: e.Server, Tool: e.Tool, TaskID: e.TaskID, Status: e.Status, Message: e.Message}
	w.tick = make(chan struct{})
	w.resumed = true
	go w.ticker(w.tick)
	w.mu.Unlock()
	b.mu.Lock()
	b.runs[e.ID] = cancel
	b.mu.Unlock()
	obs := w.observer()
	if obs != nil {
		obs.Start(e.Tool, func() { cancel(errProgressCancelled) })
		ctx = mcpbridge.WithProgress(ctx, obs.Report)
	}
	res, err := a.registry.ResumeTask(ctx, e.Tool, e.TaskID, e.RequestState)
	cause := context.Cause(ctx)
	w.end(ctx, res, err)
	denied := w.deniedAtEnd()
	if denied != "" {
		res = policyStoppedResult(e.Tool, denied)
	}
	if obs != nil {
		obs.End(res, denied != "" || cause == errProgressCancelled || cause == errTaskCancelled)
	}
	if a.closing() || denied != "" {
		return // left for the next host, or stopped for the policy (end told the person)
	}
	var state string
	forAgent := false
	b.update(e.ID, func(x *TaskEntry) {
		x.Result, x.IsError = keptResult(res.Text), res.IsError
		state = x.State
		// Its conversation ended with the host that stopped: the result waits for the next chat
		// turn in its workspace (handBack). Only an ended task has something to hand back.
		forAgent = e.StartedBy == "agent" && (state == TaskCompleted || state == TaskFailed)
		x.ForAgent = forAgent
	})
	level := LevelInfo
	if state != TaskCompleted {
		level = LevelWarning
	}
	a.offerResult(level, resumedNotice(e, state, forAgent, a.Folders()), e.ID)
}

// resumedNotice is the person's sentence for a task this host followed after the host that
// started it stopped. Any host with the server's definition follows it, whatever its folders;
// the result goes to the agent only in the task's own workspace (handBack), and the sentence
// says which.
func resumedNotice(e TaskEntry, state string, forAgent bool, folders []string) string {
	how := "finished"
	if state != TaskCompleted {
		how = "ended: " + state
	}
	after := ""
	switch {
	case forAgent && sameWorkspace(e.Folders, folders):
		after = " The agent gets it with your next chat message in this workspace."
	case forAgent:
		after = " The agent gets it with your next chat message in the workspace it was started from (" + safetext.Line(strings.Join(e.Folders, ", ")) + ")."
	}
	return fmt.Sprintf("The task of %s (%s), started before Switchboard restarted, has %s.%s",
		safetext.Line(e.Tool), safetext.Line(e.StartedBy), how, after)
}
