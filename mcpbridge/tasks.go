package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/jsonscan"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// MCP Tasks (issue 30): a tool call that the server runs as a task returns a handle at once; the
// client polls it until it ends and then takes its result. Both eras:
//
//   - 2025-11-25 (experimental core): a tool whose execution.taskSupport is "required" or
//     "optional", on a server whose capabilities name tasks.requests.tools.call, is called with a
//     "task" member in its params; the server answers {"task": {...}} (CreateTaskResult). The
//     client polls tasks/get and, once the task is completed or failed, fetches the result with
//     tasks/result. A task in input_required delivers its questions (elicitation/create,
//     sampling/createMessage) as server requests while a tasks/result is open, so the client
//     opens one then and keeps polling for the status line. The client declares no "tasks"
//     capability of its own: it hosts no tasks for servers (see README, "Long calls").
//   - 2026-07-28 (extension io.modelcontextprotocol/tasks): the client declares the extension in
//     every request's capabilities and the server may answer any tools/call with resultType
//     "task" (unasked). tasks/get carries the result or error once the task ends; input_required
//     carries inputRequests, answered through the same handlers as a multi round-trip result
//     (mrtr.go) and sent back with tasks/update; requestState is echoed, always the latest.
//
// No ceiling: a task is not bounded by the server's call timeout (each request of it is). It ends
// when the server says so, when its ttl lapses (counted from when the handle arrived), or when
// the caller's ctx ends, which sends tasks/cancel. Polls follow the server's interval, bounded to
// [minTaskPoll, maxTaskPoll].

// Tool execution.taskSupport values (Tool.TaskSupport); "" or "forbidden" is a plain call.
const (
	TaskSupportRequired = "required"
	TaskSupportOptional = "optional"
)

// Task statuses (TaskUpdate.Status).
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// TaskExtension is the 2026-07-28 extension's identifier, declared in the client's capabilities.
const TaskExtension = "io.modelcontextprotocol/tasks"

// Poll bounds: below, a server cannot make the host spin; above, a task's status line and end
// are seen within seconds whatever interval the server suggests.
const (
	minTaskPoll     = 200 * time.Millisecond
	maxTaskPoll     = 5 * time.Second
	defaultTaskPoll = time.Second
	// taskCancelWait bounds the tasks/cancel sent when the caller gives up.
	taskCancelWait = 2 * time.Second
	// maxTaskID bounds a task id (it is kept in the host's state file and shown).
	maxTaskID = 256
	// maxRequestState bounds a task's requestState (kept in the host's state file at every change).
	maxRequestState = 16 << 10
	// maxPollFailures is how many polls in a row may fail (time out) before the call ends.
	maxPollFailures = 3
)

// TaskUpdate is one observed state of a tool call that runs as a task.
type TaskUpdate struct {
	Server string // server name
	Tool   string // registered tool name
	TaskID string
	Era    string // ProtocolLegacy or ProtocolModern
	Status string // TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled
	// Message is the task's statusMessage as the server sent it: escape it before showing.
	Message string
	TTL     time.Duration // 0: none
	// RequestState is the latest opaque requestState (2026-07-28), needed to resume the task.
	RequestState string
	// Stopped, on the last update of a task Switchboard itself stopped, says why in one plain
	// sentence for the person (the server's text is not in it).
	Stopped string
}

// Terminal: the task ended (completed, failed or cancelled).
func (u TaskUpdate) Terminal() bool { return terminalTask(u.Status) }

func terminalTask(s string) bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// TaskHooks is what a caller tells the tool calls of a ctx about tasks (WithTaskHooks):
// TaskUpdate gets every update of a call that runs as a task, once when the task is created and
// at every change of its status or status message, the last one terminal (unless the call ended
// otherwise: cancel, ttl, a dead server), on the call's goroutine (it must return quickly); while
// KeepTask reports true, a task whose ctx ends is left running on its server, without
// tasks/cancel: the host is going away and will follow it again (ResumeTask) when it is back. A
// person's cancel still cancels.
type TaskHooks interface {
	TaskUpdate(TaskUpdate)
	KeepTask() bool
}

type taskHooksKey struct{}

// WithTaskHooks returns a ctx whose tool calls report to h. One value for both hooks, from one
// pointer: the host sets them on every call, and two values with a closure each were four of the
// call's allocations.
func WithTaskHooks(ctx context.Context, h TaskHooks) context.Context {
	return context.WithValue(ctx, taskHooksKey{}, h)
}

// WithTaskUpdates is WithTaskHooks with only the updates set (ctx's KeepTask kept).
func WithTaskUpdates(ctx context.Context, fn func(TaskUpdate)) context.Context {
	return WithTaskHooks(ctx, funcHooks{update: fn, keep: keepTaskFunc(ctx)})
}

// WithKeepTask is WithTaskHooks with only KeepTask set (ctx's updates kept).
func WithKeepTask(ctx context.Context, keep func() bool) context.Context {
	return WithTaskHooks(ctx, funcHooks{update: taskUpdatesFunc(ctx), keep: keep})
}

type funcHooks struct {
	update func(TaskUpdate)
	keep   func() bool
}

func (h funcHooks) TaskUpdate(u TaskUpdate) {
	if h.update != nil {
		h.update(u)
	}
}

func (h funcHooks) KeepTask() bool { return h.keep != nil && h.keep() }

// taskUpdatesFunc is ctx's TaskUpdate hook, nil when none is set.
func taskUpdatesFunc(ctx context.Context) func(TaskUpdate) {
	h, _ := ctx.Value(taskHooksKey{}).(TaskHooks)
	if f, ok := h.(funcHooks); ok {
		return f.update
	}
	if h == nil {
		return nil
	}
	return h.TaskUpdate
}

// keepTaskFunc is ctx's KeepTask hook, nil when none is set.
func keepTaskFunc(ctx context.Context) func() bool {
	h, _ := ctx.Value(taskHooksKey{}).(TaskHooks)
	if f, ok := h.(funcHooks); ok {
		return f.keep
	}
	if h == nil {
		return nil
	}
	return h.KeepTask
}

// taskClock is the time source of task polling; tests inject one (withTaskClock).
type taskClock struct {
	now   func() time.Time
	after func(time.Duration) <-chan time.Time
}

type taskClockKey struct{}

func withTaskClock(ctx context.Context, c taskClock) context.Context {
	return context.WithValue(ctx, taskClockKey{}, c)
}

func taskClockOf(ctx context.Context) taskClock {
	if c, ok := ctx.Value(taskClockKey{}).(taskClock); ok {
		return c
	}
	return taskClock{now: time.Now, after: time.After}
}

// wireTask is a task as either era sends it (CreateTaskResult's task, a tasks/get result).
type wireTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	// 2025-11-25: milliseconds.
	TTL          *float64 `json:"ttl"`
	PollInterval *float64 `json:"pollInterval"`
	// 2026-07-28.
	TTLSeconds     *float64                   `json:"ttlSeconds"`
	PollIntervalMs *float64                   `json:"pollIntervalMilliseconds"`
	RequestState   json.RawMessage            `json:"requestState"`
	Result         json.RawMessage            `json:"result"`
	Error          *mcp.JSONRPCErrorDetails   `json:"error"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
}

// ttl is the task's time to live (0: none).
func (t wireTask) ttl() time.Duration {
	switch {
	case t.TTLSeconds != nil:
		return durationOf(*t.TTLSeconds, time.Second)
	case t.TTL != nil:
		return durationOf(*t.TTL, time.Millisecond)
	}
	return 0
}

// poll is the interval to the next poll: the server's, bounded; defaultTaskPoll without one.
func (t wireTask) poll() time.Duration {
	d := time.Duration(0)
	switch {
	case t.PollIntervalMs != nil:
		d = durationOf(*t.PollIntervalMs, time.Millisecond)
	case t.PollInterval != nil:
		d = durationOf(*t.PollInterval, time.Millisecond)
	}
	if d <= 0 {
		d = defaultTaskPoll
	}
	return min(max(d, minTaskPoll), maxTaskPoll)
}

// durationOf is n units, 0 for a value that is not a positive finite number, and capped far
// beyond any real task (a server's 1e300 must not overflow into a negative duration).
func durationOf(n float64, unit time.Duration) time.Duration {
	if math.IsNaN(n) || n <= 0 {
		return 0
	}
	const limit = 10 * 365 * 24 * time.Hour
	if n >= float64(limit/unit) {
		return limit
	}
	return time.Duration(n * float64(unit))
}

// state is the latest requestState as a string ("" = none).
func (t wireTask) state() string {
	var s string
	if len(t.RequestState) > 0 && json.Unmarshal(t.RequestState, &s) == nil {
		return s
	}
	return ""
}

// checkTask validates what every era's task must have.
func checkTask(t wireTask) error {
	switch {
	case t.TaskID == "":
		return errors.New("the task has no taskId")
	case len(t.TaskID) > maxTaskID:
		return fmt.Errorf("the taskId is longer than %d bytes", maxTaskID)
	}
	switch t.Status {
	case TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled:
	default:
		return fmt.Errorf("unknown task status %s", strconv.Quote(Cut(t.Status, 64)))
	}
	if len(t.RequestState) > 0 && string(t.RequestState) != "null" && t.RequestState[0] != '"' {
		return errors.New("requestState is not a string")
	}
	if len(t.RequestState) > maxRequestState {
		return fmt.Errorf("requestState is longer than %d bytes", maxRequestState)
	}
	return nil
}

// taskSupportOf reads a tool's execution.taskSupport; anything but "required" or "optional"
// (absent, malformed, "forbidden", unknown) is a plain call.
func taskSupportOf(execution json.RawMessage) string {
	var e struct {
		TaskSupport string `json:"taskSupport"`
	}
	if len(execution) == 0 || json.Unmarshal(execution, &e) != nil {
		return ""
	}
	if e.TaskSupport == TaskSupportRequired || e.TaskSupport == TaskSupportOptional {
		return e.TaskSupport
	}
	return ""
}

// taskAugment: a tools/call of a tool with support (Tool.TaskSupport) is sent as a 2025-11-25
// task. A 2026-07-28 server decides by itself (the extension is declared on every request).
func (c *conn) taskAugment(support string) bool {
	if c.isModern() || (support != TaskSupportRequired && support != TaskSupportOptional) {
		return false
	}
	t := c.caps.Tasks
	// The revision forbids the augmentation unless the server declares it for tools/call,
	// whatever the tool says.
	return t != nil && t.Requests != nil && t.Requests.Tools != nil && t.Requests.Tools.Call != nil
}

// createdTask reads a tools/call result that is a task handle: 2025-11-25 when the call asked for
// one ({"task": {...}}), 2026-07-28 by resultType "task". ok is false for an ordinary result.
func (c *conn) createdTask(result []byte, asked bool) (wireTask, bool, error) {
	if (!asked && !c.isModern()) || !bytes.Contains(result, []byte(`task`)) {
		return wireTask{}, false, nil // the usual result: no scan, or one
	}
	if c.isModern() {
		if !isResultType(result, "task") {
			return wireTask{}, false, nil
		}
		// Declared here, not as a named result: decoded into, it lives on the heap, and the usual
		// result above would pay for it on every call.
		var t wireTask
		if err := json.Unmarshal(result, &t); err != nil {
			return wireTask{}, true, fmt.Errorf("malformed task result: %w", err)
		}
		if t.Result != nil || t.Error != nil || t.InputRequests != nil {
			// The extension forbids them on a CreateTaskResult: a server that sends them is
			// confused about what it returned.
			return wireTask{}, true, errors.New("malformed task result: a new task carries a result, an error or input requests")
		}
		return t, true, checkTask(t)
	}
	if !asked {
		return wireTask{}, false, nil
	}
	var w struct {
		Task *wireTask `json:"task"`
	}
	if json.Unmarshal(result, &w) != nil || w.Task == nil {
		return wireTask{}, false, nil
	}
	return *w.Task, true, checkTask(*w.Task)
}

// isResultType: result's own top-level resultType is rt.
func isResultType(result []byte, rt string) bool {
	var got string
	found := false
	ok := jsonscan.Members(result, func(name, v []byte) bool {
		if which, unsure := jsonscan.Which(name, "resultType"); which == 0 && !unsure {
			found = jsonscan.SetString(&got, v)
		}
		return true
	})
	if !ok {
		var w struct {
			ResultType string `json:"resultType"`
		}
		if json.Unmarshal(result, &w) != nil {
			return false
		}
		return w.ResultType == rt
	}
	return found && got == rt
}

// taskError is a result for the model about a task that did not complete; the server's message
// (for the person, in the last TaskUpdate) is quoted, capped.
func (c *conn) taskError(name, id, what string) Result {
	return errorResult(name, fmt.Sprintf("server %q ran the call as task %s, which %s", c.cfg.Name, strconv.Quote(Cut(id, 64)), what))
}

// followTask follows the task t created by a tools/call of name (registered) until it ends and
// returns its result. Errors are ctx's (the task was cancelled) and a lost transport; every other
// end is a Result (an error result for the model when the task did not complete).
func (c *conn) followTask(ctx context.Context, name string, outSchema json.RawMessage, t wireTask, timeout time.Duration) (Result, error) {
	clk := taskClockOf(ctx)
	fn := taskUpdatesFunc(ctx)
	id := t.TaskID
	var deadline time.Time
	if ttl := t.ttl(); ttl > 0 {
		deadline = clk.now().Add(ttl)
	}
	state := t.state()
	var last TaskUpdate
	report := func(t wireTask) {
		u := TaskUpdate{Server: c.cfg.Name, Tool: name, TaskID: id, Era: c.era, Status: t.Status, Message: t.StatusMessage, TTL: t.ttl(), RequestState: state}
		if fn != nil && (u.Status != last.Status || u.Message != last.Message || u.RequestState != last.RequestState) {
			fn(u)
		}
		last = u
	}
	report(t)
	given := map[string]bool{} // 2026-07-28: input request keys answered (never twice)
	rounds := 0                // 2026-07-28: input_required results answered
	var legacyResult chan taskOutcome
	lctx, lcancel := context.WithCancel(ctx) // a 2025-11-25 tasks/result open while this runs
	defer lcancel()
	failures := 0
	for {
		if terminalTask(t.Status) {
			return c.finishTask(ctx, name, outSchema, t, state, legacyResult, timeout)
		}
		if t.Status == TaskInputRequired && c.isModern() && unanswered(t.InputRequests, given) {
			// A task may ask as many times as one ordinary request may (mrtr.go): a server that
			// asks again after every answer would otherwise keep the person answering forever.
			if rounds++; rounds > maxInputRounds {
				c.cancelTask(ctx, id, state)
				if fn != nil {
					fn(TaskUpdate{Server: c.cfg.Name, Tool: name, TaskID: id, Era: c.era, Status: TaskCancelled, RequestState: state,
						Message: fmt.Sprintf("stopped by Switchboard: it kept asking questions (%d answered)", maxInputRounds),
						Stopped: fmt.Sprintf("Switchboard stopped the task of %s: MCP server '%s' kept asking you questions (%d answered; a task may ask at most %d).",
							name, c.cfg.Name, maxInputRounds, maxInputRounds)})
				}
				return c.taskError(name, id, fmt.Sprintf("asked for input more than %d times; Switchboard cancelled it (tasks/cancel) so that it cannot keep asking the user. "+
					"Do not call it again unless the user asks you to", maxInputRounds)), nil
			}
		}
		if t.Status == TaskInputRequired {
			if c.isModern() {
				if err := c.updateTask(ctx, id, state, t.InputRequests, given, timeout); err != nil {
					if ctx.Err() != nil {
						c.cancelTask(ctx, id, state)
						return Result{}, ctx.Err()
					}
					c.cancelTask(ctx, id, state) // it would wait for an answer that never comes
					return c.taskError(name, id, fmt.Sprintf("asked for input that could not be given (%v); it was cancelled", err)), nil
				}
			} else if legacyResult == nil {
				// 2025-11-25: the questions come as server requests while tasks/result is open.
				legacyResult = make(chan taskOutcome, 1)
				go func() { legacyResult <- c.taskResult(lctx, id, 0) }()
			}
		}
		select {
		case <-clk.after(t.poll()):
		case o := <-legacyResult:
			// tasks/result answered before a poll saw the end: the update says how it ended.
			if o.err == nil {
				report(wireTask{Status: TaskCompleted, StatusMessage: t.StatusMessage})
			} else if ctx.Err() == nil && !errors.Is(o.err, transport.ErrTransportClosed) {
				report(wireTask{Status: TaskFailed, StatusMessage: o.err.Error()})
			}
			return c.taskOutcomeResult(ctx, name, outSchema, id, o)
		case <-ctx.Done():
			c.cancelTask(ctx, id, state)
			return Result{}, ctx.Err()
		}
		if !deadline.IsZero() && clk.now().After(deadline) {
			report(wireTask{Status: TaskFailed, StatusMessage: "the task's time to live ran out before it finished"})
			return c.taskError(name, id, "did not finish within its time to live; the server may have discarded it"), nil
		}
		raw, _, err := c.taskRequest(ctx, string(mcp.MethodTasksGet), id, state, nil, timeout)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				c.cancelTask(ctx, id, state)
				return Result{}, ctx.Err()
			case errors.Is(err, transport.ErrTransportClosed):
				return Result{}, err
			case errors.Is(err, stdio.ErrCallTimeout):
				if failures++; failures < maxPollFailures {
					continue
				}
				return c.taskError(name, id, fmt.Sprintf("stopped answering: %d polls in a row got no answer within %s", failures, timeout)), nil
			default: // a JSON-RPC error (say, an unknown task) or an HTTP failure
				return c.taskError(name, id, "could not be followed: tasks/get: "+Cut(err.Error(), 256)), nil
			}
		}
		failures = 0
		var next wireTask
		if err := json.Unmarshal(raw, &next); err != nil {
			return c.taskError(name, id, "got a malformed tasks/get result: "+err.Error()), nil
		}
		if next.TaskID == "" {
			next.TaskID = id
		}
		if err := checkTask(next); err != nil || next.TaskID != id {
			if err == nil {
				err = errors.New("tasks/get answered for another task")
			}
			c.cancelTask(ctx, id, state)
			return c.taskError(name, id, "got a malformed tasks/get result: "+err.Error()), nil
		}
		if c.isModern() && len(next.RequestState) > 0 {
			state = next.state()
		} else if c.isModern() {
			state = "" // the latest message had none: none is sent
		}
		t = next
		report(t)
	}
}

// taskOutcome is a tasks/result answer.
type taskOutcome struct {
	raw []byte
	fr  *stdio.Frame
	err error
}

// taskResult is tasks/result (2025-11-25): it answers when the task has ended. timeout 0: bounded
// by ctx only (it is open while the person answers the task's questions).
func (c *conn) taskResult(ctx context.Context, id string, timeout time.Duration) taskOutcome {
	raw, fr, err := c.taskRequest(ctx, string(mcp.MethodTasksResult), id, "", nil, timeout)
	return taskOutcome{raw, fr, err}
}

// taskOutcomeResult shapes a tasks/result answer.
func (c *conn) taskOutcomeResult(ctx context.Context, name string, outSchema json.RawMessage, id string, o taskOutcome) (Result, error) {
	switch {
	case o.err == nil:
		return parseCallResultSchema(name, o.raw, o.fr, outSchema), nil
	case ctx.Err() != nil:
		c.cancelTask(ctx, id, "")
		return Result{}, ctx.Err()
	case errors.Is(o.err, transport.ErrTransportClosed):
		return Result{}, o.err
	}
	return c.taskError(name, id, "failed: "+Cut(o.err.Error(), 1024)), nil
}

// finishTask turns a task that ended into the call's result.
func (c *conn) finishTask(ctx context.Context, name string, outSchema json.RawMessage, t wireTask, state string, pending chan taskOutcome, timeout time.Duration) (Result, error) {
	id := t.TaskID
	if c.isModern() {
		switch t.Status {
		case TaskCompleted:
			if len(t.Result) == 0 || t.Result[0] != '{' {
				return c.taskError(name, id, "completed without a result"), nil
			}
			return parseCallResultSchema(name, t.Result, nil, outSchema), nil
		case TaskFailed:
			msg := t.StatusMessage
			if t.Error != nil {
				msg = t.Error.Message
			}
			return c.taskError(name, id, "failed: "+Cut(msg, 1024)), nil
		}
		return c.taskError(name, id, "was cancelled "+cancelledWhy(t.StatusMessage)), nil
	}
	if t.Status == TaskCancelled {
		return c.taskError(name, id, "was cancelled "+cancelledWhy(t.StatusMessage)), nil
	}
	// 2025-11-25: completed and failed both have their outcome behind tasks/result (for failed,
	// the JSON-RPC error or the tool's error result).
	var o taskOutcome
	if pending != nil {
		select {
		case o = <-pending:
		case <-ctx.Done():
			c.cancelTask(ctx, id, state)
			return Result{}, ctx.Err()
		}
	} else {
		o = c.taskResult(ctx, id, timeout)
	}
	if t.Status == TaskFailed && o.err != nil && !errors.Is(o.err, transport.ErrTransportClosed) && ctx.Err() == nil {
		return c.taskError(name, id, "failed: "+Cut(o.err.Error(), 1024)), nil
	}
	return c.taskOutcomeResult(ctx, name, outSchema, id, o)
}

func cancelledWhy(msg string) string {
	if msg == "" {
		return "(by the server or on the person's request)"
	}
	return "(" + strconv.Quote(Cut(msg, 256)) + ")"
}

// updateTask answers the input requests of a 2026-07-28 task not answered yet (answered records
// them) and sends the answers with tasks/update.
func (c *conn) updateTask(ctx context.Context, id, state string, reqs map[string]json.RawMessage, answered map[string]bool, timeout time.Duration) error {
	fresh := map[string]json.RawMessage{}
	for k, v := range reqs {
		if !answered[k] {
			fresh[k] = v
		}
	}
	if len(fresh) == 0 {
		return nil // answered already: the server has not caught up yet
	}
	ask, _ := json.Marshal(inputAsk{InputRequests: fresh}) // ignore error: raw values
	members, err := c.answerInput(ctx, ask)                // mrtr.go: the same handlers
	if err != nil {
		return err
	}
	for k := range fresh {
		answered[k] = true
	}
	_, _, err = c.taskRequest(ctx, "tasks/update", id, state, members, timeout)
	return err
}

// unanswered: reqs holds a request not answered yet.
func unanswered(reqs map[string]json.RawMessage, answered map[string]bool) bool {
	for k := range reqs {
		if !answered[k] {
			return true
		}
	}
	return false
}

// cancelTask sends tasks/cancel for a task the caller gave up on; its ctx may have ended (the
// notice goes out regardless, bounded by taskCancelWait). Errors are ignored: the server's
// cancel is cooperative and the call ends anyway.
func (c *conn) cancelTask(ctx context.Context, id, state string) {
	if keep := keepTaskFunc(ctx); keep != nil && keep() {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskCancelWait)
	defer cancel()
	_, _, _ = c.taskRequest(cctx, string(mcp.MethodTasksCancel), id, state, nil, 0) // ignore error: best effort
}

// taskRequest sends one tasks/* request about task id: params {"taskId":id[,"requestState":state]
// <members>}; timeout 0 is bounded by ctx only. A request that gets no answer within timeout
// fails with stdio.ErrCallTimeout.
func (c *conn) taskRequest(ctx context.Context, method, id, state string, members []byte, timeout time.Duration) ([]byte, *stdio.Frame, error) {
	params := make([]byte, 0, 32+len(id)+len(state)+len(members))
	params = append(params, `{"taskId":`...)
	params = jsonscan.AppendString(params, id)
	if state != "" && !bytes.Contains(members, []byte(`"requestState":`)) {
		params = append(params, `,"requestState":`...)
		params = jsonscan.AppendString(params, state)
	}
	params = append(params, members...)
	params = append(params, '}')
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: c.nextID(), Method: method, Params: json.RawMessage(params)}
	if err := c.decorate(&req); err != nil { // era.go
		return nil, nil, err
	}
	if req.Header != nil {
		// The extension routes a task's requests by Mcp-Name: the task id.
		if v, ok := mcp.EncodeHeaderValue(id); ok {
			req.Header.Set(mcp.HeaderName, v)
		}
	} else if _, isHTTP := c.tr.(transport.HTTPConnection); isHTTP && c.isModern() {
		req.Header = http.Header{}
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	resp, fr, err := c.roundTrip(rctx, req)
	if err != nil || rctx.Err() != nil {
		if rctx.Err() != nil {
			c.cancelled(req.ID, rctx.Err())
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, stdio.ErrCallTimeout
		}
		return nil, nil, err
	}
	if resp.Error != nil {
		return nil, nil, resp.Error.AsError()
	}
	if fr == nil {
		fr = &stdio.Frame{}
	}
	return resp.Result, fr, nil
}

// ResumeTask follows a task that an earlier run started (TaskUpdate told it) until it ends,
// without calling the tool again: tool is the registered name, taskID and requestState as last
// reported. A server that is not ready, or no longer offers the tool, is an error result.
func (r *Registry) ResumeTask(ctx context.Context, tool, taskID, requestState string) (Result, error) {
	r.calls.Add(1)
	defer r.calls.Add(-1)
	t, c, ok := r.snap.Load().lookupConn(tool)
	if !ok || c == nil {
		return errorResult(tool, fmt.Sprintf("the task %s of %s cannot be followed: the tool's server is not running", strconv.Quote(Cut(taskID, 64)), tool)), ctx.Err()
	}
	timeout := c.cfg.CallTimeout
	if timeout <= 0 {
		timeout = config.DefaultCallTimeout
	}
	wt := wireTask{TaskID: taskID, Status: TaskWorking}
	if requestState != "" {
		wt.RequestState, _ = json.Marshal(requestState) // ignore error: a string
	}
	if err := checkTask(wt); err != nil {
		return errorResult(tool, "cannot resume the task: "+err.Error()), nil
	}
	res, err := c.followTask(ctx, tool, t.OutputSchema, wt, timeout)
	return r.callOutcome(ctx, c, tool, res, err, timeout)
}

// CancelTask sends tasks/cancel for a task an earlier run started (as ResumeTask names it),
// without following it: the caller will not take its result.
func (r *Registry) CancelTask(ctx context.Context, tool, taskID, requestState string) error {
	_, c, ok := r.snap.Load().lookupConn(tool)
	if !ok || c == nil {
		return fmt.Errorf("mcpbridge: cancel task %s of %s: the tool's server is not running", strconv.Quote(Cut(taskID, 64)), tool)
	}
	c.cancelTask(context.WithoutCancel(ctx), taskID, requestState)
	return nil
}
