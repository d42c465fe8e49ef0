package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

func newManager(t *testing.T, opts session.Options, script string) *session.Manager {
	t.Helper()
	if opts.Gate == nil {
		opts.Gate = sessiontest.AllowAll()
	}
	if opts.Tools == nil {
		opts.Tools = sessiontest.NewTools()
	}
	m := session.NewManager(opts)
	t.Cleanup(m.Close)
	if script != "" {
		m.UseProvider(sessiontest.Script(t, script))
	}
	return m
}

func runTurn(t *testing.T, m *session.Manager, p session.StartParams) (string, []session.Event) {
	t.Helper()
	rec := newRecorder()
	conv, _, err := m.Start(context.Background(), p, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	return conv, rec.wait(t)
}

func lastEvents(evs []session.Event) (errEv *session.Event, done session.Event) {
	for i := range evs {
		if evs[i].Kind == session.KindError {
			errEv = &evs[i]
		}
	}
	return errEv, evs[len(evs)-1]
}

func TestMissingAPIKeyIsAnErrorEvent(t *testing.T) {
	for _, typ := range []string{"", "openai", "anthropic"} {
		m := session.NewManager(session.Options{Provider: session.ProviderConfig{Type: typ}, Getenv: func(string) string { return "" }})
		t.Cleanup(m.Close)
		_, evs := runTurn(t, m, session.StartParams{Prompt: "hi"})
		errEv, done := lastEvents(evs)
		want := "OPENAI_API_KEY"
		if typ == "anthropic" {
			want = "ANTHROPIC_API_KEY"
		}
		if errEv == nil || !strings.Contains(errEv.Error, "API key missing") || !strings.Contains(errEv.Error, want) {
			t.Errorf("%q: events %+v", typ, evs)
		}
		if done.Kind != session.KindDone || done.StopReason != session.StopError {
			t.Errorf("%q: last event %+v", typ, done)
		}
	}
}

func TestBadProviderConfigIsAnErrorEvent(t *testing.T) {
	m := session.NewManager(session.Options{Provider: session.ProviderConfig{Type: "openai-compatible"}})
	t.Cleanup(m.Close)
	_, evs := runTurn(t, m, session.StartParams{Prompt: "hi"})
	if errEv, _ := lastEvents(evs); errEv == nil || !strings.Contains(errEv.Error, "baseURL") {
		t.Errorf("events %+v", evs)
	}
}

func TestBusyConversation(t *testing.T) {
	started := make(chan struct{})
	tools := sessiontest.NewTools().Add("fs", "slow", sessiontest.Block(started))
	m := newManager(t, session.Options{Tools: tools}, "reply tool_call id=c1 name=mcp__fs__slow args={}\n\nreply text \"ok\"\n\nreply text \"again\"\n")
	rec := newRecorder()
	conv, turn, err := m.Start(context.Background(), session.StartParams{Prompt: "one"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if _, _, err := m.Start(context.Background(), session.StartParams{Conversation: conv, Prompt: "two"}, nil); !errors.Is(err, session.ErrBusy) {
		t.Errorf("second Start on a busy conversation: err = %v, want ErrBusy", err)
	}
	// Another conversation runs meanwhile.
	other, evs := runTurn(t, m, session.StartParams{Prompt: "other"})
	if other == conv || evs[len(evs)-1].StopReason != session.StopEndTurn {
		t.Errorf("other conversation %s: %+v", other, evs)
	}
	if !m.Cancel(turn) {
		t.Fatal("Cancel = false")
	}
	evs = rec.wait(t)
	if done := evs[len(evs)-1]; done.StopReason != session.StopCancelled {
		t.Errorf("done = %+v", done)
	}
	if m.Cancel(turn) {
		t.Error("Cancel of a finished turn = true")
	}
	// done is emitted after the conversation is free: the next Start works at once.
	_, evs = runTurn(t, m, session.StartParams{Conversation: conv, Prompt: "again"})
	if evs[len(evs)-1].StopReason != session.StopEndTurn {
		t.Errorf("events %+v", evs)
	}
}

func TestCancelDuringModelCall(t *testing.T) {
	m := newManager(t, session.Options{}, "reply text \"Hel\"\nreply hang\n")
	rec := newRecorder()
	first := make(chan struct{})
	var once sync.Once
	conv, turn, err := m.Start(context.Background(), session.StartParams{Prompt: "one"}, func(e session.Event) {
		rec.emit(e)
		once.Do(func() { close(first) })
	})
	if err != nil {
		t.Fatal(err)
	}
	<-first // the model is streaming
	m.Cancel(turn)
	evs := rec.wait(t)
	if done := evs[len(evs)-1]; done.StopReason != session.StopCancelled {
		t.Errorf("events %+v", evs)
	}
	hist, _ := m.History(conv)
	if len(hist) != 2 || hist[1].Text != "Hel" {
		t.Errorf("history %+v: want the prompt and the partial answer", hist)
	}
}

func TestStartRejectsEmptyPromptAndAfterClose(t *testing.T) {
	m := newManager(t, session.Options{}, "")
	if _, _, err := m.Start(context.Background(), session.StartParams{Prompt: "  "}, nil); err == nil {
		t.Error("empty prompt accepted")
	}
	m.Close()
	if _, _, err := m.Start(context.Background(), session.StartParams{Prompt: "x"}, nil); !errors.Is(err, session.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func TestCloseCancelsRunningTurns(t *testing.T) {
	started := make(chan struct{})
	tools := sessiontest.NewTools().Add("fs", "slow", sessiontest.Block(started))
	m := newManager(t, session.Options{Tools: tools}, "reply tool_call id=c1 name=mcp__fs__slow args={}\n")
	rec := newRecorder()
	if _, _, err := m.Start(context.Background(), session.StartParams{Prompt: "x"}, rec.emit); err != nil {
		t.Fatal(err)
	}
	<-started
	m.Close() // returns only when the turn ended
	evs := rec.wait(t)
	if evs[len(evs)-1].StopReason != session.StopCancelled {
		t.Errorf("events %+v", evs)
	}
}

func TestToolCountWarningAndCeiling(t *testing.T) {
	tools := sessiontest.NewTools()
	for i := range 16 { // 16 + 5 built-ins = 21
		tools.Add("many", fmt.Sprintf("t%02d", i), sessiontest.Text("x"))
	}
	var mu sync.Mutex
	var warnings []string
	// Tool search off: every tool is sent (with search on, 129 tools are no error: see toolsearch_test.go).
	m := newManager(t, session.Options{Tools: tools, ToolSearch: session.ToolSearchOptions{Threshold: -1},
		Warn: func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }},
		"reply text \"a\"\n\nreply text \"b\"\n")
	runTurn(t, m, session.StartParams{Prompt: "x"})
	runTurn(t, m, session.StartParams{Prompt: "y"})
	if len(warnings) != 1 || !strings.Contains(warnings[0], "21 tools") || !strings.Contains(warnings[0], "enabledTools") {
		t.Errorf("warnings = %q", warnings)
	}
	for i := range 108 { // 129
		tools.Add("more", fmt.Sprintf("t%03d", i), sessiontest.Text("x"))
	}
	_, evs := runTurn(t, m, session.StartParams{Prompt: "z"})
	if errEv, done := lastEvents(evs); errEv == nil || !strings.Contains(errEv.Error, "129 tools") || done.StopReason != session.StopError {
		t.Errorf("events %+v", evs)
	}
}

func TestCallTool(t *testing.T) {
	tools := sessiontest.NewTools().Add("fs", "echo", sessiontest.Echo).Add("fs", "write", sessiontest.Echo)
	gate := sessiontest.DenyTools("mcp__fs__write")
	m := newManager(t, session.Options{Tools: tools, Gate: gate}, "")
	res, d := m.CallTool(context.Background(), "mcp__fs__echo", json.RawMessage(`{"a":1}`), permissions.SingleConfirm)
	if res.IsError || res.Text != `{"a":1}` || !d.Allowed {
		t.Errorf("echo: %+v %+v", res, d)
	}
	res, d = m.CallTool(context.Background(), "mcp__fs__write", nil, permissions.SingleConfirm)
	if !res.IsError || d.Allowed || !strings.Contains(res.Text, "the user denied it") {
		t.Errorf("denied: %+v %+v", res, d)
	}
	res, d = m.CallTool(context.Background(), "mcp__x__y", nil, permissions.AlwaysAllow)
	if !res.IsError || res.Text != `{"error":"Unknown tool: mcp__x__y"}` || d.By != session.ByUnknown {
		t.Errorf("unknown: %+v %+v", res, d)
	}
	reqs := gate.Requests()
	if len(reqs) != 2 || reqs[0].Server != "fs" || reqs[0].Tool != "mcp__fs__echo" || reqs[0].Turn != "" || reqs[0].ReadOnlyBuiltin {
		t.Errorf("gate requests = %+v", reqs)
	}
	// Built-ins: readers are ReadOnlyBuiltin, edit_file is not; read_tool_result needs a conversation.
	m.CallTool(context.Background(), "read_file", json.RawMessage(`{"path":"x"}`), permissions.SingleConfirm)
	m.CallTool(context.Background(), "edit_file", json.RawMessage(`{"path":"x","content":""}`), permissions.SingleConfirm)
	reqs = gate.Requests()
	if r := reqs[len(reqs)-2]; !r.ReadOnlyBuiltin || r.Server != "" {
		t.Errorf("read_file request %+v", r)
	}
	if r := reqs[len(reqs)-1]; r.ReadOnlyBuiltin {
		t.Errorf("edit_file request %+v", r)
	}
	if res, _ := m.CallTool(context.Background(), "read_tool_result", json.RawMessage(`{"id":"c1"}`), permissions.AlwaysAllow); !res.IsError {
		t.Errorf("read_tool_result outside a conversation: %+v", res)
	}
}

func TestToolList(t *testing.T) {
	m := newManager(t, session.Options{Tools: sessiontest.NewTools().Add("fs", "list", sessiontest.Echo)}, "")
	var names []string
	for _, tl := range m.ToolList() {
		names = append(names, tl.Name)
		if !json.Valid(tl.InputSchema) {
			t.Errorf("%s: bad schema", tl.Name)
		}
	}
	if got := strings.Join(names, " "); got != "read_file list_files search_files edit_file read_tool_result mcp__fs__list" {
		t.Errorf("ToolList = %s", got)
	}
}

func TestInstructionCaps(t *testing.T) {
	tools := sessiontest.NewTools().
		SetInstructions("a", strings.Repeat("a", 3000)).
		SetInstructions("b", strings.Repeat("b", 2048)).
		SetInstructions("c", strings.Repeat("c", 2048)).
		SetInstructions("d", strings.Repeat("d", 2048)).
		SetInstructions("e", "never seen")
	var logs strings.Builder
	var mu sync.Mutex
	m := newManager(t, session.Options{Tools: tools, Logger: newLogger(&logs, &mu)}, "")
	p := &capture{}
	m.UseProvider(p)
	runTurn(t, m, session.StartParams{Prompt: "x"})
	sys := p.reqs[0].System
	if n := strings.Count(sys, "a"); n < 2048 || n > 2048+200 {
		t.Errorf("server a: %d bytes of its text kept", n)
	}
	if strings.Contains(sys, "never seen") || strings.Contains(sys, `server="e"`) {
		t.Error("server e's instructions are past the 8 KiB total")
	}
	if !strings.Contains(sys, "third-party") {
		t.Error("instructions not marked as third-party")
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "a: 2048 of 3000 bytes kept") || !strings.Contains(logs.String(), "e: dropped (10 bytes)") {
		t.Errorf("log = %s", logs.String())
	}
}

func TestOpenAICompatibleEndToEnd(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		if n == 1 {
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"mcp__fs__list","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"two files"},"finish_reason":"stop"}]}`+"\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n")
	}))
	defer ts.Close()
	tools := sessiontest.NewTools().Add("fs", "list", sessiontest.Text("a.go b.go"))
	m := newManager(t, session.Options{Tools: tools, Provider: session.ProviderConfig{Type: "openai-compatible", BaseURL: ts.URL, Model: "llama"}}, "")
	_, evs := runTurn(t, m, session.StartParams{Prompt: "list", Mode: permissions.AlwaysAllow})
	done := evs[len(evs)-1]
	if done.StopReason != session.StopEndTurn || done.Usage.InputTokens != 5 {
		t.Errorf("done = %+v", done)
	}
	if !strings.Contains(bodies[1], `{"role":"tool","content":"a.go b.go","tool_call_id":"call_1"}`) {
		t.Errorf("second request = %s", bodies[1])
	}
}

func TestScriptProviderFromConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "llm.script")
	os.WriteFile(path, []byte("expect last_user ~ \"hi\"\nreply text \"hello\"\n"), 0o644)
	m := newManager(t, session.Options{Provider: session.ProviderConfig{Type: "script", Script: path}}, "")
	_, evs := runTurn(t, m, session.StartParams{Prompt: "hi"})
	if evs[0].Text != "hello" || evs[len(evs)-1].StopReason != session.StopEndTurn {
		t.Errorf("events %+v", evs)
	}
	m.SetProvider(session.ProviderConfig{Type: "script", Script: filepath.Join(t.TempDir(), "missing")})
	_, evs = runTurn(t, m, session.StartParams{Prompt: "hi"})
	if errEv, _ := lastEvents(evs); errEv == nil || !strings.Contains(errEv.Error, "missing") {
		t.Errorf("events %+v", evs)
	}
}

// capture is a provider that records requests and answers "ok".
type capture struct {
	mu   sync.Mutex
	reqs []session.Request
}

func (c *capture) Stream(ctx context.Context, req session.Request) iter.Seq2[session.Chunk, error] {
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	c.mu.Unlock()
	return func(yield func(session.Chunk, error) bool) {
		yield(session.Chunk{Kind: 0, Text: "ok"}, nil)
	}
}

func TestLeastRecentlyUsedConversationIsForgotten(t *testing.T) {
	m := newManager(t, session.Options{MaxConversations: 2}, `
expect last_user ~ "first"
reply text "one"
expect last_user ~ "second"
reply text "two"
expect last_user ~ "a again"
reply text "again"
expect last_user ~ "third"
reply text "three"
`)
	a, _ := runTurn(t, m, session.StartParams{Prompt: "first"})
	b, _ := runTurn(t, m, session.StartParams{Prompt: "second"})
	runTurn(t, m, session.StartParams{Conversation: a, Prompt: "a again"}) // a is now newer than b
	c, _ := runTurn(t, m, session.StartParams{Prompt: "third"})            // over the bound: b goes
	if _, ok := m.History(b); ok {
		t.Errorf("conversation %s (least recently used) is still kept", b)
	}
	for _, id := range []string{a, c} {
		if h, ok := m.History(id); !ok || len(h) == 0 {
			t.Errorf("conversation %s was forgotten", id)
		}
	}
	if h, _ := m.History(a); len(h) != 4 {
		t.Errorf("conversation %s has %d messages, want 4 (two turns): %+v", a, len(h), h)
	}
}

// TestEndConversation: End cancels the conversation's running turn and forgets its history;
// Busy and Has say so; the same id starts afresh.
func TestEndConversation(t *testing.T) {
	started := make(chan struct{})
	tools := sessiontest.NewTools().Add("fs", "slow", sessiontest.Block(started))
	m := newManager(t, session.Options{Tools: tools}, "reply tool_call id=c1 name=mcp__fs__slow args={}\n\nreply text \"afresh\"\n")
	rec := newRecorder()
	conv, _, err := m.Start(context.Background(), session.StartParams{Prompt: "one"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if !m.Busy(conv) || !m.Has(conv) {
		t.Fatalf("running: Busy %v Has %v", m.Busy(conv), m.Has(conv))
	}
	if !m.End(conv) {
		t.Fatal("End of a known conversation = false")
	}
	if evs := rec.wait(t); evs[len(evs)-1].StopReason != session.StopCancelled {
		t.Errorf("the ended conversation's turn: %+v", evs[len(evs)-1])
	}
	if m.Busy(conv) || m.Has(conv) || m.End(conv) {
		t.Errorf("ended: Busy %v Has %v", m.Busy(conv), m.Has(conv))
	}
	// A turn meant for the ended conversation (a view's message) does not start it afresh.
	if _, _, err := m.Start(context.Background(), session.StartParams{Conversation: conv, Prompt: "from a view", Existing: true}, nil); !errors.Is(err, session.ErrNoConversation) {
		t.Errorf("Start Existing on an ended conversation: %v, want ErrNoConversation", err)
	}
	if m.Has(conv) {
		t.Errorf("Start Existing made the ended conversation again")
	}
	runTurn(t, m, session.StartParams{Conversation: conv, Prompt: "two"})
	if hist, _ := m.History(conv); len(hist) != 2 || hist[0].Text != "two" {
		t.Errorf("history after End: %+v, want only the new turn", hist)
	}
}

// TestForgottenConversation: a conversation forgotten as least recently used is reported.
func TestForgottenConversation(t *testing.T) {
	var mu sync.Mutex
	var forgotten []string
	m := newManager(t, session.Options{MaxConversations: 1, Forgotten: func(c string) {
		mu.Lock()
		forgotten = append(forgotten, c)
		mu.Unlock()
	}}, "reply text \"a\"\n\nreply text \"b\"\n")
	first, _ := runTurn(t, m, session.StartParams{Prompt: "one"})
	runTurn(t, m, session.StartParams{Prompt: "two"})
	mu.Lock()
	defer mu.Unlock()
	if len(forgotten) != 1 || forgotten[0] != first {
		t.Errorf("forgotten %v, want [%s]", forgotten, first)
	}
}
