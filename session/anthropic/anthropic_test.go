package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-dev/switchboard/session/anthropic"
	"github.com/switchboard-dev/switchboard/session/llm"
)

type reply struct {
	status  int
	file    string
	headers map[string]string
}

type server struct {
	t       *testing.T
	mu      sync.Mutex
	replies []reply
	bodies  []map[string]any
	headers []http.Header
}

func newServer(t *testing.T, replies ...reply) (*server, *httptest.Server) {
	s := &server{t: t, replies: replies}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/messages" {
		http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		s.t.Errorf("request body is not JSON: %v", err)
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.headers = append(s.headers, r.Header.Clone())
	rp := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()
	data, err := os.ReadFile("testdata/" + rp.file)
	if err != nil {
		s.t.Error(err)
	}
	for k, v := range rp.headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(max(rp.status, 200))
	for len(data) > 0 {
		n := min(41, len(data))
		w.Write(data[:n])
		w.(http.Flusher).Flush()
		data = data[n:]
	}
}

func collect(t *testing.T, p *anthropic.Provider, req llm.Request) ([]llm.Chunk, error) {
	t.Helper()
	var out []llm.Chunk
	for c, err := range p.Stream(context.Background(), req) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

var req = llm.Request{
	System: "be brief",
	Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "list"},
		{Role: llm.RoleAssistant, Text: "ok", ToolCalls: []llm.ToolCall{{ID: "t0", Name: "mcp__fs__list", Args: json.RawMessage(`{"path":"."}`)}}},
		{Role: llm.RoleTool, ToolCallID: "t0", Text: "denied", IsError: true},
		{Role: llm.RoleUser, Text: "why?"},
	},
	Tools: []llm.ToolSpec{{Name: "mcp__fs__list", Description: "list", InputSchema: json.RawMessage(`{"type":"object"}`)}},
}

func TestToolUseSplitAcrossDeltas(t *testing.T) {
	s, ts := newServer(t, reply{file: "tool_use.sse"})
	p := anthropic.New(anthropic.Options{BaseURL: ts.URL, Model: "claude-sonnet-4-5", APIKey: "k-test", MaxTokens: 1000})
	got, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Chunk{
		{Kind: llm.ChunkText, Text: "Let me check "},
		{Kind: llm.ChunkText, Text: "both."},
		{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: "toolu_01A", Name: "mcp__fs__list", Args: json.RawMessage(`{"path": "."}`)}},
		{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: "toolu_01B", Name: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)}},
		{Kind: llm.ChunkUsage, Usage: llm.Usage{InputTokens: 472, OutputTokens: 89}},
		{Kind: llm.ChunkStop, StopReason: llm.StopToolUse},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	h := s.headers[0]
	if h.Get("x-api-key") != "k-test" || h.Get("anthropic-version") != anthropic.DefaultVersion {
		t.Errorf("headers = %v", h)
	}
	// Cache breakpoints: the last tool (the tool list), the system prompt, and the last block of
	// the conversation, so a multi-step turn pays for the schemas and the history once.
	eph := map[string]any{"type": "ephemeral"}
	wantBody := map[string]any{
		"model": "claude-sonnet-4-5", "max_tokens": float64(1000), "stream": true,
		"system": []any{map[string]any{"type": "text", "text": "be brief", "cache_control": eph}},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "list"}}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "ok"},
				map[string]any{"type": "tool_use", "id": "t0", "name": "mcp__fs__list", "input": map[string]any{"path": "."}},
			}},
			// The tool result and the next user text share one user message.
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "t0", "content": "denied", "is_error": true},
				map[string]any{"type": "text", "text": "why?", "cache_control": eph},
			}},
		},
		"tools": []any{map[string]any{"name": "mcp__fs__list", "description": "list", "input_schema": map[string]any{"type": "object"}, "cache_control": eph}},
	}
	if diff := cmp.Diff(wantBody, s.bodies[0]); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestTextAndNoToolCalls(t *testing.T) {
	s, ts := newServer(t, reply{file: "text.sse"})
	p := anthropic.New(anthropic.Options{BaseURL: ts.URL + "/v1", Model: "m", APIKey: "k"})
	r := req
	r.NoToolCalls = true
	got, err := collect(t, p, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Chunk{
		{Kind: llm.ChunkText, Text: "There are 2 files."},
		{Kind: llm.ChunkUsage, Usage: llm.Usage{InputTokens: 610, OutputTokens: 9}},
		{Kind: llm.ChunkStop, StopReason: llm.StopEndTurn},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"type": "none"}, s.bodies[0]["tool_choice"]); diff != "" {
		t.Errorf("tool_choice (-want +got):\n%s", diff)
	}
	if s.bodies[0]["max_tokens"] != float64(4096) {
		t.Errorf("max_tokens = %v", s.bodies[0]["max_tokens"])
	}
}

func TestErrorCarriesProviderMessage(t *testing.T) {
	_, ts := newServer(t, reply{status: 401, file: "error_401.json"})
	p := anthropic.New(anthropic.Options{BaseURL: ts.URL, Model: "m", APIKey: "bad"})
	_, err := collect(t, p, req)
	if err == nil || err.Error() != "anthropic: HTTP 401 Unauthorized (authentication_error): invalid x-api-key" {
		t.Errorf("err = %v", err)
	}
}

func TestErrorEventInStream(t *testing.T) {
	_, ts := newServer(t, reply{file: "stream_error.sse"})
	p := anthropic.New(anthropic.Options{BaseURL: ts.URL, Model: "m", APIKey: "k"})
	_, err := collect(t, p, req)
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Type != "overloaded_error" || apiErr.Message != "Overloaded" {
		t.Errorf("err = %v", err)
	}
}

type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return nil
}

func TestRetryOverloadedAndRateLimited(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	s, ts := newServer(t,
		reply{status: 529, file: "error_529.json"},
		reply{status: 429, file: "error_529.json", headers: map[string]string{"Retry-After": now.Add(3 * time.Second).Format(http.TimeFormat)}},
		reply{file: "text.sse"})
	sl := &sleeper{}
	p := anthropic.New(anthropic.Options{BaseURL: ts.URL, Model: "m", APIKey: "k",
		Retry: llm.Retry{Sleep: sl.sleep, Now: func() time.Time { return now }}})
	if _, err := collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 3 * time.Second}, sl.waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if len(s.bodies) != 3 {
		t.Errorf("%d requests", len(s.bodies))
	}
}

func TestCancelClosesRequest(t *testing.T) {
	closed := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(closed)
	}))
	defer ts.Close()
	p := anthropic.New(anthropic.Options{BaseURL: ts.URL, Model: "m", APIKey: "k"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var gotErr error
	for c, err := range p.Stream(ctx, req) {
		if err != nil {
			gotErr = err
			break
		}
		if c.Text == "Hel" {
			cancel()
		}
	}
	if !errors.Is(gotErr, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", gotErr)
	}
	select {
	case <-closed:
	case <-time.After(20 * time.Second): // hang guard
		t.Fatal("the server did not see the request closed")
	}
}

func TestTruncatedStreamIsAnError(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n")
	}))
	defer ts.Close()
	p := anthropic.New(anthropic.Options{BaseURL: ts.URL, Model: "m", APIKey: "k"})
	if _, err := collect(t, p, req); err == nil || !strings.Contains(err.Error(), "message_stop") {
		t.Errorf("err = %v", err)
	}
}

// Cached input: message_start reports cache reads and writes; the usage counts them in the input
// and reports them apart.
func TestCacheUsage(t *testing.T) {
	_, ts := newServer(t, reply{file: "cache_usage.sse"})
	p := anthropic.New(anthropic.Options{BaseURL: ts.URL, Model: "claude-sonnet-4-5", APIKey: "k"})
	got, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	var u *llm.Usage
	for _, c := range got {
		if c.Kind == llm.ChunkUsage {
			u = &c.Usage
		}
	}
	want := llm.Usage{InputTokens: 12 + 300 + 5200, CachedInputTokens: 5200, CacheWriteTokens: 300, OutputTokens: 20}
	if u == nil || *u != want {
		t.Errorf("usage = %+v, want %+v", u, want)
	}
}

// Models follows the pages of GET /v1/models (has_more, last_id -> after_id).
func TestModels(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("x-api-key") != "k" || r.Header.Get("anthropic-version") == "" {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"no"}}`, 404)
			return
		}
		if r.URL.Query().Get("after_id") == "" {
			io.WriteString(w, `{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"}],"has_more":true,"first_id":"claude-sonnet-4-5","last_id":"claude-sonnet-4-5"}`)
			return
		}
		io.WriteString(w, `{"data":[{"type":"model","id":"claude-haiku-4-5","display_name":"Claude Haiku 4.5","created_at":"2025-10-01T00:00:00Z"}],"has_more":false,"first_id":"claude-haiku-4-5","last_id":"claude-haiku-4-5"}`)
	}))
	t.Cleanup(ts.Close)
	got, err := anthropic.New(anthropic.Options{BaseURL: ts.URL, APIKey: "k"}).Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ModelInfo{
		{ID: "claude-sonnet-4-5", DisplayName: "Claude Sonnet 4.5", Created: 1759104000},
		{ID: "claude-haiku-4-5", DisplayName: "Claude Haiku 4.5", Created: 1759276800},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}
