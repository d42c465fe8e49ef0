package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session/llm"
)

// invariantPanics makes a broken history invariant panic (tests set it); in production it is
// logged and reported as an error event.
var invariantPanics = false

// turnRun is one running turn.
type turnRun struct {
	m    *Manager
	conv *convo
	id   string
	mode permissions.Mode
	ctx  context.Context

	// emitMu serialises emitFn: events of parallel tool calls never overlap.
	emitMu sync.Mutex
	emitFn func(Event)

	usage Usage
	price *Price      // of the provider's model, nil when unknown
	guard repeatGuard // calls denied or failing in this turn
}

func (t *turnRun) emit(e Event) {
	e.Turn, e.Conversation = t.id, t.conv.id
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	t.emitFn(e)
}

func (t *turnRun) done(stop string) Event {
	u := t.usage
	t.conv.usage = t.conv.usage.Add(u)
	cu := t.conv.usage
	return Event{Kind: KindDone, StopReason: stop, Usage: &u, ConversationUsage: &cu}
}

// fail emits an error event and returns the done event that follows it.
func (t *turnRun) fail(err error) Event {
	t.m.log.Warn("session: turn failed", "turn", t.id, "conversation", t.conv.id, "err", err)
	t.emit(Event{Kind: KindError, Error: err.Error()})
	return t.done(StopError)
}

// run runs the turn to its end and returns the final done event (emitted by the caller).
func (t *turnRun) run(prompt string) Event {
	m := t.m
	provider, perr := m.currentProvider()
	t.price = m.currentPrice()
	if perr == nil && provider == nil {
		perr = errors.New("session: no model provider is configured")
	}
	if perr != nil {
		return t.fail(perr)
	}
	t.conv.hist.AppendUser(prompt)
	for step := 0; ; step++ {
		final := step >= m.opts.MaxSteps
		ts := m.snapshot()
		tools := m.offered(ts, t.conv)
		if n := len(tools); n > MaxTools {
			return t.fail(fmt.Errorf("session: %d tools would be sent to the model, more than the limit of %d per request: "+
				"disable some MCP servers or trim their tools with enabledTools/disabledTools in the MCP config", n, MaxTools))
		}
		system := m.systemPrompt(final)
		if m.searchOn(ts) {
			system = m.systemPromptSearch(ts, final)
		} else {
			m.warnToolCount(len(tools))
		}
		req := Request{
			System:      system,
			Messages:    t.conv.hist.Messages(),
			Tools:       tools,
			NoToolCalls: final,
		}
		text, calls, reasoning, stop, err := t.callModel(provider, req)
		if err != nil {
			t.conv.hist.AppendAssistant(text) // keep what was said
			if t.ctx.Err() != nil {
				return t.done(StopCancelled)
			}
			return t.fail(err)
		}
		if len(calls) == 0 {
			t.conv.hist.AppendAssistant(text, reasoning...)
			if stop == "" || stop == llm.StopToolUse {
				stop = StopEndTurn
			}
			return t.done(stop)
		}
		calls = fixIDs(calls, step)
		assistant := Message{Role: llm.RoleAssistant, Text: text, ToolCalls: calls, Reasoning: reasoning}
		var results []Message
		if final {
			// Calls in the answer to the last call are not run, but they get their results.
			results = make([]Message, len(calls))
			for i, c := range calls {
				results[i] = Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
					Text: errorJSON("not run: the tool-call limit of this turn was reached")}
			}
		} else {
			results = t.runCalls(ts, calls)
		}
		if err := t.conv.hist.AppendToolRound(assistant, results); err != nil {
			if invariantPanics {
				panic(err)
			}
			return t.fail(fmt.Errorf("session: internal error: %w", err))
		}
		if t.ctx.Err() != nil {
			return t.done(StopCancelled)
		}
		if final {
			return t.done(StopMaxSteps)
		}
	}
}

// callModel streams one model call, emitting text deltas.
// Reasoning items (opaque, provider-specific) are returned to be kept with the assistant message.
func (t *turnRun) callModel(p Provider, req Request) (text string, calls []ToolCall, reasoning []json.RawMessage, stop string, err error) {
	var buf []byte
	var usage Usage
	for c, err := range p.Stream(t.ctx, req) {
		if err != nil {
			t.usage = t.usage.Add(usage)
			if t.ctx.Err() != nil {
				err = t.ctx.Err()
			}
			return string(buf), nil, nil, "", err
		}
		switch c.Kind {
		case llm.ChunkText:
			if c.Text != "" {
				buf = append(buf, c.Text...)
				t.emit(Event{Kind: KindText, Text: c.Text})
			}
		case llm.ChunkToolCall:
			calls = append(calls, c.ToolCall)
		case llm.ChunkUsage:
			usage = mergeUsage(usage, c.Usage)
			if t.price != nil {
				usage.Cost = t.price.Cost(usage)
			}
		case llm.ChunkReasoning:
			if len(c.Raw) > 0 {
				reasoning = append(reasoning, c.Raw)
			}
		case llm.ChunkStop:
			stop = c.StopReason
		}
	}
	t.usage = t.usage.Add(usage)
	if err := t.ctx.Err(); err != nil {
		return string(buf), nil, nil, "", err
	}
	return string(buf), calls, reasoning, stop, nil
}

// mergeUsage applies the non-zero fields of n over u (usage may come more than once per call).
func mergeUsage(u, n Usage) Usage {
	if n.InputTokens != 0 {
		u.InputTokens = n.InputTokens
	}
	if n.CachedInputTokens != 0 {
		u.CachedInputTokens = n.CachedInputTokens
	}
	if n.CacheWriteTokens != 0 {
		u.CacheWriteTokens = n.CacheWriteTokens
	}
	if n.OutputTokens != 0 {
		u.OutputTokens = n.OutputTokens
	}
	return u
}

// fixIDs gives every call a unique non-empty id (some OpenAI-compatible servers send none).
func fixIDs(calls []ToolCall, step int) []ToolCall {
	seen := make(map[string]bool, len(calls))
	for i := range calls {
		if calls[i].ID == "" || seen[calls[i].ID] {
			calls[i].ID = "call_" + strconv.Itoa(step+1) + "_" + strconv.Itoa(i+1)
		}
		seen[calls[i].ID] = true
	}
	return calls
}

// eventArgs returns args as valid JSON for an event (invalid JSON becomes a JSON string).
func eventArgs(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(args) {
		return args
	}
	b, _ := json.Marshal(string(args))
	return b
}

// runCalls runs the calls in parallel (gate, then tool) and returns one result message per call,
// in call order. Calls with the same name and arguments run one after the other, so the second
// sees what happened to the first (a denial is not asked again).
func (t *turnRun) runCalls(ts *toolSet, calls []ToolCall) []Message {
	for _, c := range calls {
		t.emit(Event{Kind: KindToolCall, ToolCall: &ToolCallEvent{ID: c.ID, Name: c.Name, Arguments: eventArgs(c.Args), Approval: ApprovalPending}})
	}
	keys := groupKeys(calls)
	results := make([]Message, len(calls))
	load := make([][]string, len(calls))
	var wg sync.WaitGroup
	started := make(map[string]bool, len(calls))
	for i := range calls {
		if keys[i] != "" && started[keys[i]] {
			continue // runs in the goroutine of its first call
		}
		if keys[i] != "" {
			started[keys[i]] = true
		}
		wg.Go(func() {
			for j := i; j < len(calls); j++ {
				if j == i || (keys[i] != "" && keys[j] == keys[i]) {
					results[j], load[j] = t.runCall(ts, calls[j])
				}
			}
		})
	}
	wg.Wait()
	for _, names := range load { // in call order, so the next tool list does not depend on timing
		t.conv.load(names...) // used or found: a call to a tool not loaded yet loads it
	}
	return results
}

// groupKeys returns, for calls of one response, a key per call that is equal for calls that must
// run one after the other (same name, same arguments), "" for calls that share their name with no
// other call. Calls of one name with byte-identical arguments share the raw bytes as key; only
// when their arguments differ in bytes are the arguments put in canonical form (callKey), so the
// common cases cost no JSON decoding.
func groupKeys(calls []ToolCall) []string {
	keys := make([]string, len(calls))
	if len(calls) < 2 {
		return keys
	}
	for i, c := range calls {
		if keys[i] != "" {
			continue
		}
		shared, identical := false, true
		for j := i + 1; j < len(calls); j++ {
			if calls[j].Name == c.Name {
				shared = true
				identical = identical && bytes.Equal(calls[j].Args, c.Args)
			}
		}
		if !shared {
			continue
		}
		for j := i; j < len(calls); j++ {
			if calls[j].Name != c.Name {
				continue
			}
			if identical {
				keys[j] = "raw\x00" + c.Name
			} else {
				keys[j] = callKey(c.Name, calls[j].Args)
			}
		}
	}
	return keys
}

// runCall runs one call. load names the tools that join the conversation's loaded set: an MCP
// tool the gate let run, the tools search_tools found.
func (t *turnRun) runCall(ts *toolSet, c ToolCall) (msg Message, load []string) {
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	key := "" // the guard's key, computed only once the guard has something to compare
	if t.guard.active() {
		key = callKey(c.Name, args)
	}
	if key != "" {
		if text, reason := t.guard.refuse(key, c.Name); text != "" {
			t.emit(Event{Kind: KindToolCall, ToolCall: &ToolCallEvent{ID: c.ID, Name: c.Name, Arguments: eventArgs(c.Args),
				Approval: ApprovalDenied, DecidedBy: ByRepeat, Reason: reason}})
			t.emit(Event{Kind: KindToolResult, Result: &ToolResultEvent{ID: c.ID, Name: c.Name, IsError: true,
				Bytes: len(text), Text: cutUTF8(text, PreviewBytes)}})
			return Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Text: text, IsError: true}, nil
		}
	}
	res, d := t.m.callOne(withCallID(t.ctx, t.id, c.ID), ts, t.conv, t.id, t.mode, c.Name, args, func(d permissions.Decision) {
		ap := ApprovalDenied
		if d.Allowed {
			ap = ApprovalAllowed
		}
		t.emit(Event{Kind: KindToolCall, ToolCall: &ToolCallEvent{ID: c.ID, Name: c.Name, Arguments: eventArgs(c.Args),
			Approval: ap, DecidedBy: d.By, Reason: d.Reason}})
	}, nil, permissions.Request{})
	if res.IsError && t.ctx.Err() == nil {
		if key == "" {
			key = callKey(c.Name, args)
		}
		t.guard.record(key, res.IsError, d)
	}
	text := res.Text
	if text == "" && res.IsError {
		text = errorJSON("the tool failed without a message")
	}
	var images []llm.Image
	if _, isMCP := ts.mcp.Lookup(c.Name); (isMCP || c.Name == ToolReadResource) && d.Allowed {
		var notes string
		images, notes = resultImages(res.Content)
		text += notes
	}
	shown, cut := text, false
	if c.Name != ToolReadToolResult { // its pages are already sized to the budget
		shown, cut = contextCut(c.ID, text, t.m.resultBudget())
		if cut {
			t.conv.keep(c.ID, text)
		}
	}
	t.emit(Event{Kind: KindToolResult, Result: &ToolResultEvent{ID: c.ID, Name: c.Name, IsError: res.IsError,
		Truncated: cut || res.Truncated, Bytes: max(res.Bytes, len(text)), Text: cutUTF8(text, PreviewBytes)}})
	if _, isMCP := ts.mcp.Lookup(c.Name); isMCP && d.Allowed {
		load = []string{c.Name}
	} else if c.Name == ToolSearchTools && d.Allowed && !res.IsError {
		load = foundTools(text)
	}
	return Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Text: shown, IsError: res.IsError, Images: images}, load
}

// systemPromptSearch is the system prompt with the tool-search note (same at every step).
func (m *Manager) systemPromptSearch(ts *toolSet, final bool) string {
	return m.systemPromptWith(searchNote(len(ts.list)-ts.nbuiltin, len(m.searchBase(ts))), final)
}

// systemPrompt builds the system prompt: the base prompt and the servers' instructions.
func (m *Manager) systemPrompt(final bool) string { return m.systemPromptWith("", final) }

func (m *Manager) systemPromptWith(note string, final bool) string {
	s := baseSystemPrompt + note
	if m.opts.Tools != nil {
		sec, cut := instructionsSection(m.opts.Tools.Instructions())
		s += sec
		if cut != "" {
			m.noteMu.Lock()
			changed := cut != m.lastCut
			m.lastCut = cut
			m.noteMu.Unlock()
			if changed {
				m.log.Warn("session: server instructions cut", "detail", cut)
			}
		}
	}
	if final {
		s += finalCallNote
	}
	return s
}

// warnToolCount gives its advice once per Manager, the first time more than WarnTools tools are
// sent (with tool search off; above its threshold the model gets fewer).
func (m *Manager) warnToolCount(n int) {
	if n <= WarnTools {
		return
	}
	m.noteMu.Lock()
	first := m.warnedCount == 0
	m.warnedCount = n
	m.noteMu.Unlock()
	if !first {
		return
	}
	msg := fmt.Sprintf("Switchboard sends %d tools to the model; more than %d tools make it pick the wrong one more often. "+
		"Trim them per server with \"enabledTools\" or \"disabledTools\" in the MCP config, or disable servers you do not need.", n, WarnTools)
	m.log.Warn("session: " + msg)
	if m.opts.Warn != nil {
		m.opts.Warn(msg)
	}
}
