package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
)

// The operations both front ends need. Errors a front end caused are *RequestError.

// Tool is one tool as a front end lists it: descriptions escaped, with whether the allowlist
// grants it as the gate decides it.
type Tool struct {
	mcpbridge.Tool
	Allowlisted bool
	Pin         string // PinChanged or PinNew when it differs from the definition the person approved
	// Policy is what the organisation's policy says of the tool: "deny", "ask" or "" (no rule
	// that denies or asks); PolicyRule the rule as file#/json/pointer.
	Policy, PolicyRule string
}

// Tools lists the tools of every server, or of one ("" = all).
func (a *App) Tools(server string) ([]Tool, error) {
	if server != "" && !a.knownServer(server) {
		return nil, badRequest("unknown server %q", server)
	}
	out := []Tool{}
	pins := a.currentPins()
	for _, t := range a.registry.Tools() {
		if server != "" && t.Server != server {
			continue
		}
		// As the gate decides it: a workspace server's grant counts only for its definition.
		allowed := a.gate.Allowlisted(permissions.Request{Tool: t.Name, Server: t.Server, Definition: t.Definition})
		if len(t.InputSchema) == 0 {
			t.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		t.Description = safetext.Block(t.Description)
		tool := Tool{Tool: t, Allowlisted: allowed, Pin: pins.byName[t.Name].Kind}
		// As the gate's first step judges it (policyVerdict), whatever the mode.
		switch pv := a.policyVerdict(permissions.Request{Tool: t.Name, Server: t.Server}); {
		case pv.Deny:
			tool.Policy, tool.PolicyRule = "deny", pv.Rule
		case pv.Ask:
			tool.Policy, tool.PolicyRule = "ask", pv.Rule
		}
		out = append(out, tool)
	}
	return out, nil
}

func (a *App) knownServer(name string) bool {
	for _, st := range a.registry.Servers() {
		if st.Name == name {
			return true
		}
	}
	return false
}

// Reconnect re-reads the configuration and restarts every server, or one ("" = all).
func (a *App) Reconnect(ctx context.Context, server string) ([]mcpbridge.ServerStatus, error) {
	if server == "" {
		a.expectRestart()
		res := a.registry.Reconnect(ctx)
		go a.ui.ServersStarting()
		return a.statuses(res), nil
	}
	if !a.knownServer(server) {
		return nil, badRequest("unknown server %q", server)
	}
	a.expectRestart(server)
	if _, err := a.registry.ReconnectServer(ctx, server); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		a.log.Debug("host: reconnect", "server", server, "error", err)
	}
	return a.statuses(a.registry.Servers()), nil
}

// Allowlist returns the allowlist's path, entries (never nil) and the file's problem, if any
// (it then grants nothing).
func (a *App) Allowlist() (path string, entries []string, problem error) {
	entries = a.allow.Entries()
	if entries == nil {
		entries = []string{}
	}
	return a.allow.Path(), entries, a.allow.Err()
}

// SetAllowlist replaces the entries under prefix (an empty list revokes every grant under it) and
// returns the entries now in the file. Every entry is checked first: nothing is written when any
// is bad, even one after a prefix* that would collapse the rest (PROTOCOL.md section 3).
func (a *App) SetAllowlist(prefix string, entries []string) ([]string, error) {
	if err := permissions.ValidPrefix(prefix); err != nil {
		return nil, badRequest("%v", err)
	}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if err := permissions.ValidEntry(e); err != nil {
			return nil, badRequest("%v", err)
		}
		if !strings.HasPrefix(e, prefix) {
			return nil, badRequest("entry %q does not start with prefix %q", e, prefix)
		}
	}
	out, err := a.allow.Replace(prefix, entries)
	if err != nil {
		var ie *permissions.InputError
		if errors.As(err, &ie) {
			return nil, badRequest("%s", ie.Msg)
		}
		return nil, fmt.Errorf("host: allowlist: %w", err)
	}
	if err := a.bindGrants(prefix, out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// bindGrants records the entries under prefix for the current definition of a trusted
// workspace-only server, as the gate does for an "always" answer (permissions.TrustStore.SetGrants):
// without it the gate ignores them for that server. A server that is not trusted gets nothing
// recorded (the entries stay in the file, for another definition once granted there too).
func (a *App) bindGrants(prefix string, entries []string) error {
	server := strings.TrimSuffix(strings.TrimPrefix(prefix, "mcp__"), "__")
	cfg, ok := a.configFor(server)
	if !ok || !cfg.WorkspaceOnly {
		return nil
	}
	fp := cfg.Fingerprint()
	if a.trust.Get(server, fp) != permissions.Trusted {
		a.log.Warn(fmt.Sprintf("host: allowlist: server %s comes only from workspace file %s and is not trusted, so its entries do not count for it; trust it, then set them again",
			safetext.Line(server), safetext.Line(cfg.Source)))
		return nil
	}
	if err := a.trust.SetGrants(server, fp, entries); err != nil {
		return fmt.Errorf("host: allowlist: the entries were written to %s but could not be recorded for the workspace definition of server %s, so they do not count for it: %w", a.allow.Path(), server, err)
	}
	return nil
}

// CallRequest is one direct tool call.
type CallRequest struct {
	Name      string
	Arguments json.RawMessage // a JSON object
	Mode      *permissions.Mode
	// Progress observes the call's progress; nil = the UI's (UI.ToolProgress).
	Progress ToolProgress
	// Source names the front end's command in the events file ("callTool"), and who started a
	// call that becomes a task.
	Source string
	// View is the tool whose MCP Apps view made the call ("" for any other): the question says so.
	View string
	// ViewID is that view's id: its questions are bounded (views.go, beginAsk).
	ViewID string
	// Cancel, when set, cancels ctx, and ctx is this call's alone (a front end's request that
	// runs just this call): the call's own stops (its progress's cancel, CancelTask, a policy
	// that comes to deny its task) cancel ctx itself, with their cause, instead of a context
	// derived for the call (which costs allocations per call). Such a stop leaves the call's
	// result to answer: Stopped tells it from the front end's own cancellation.
	Cancel context.CancelCauseFunc
}

// Stopped reports whether ctx, a CallRequest's with its Cancel, was cancelled by the call's own
// stop (its result says so) rather than by the front end.
func Stopped(ctx context.Context) bool {
	cause := context.Cause(ctx)
	return cause == errProgressCancelled || cause == errTaskCancelled || isPolicyStop(cause)
}

// CallTool runs one tool call through the gate (the person is asked through the UI) and returns
// its result (denials are error results) and the gate's decision.
func (a *App) CallTool(ctx context.Context, r CallRequest) (mcpbridge.Result, permissions.Decision) {
	res, dec, _ := a.CallToolView(ctx, r)
	return res, dec
}

// CallToolView is CallTool that also names the view the result has (views.go; nil: none). A
// call a view made leaves no view of its own.
func (a *App) CallToolView(ctx context.Context, r CallRequest) (mcpbridge.Result, permissions.Decision, *ViewRef) {
	if _, ok := a.registry.Lookup(r.Name); !ok {
		// A call that comes while its server is still starting (an editor that calls as soon as it
		// has started the host, a keybinding pressed at once) waits for the start instead of
		// failing with "unknown tool"; the editor can cancel the request meanwhile. Everything the
		// call is judged by (the mode, the allowlist, the pins) is read after the wait.
		if server, _, ok := mcpbridge.ParseToolName(r.Name); ok {
			if a.started.Load() { // the first configuration may not be applied yet
				select {
				case <-a.firstApplied:
				case <-ctx.Done():
				}
			}
			a.registry.WaitStarted(ctx, server) // ignore error: ctx ended; the call below says so
		}
	}
	mode, err := a.policyMode(r.Mode)
	if err != nil {
		msg := err.Error()
		return mcpbridge.Result{Name: r.Name, IsError: true, Text: msg, Bytes: len(msg), Content: []json.RawMessage{}},
			permissions.Decision{By: permissions.ByPolicy, Reason: "denied: " + msg}, nil
	}
	via := func(ctx context.Context, name string, args json.RawMessage) (mcpbridge.Result, error) {
		obs := r.Progress
		if obs == nil {
			obs = a.ui.ToolProgress()
		}
		return progressTools{a.registry, a}.observed(ctx, r.Cancel, obs, r.Source, name, args)
	}
	if a.events != nil {
		a.events.record("toolCallStart", map[string]any{"name": r.Name, "source": r.Source})
	}
	res, dec := a.sessions.CallToolFrom(ctx, r.Name, r.Arguments, mode, via, r.View, r.ViewID)
	if a.events != nil {
		a.events.record("toolCallEnd", map[string]any{"name": r.Name, "source": r.Source, "isError": res.IsError, "decidedBy": dec.By})
	}
	if res.Name == "" {
		res.Name = r.Name
	}
	if res.Content == nil {
		res.Content = []json.RawMessage{}
	}
	var view *ViewRef
	if dec.Allowed && r.Source != "view" {
		view = a.keepView(ctx, r.Name, r.Arguments, res)
	}
	return res, dec, view
}

// ChatRequest starts a chat turn.
type ChatRequest struct {
	Conversation string // "" = a new conversation
	Prompt       string
	Mode         *permissions.Mode
	Attach       []ResourceRef // resources read and given to the model before Prompt (resources.go)
	Invoke       *PromptCall   // a server prompt run as the turn's request (resources.go)
	viewContext  string        // the views' contexts the turn carries (viewcontext.go), first
}

// ChatStarted is a turn that Chat started: its ids, and the context of views that went to the
// model with it (for the person to see).
type ChatStarted struct {
	Conversation, Turn string
	ViewContext        []ViewContextNote
}

// ChatEvent is one step of a chat turn with the text for people: Label on a decided toolCall
// ("allowed once by you"), Summary on a toolResult that is a denial or a failure (one plain
// sentence; the event's Text stays what the model saw).
type ChatEvent struct {
	session.Event
	Label   string
	Summary string
	View    *ViewRef // toolResult of a tool with a view (views.go)
}

// Chat starts a turn and returns its ids at once; each step reaches UI.ChatEvent (on the turn's
// goroutine, in order). The turn outlives the request: Cancel or Close ends it.
func (a *App) Chat(r ChatRequest) (ChatStarted, error) {
	if strings.TrimSpace(r.Prompt) == "" && r.Invoke == nil {
		return ChatStarted{}, badRequest("prompt is required")
	}
	mode, err := a.policyMode(r.Mode)
	if err != nil {
		return ChatStarted{}, err
	}
	decided := &decidedCalls{m: map[string]permissions.Decision{}}
	views := a.viewContexts(r.Conversation)
	r.viewContext = viewContextPrompt(views)
	prompt, err := a.chatContext(a.baseCtx, r)
	if err != nil {
		return ChatStarted{}, err
	}
	back, taken := a.handBack() // tasks.go: results of the agent's tasks that outlived a restart
	prompt = back + prompt
	conv, turn, err := a.sessions.Start(a.baseCtx, session.StartParams{
		Conversation: r.Conversation, Prompt: prompt, Mode: mode,
	}, func(ev session.Event) {
		a.recordEvent(ev)
		a.ui.ChatEvent(a.explain(decided, ev))
	})
	if err != nil {
		a.handBackUndo(taken)
		return ChatStarted{}, badRequest("%v", err)
	}
	a.viewContextsGiven(views)
	return ChatStarted{Conversation: conv, Turn: turn, ViewContext: viewContextNotes(views)}, nil
}

// decidedCalls is a turn's gate decisions by call id, for the people's text of their results.
type decidedCalls struct {
	mu sync.Mutex // guards m
	m  map[string]permissions.Decision
}

// explain adds the text for people to a chat event.
func (a *App) explain(decided *decidedCalls, ev session.Event) ChatEvent {
	out := ChatEvent{Event: ev}
	switch {
	case ev.ToolCall != nil && ev.ToolCall.Approval != session.ApprovalPending:
		c := ev.ToolCall
		d := permissions.Decision{Allowed: c.Approval == session.ApprovalAllowed, By: c.DecidedBy, Reason: c.Reason}
		decided.mu.Lock()
		decided.m[c.ID] = d
		decided.mu.Unlock()
		out.Label = DecisionLabel(d.Allowed, d.By, d.Reason)
	case ev.Result != nil:
		r := ev.Result
		decided.mu.Lock()
		d, ok := decided.m[r.ID]
		delete(decided.m, r.ID)
		decided.mu.Unlock()
		if !ok {
			d = permissions.Decision{Allowed: true}
		}
		out.Summary = a.Summary(r.Name, mcpbridge.Result{Name: r.Name, IsError: r.IsError, Text: r.Text}, d)
		out.View = a.chatView(ev.Turn, r.ID, ev.Conversation) // views.go
	}
	return out
}

// recordEvent records a chat turn's tool calls in the events file.
func (a *App) recordEvent(ev session.Event) {
	if a.events == nil || (ev.Kind != "toolCall" && ev.Kind != "toolResult") {
		return
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	kind := "toolCallStart"
	if ev.Kind == "toolResult" {
		kind = "toolCallEnd"
	}
	var fields map[string]any
	json.Unmarshal(b, &fields) // ignore error: we just marshalled it
	fields["source"] = "chat"
	a.events.record(kind, fields)
}

// Cancel ends a turn; an unknown or finished turn is not an error (the person's intent holds).
func (a *App) Cancel(turn string) { a.sessions.Cancel(turn) }

// Answer answers the pending question id (from any front end). It fails with *RequestError when
// the question is unknown or resolved, is not of kind k, or the reply does not fit.
func (a *App) Answer(k Kind, id string, r Reply) error {
	q, ok := a.questions.Get(id)
	if !ok || q.Kind != k {
		return badRequest("no pending %s %q (unknown, already resolved or timed out)", k, id)
	}
	if err := q.Answer(r); err != nil {
		if errors.Is(err, ErrNotPending) {
			return badRequest("no pending %s %q (unknown, already resolved or timed out)", k, id)
		}
		return err
	}
	return nil
}

// Pending returns the pending questions of kind k, oldest first.
func (a *App) Pending(k Kind) []*Question { return a.questions.Pending(k) }

// progressTools is the registry as the session sees it: every call reports its progress to an
// observer (a direct call's own, given to session.Manager.CallToolVia, or else the UI's), and the
// observer can stop that call alone.
type progressTools struct {
	*mcpbridge.Registry
	a *App
}

// errProgressCancelled is the cause of a call stopped from its progress.
var errProgressCancelled = errors.New("host: cancelled from the progress")

// Snapshot is the registry's tools as the session sees them: a tool held back by its pin is
// marked Held (not offered to the model; the gate refuses it).
func (t progressTools) Snapshot() *mcpbridge.ToolSet { return t.a.currentPins().snap }

// Call is session.Tools: a chat turn's call, observed by the UI's observer.
func (t progressTools) Call(ctx context.Context, name string, args json.RawMessage) (mcpbridge.Result, error) {
	return t.observed(ctx, nil, t.a.ui.ToolProgress(), "", name, args)
}

// observed runs one call reporting to obs (nil: not observed); source is who started it ("": the
// agent), kept if the call becomes a task. own is ctx's cancel when ctx is the call's alone
// (CallRequest.Cancel), else nil: the call's stops then cancel a context derived for it.
func (t progressTools) observed(ctx context.Context, own context.CancelCauseFunc, obs ToolProgress, source, name string, args json.RawMessage) (mcpbridge.Result, error) {
	if msg, held := t.a.held(name); held { // the tool list changed after the gate looked
		msg = "Tool call " + name + " was not run: " + msg
		return mcpbridge.Result{Name: name, IsError: true, Text: msg, Bytes: len(msg)}, nil
	}
	cancel := own
	if cancel == nil {
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		cancel = stop
	}
	ctx, w := t.a.watchTask(ctx, cancel, obs, source, name, args) // tasks.go: a call that runs as a task
	obs = w.observer()
	if obs != nil {
		obs.Start(name, func() { cancel(errProgressCancelled) })
		ctx = mcpbridge.WithProgress(ctx, obs.Report)
	}
	res, err := t.Registry.Call(ctx, name, args)
	w.end(ctx, res, err)
	if rule := w.deniedAtEnd(); rule != "" {
		// Its task was stopped (or ended) as the policy came to deny the tool (tasks.go): the
		// model gets why, never what the task produced.
		res = policyStoppedResult(name, rule)
		if obs != nil {
			obs.End(res, true)
		}
		return res, nil
	}
	cause := context.Cause(ctx)
	stopped := cause == errProgressCancelled || cause == errTaskCancelled
	if obs != nil {
		obs.End(res, stopped)
	}
	if !stopped {
		t.keepChatView(ctx, name, args, res, err) // views.go
	}
	if stopped && err != nil {
		// Only this call was stopped, from its progress: an error result, not a cancelled turn.
		const msg = "the user cancelled this tool call"
		return mcpbridge.Result{Name: name, IsError: true, Text: msg, Bytes: len(msg)}, nil
	}
	return res, err
}

// keepChatView keeps the view of a chat turn's call (views.go): its result event names it.
func (t progressTools) keepChatView(ctx context.Context, name string, args json.RawMessage, res mcpbridge.Result, err error) {
	if err == nil && session.CallID(ctx) != "" {
		t.a.keepView(ctx, name, args, res)
	}
}
