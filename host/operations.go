package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
)

// The operations both front ends need. Errors a front end caused are *RequestError.

// Tool is one tool as a front end lists it: descriptions escaped, with whether the allowlist
// grants it.
type Tool struct {
	mcpbridge.Tool
	Allowlisted bool
}

// Tools lists the tools of every server, or of one ("" = all).
func (a *App) Tools(server string) ([]Tool, error) {
	if server != "" && !a.knownServer(server) {
		return nil, badRequest("unknown server %q", server)
	}
	out := []Tool{}
	for _, t := range a.registry.Tools() {
		if server != "" && t.Server != server {
			continue
		}
		_, allowed := a.allow.Match(t.Name)
		if len(t.InputSchema) == 0 {
			t.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		t.Description = safetext.Block(t.Description)
		out = append(out, Tool{Tool: t, Allowlisted: allowed})
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
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// CallRequest is one direct tool call.
type CallRequest struct {
	Name      string
	Arguments json.RawMessage // a JSON object
	Mode      *permissions.Mode
	// Progress observes the call's progress; nil = the UI's (UI.ToolProgress).
	Progress ToolProgress
	// Source names the front end's command in the events file ("callTool").
	Source string
}

// CallTool runs one tool call through the gate (the person is asked through the UI) and returns
// its result (denials are error results) and the gate's decision.
func (a *App) CallTool(ctx context.Context, r CallRequest) (mcpbridge.Result, permissions.Decision) {
	mode := a.Mode()
	if r.Mode != nil {
		mode = *r.Mode
	}
	if r.Progress != nil {
		ctx = context.WithValue(ctx, observerKey{}, r.Progress)
	}
	a.events.record("toolCallStart", map[string]any{"name": r.Name, "source": r.Source})
	res, dec := a.sessions.CallTool(ctx, r.Name, r.Arguments, mode)
	a.events.record("toolCallEnd", map[string]any{"name": r.Name, "source": r.Source, "isError": res.IsError, "decidedBy": dec.By})
	if res.Name == "" {
		res.Name = r.Name
	}
	if res.Content == nil {
		res.Content = []json.RawMessage{}
	}
	return res, dec
}

// ChatRequest starts a chat turn.
type ChatRequest struct {
	Conversation string // "" = a new conversation
	Prompt       string
	Mode         *permissions.Mode
	Attach       []ResourceRef // resources read and given to the model before Prompt (resources.go)
	Invoke       *PromptCall   // a server prompt run as the turn's request (resources.go)
}

// Chat starts a turn and returns its ids at once; each step reaches emit (on the turn's
// goroutine). The turn outlives ctx: Cancel or Close ends it.
func (a *App) Chat(r ChatRequest, emit func(session.Event)) (conversation, turn string, err error) {
	if strings.TrimSpace(r.Prompt) == "" && r.Invoke == nil {
		return "", "", badRequest("prompt is required")
	}
	mode := a.Mode()
	if r.Mode != nil {
		mode = *r.Mode
	}
	prompt, err := a.chatContext(a.baseCtx, r)
	if err != nil {
		return "", "", err
	}
	conv, turn, err := a.sessions.Start(a.baseCtx, session.StartParams{
		Conversation: r.Conversation, Prompt: prompt, Mode: mode,
	}, func(ev session.Event) {
		a.recordEvent(ev)
		emit(ev)
	})
	if err != nil {
		return "", "", badRequest("%v", err)
	}
	return conv, turn, nil
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

// observerKey carries CallRequest.Progress across session.Manager.CallTool to progressTools: the
// session's Tools interface has no per-call options. The value is the front end's observer
// object, given explicitly to CallTool; nothing of the front end's (no token, no connection)
// travels in ctx.
type observerKey struct{}

// progressTools is the registry as the session sees it: every call reports its progress to an
// observer (the call's, or the UI's), and the observer can stop that call alone.
type progressTools struct {
	*mcpbridge.Registry
	a *App
}

// errProgressCancelled is the cause of a call stopped from its progress.
var errProgressCancelled = errors.New("host: cancelled from the progress")

func (t progressTools) Call(ctx context.Context, name string, args json.RawMessage) (mcpbridge.Result, error) {
	obs, _ := ctx.Value(observerKey{}).(ToolProgress)
	if obs == nil {
		obs = t.a.ui.ToolProgress()
	}
	if obs == nil {
		return t.Registry.Call(ctx, name, args)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	obs.Start(name, func() { cancel(errProgressCancelled) })
	res, err := t.Registry.Call(mcpbridge.WithProgress(ctx, obs.Report), name, args)
	stopped := context.Cause(ctx) == errProgressCancelled
	obs.End(res, stopped)
	if stopped && err != nil {
		// Only this call was stopped, from its progress: an error result, not a cancelled turn.
		const msg = "the user cancelled this tool call"
		return mcpbridge.Result{Name: name, IsError: true, Text: msg, Bytes: len(msg)}, nil
	}
	return res, err
}
