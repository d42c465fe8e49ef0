package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-dev/switchboard/session/llm"
	"github.com/switchboard-dev/switchboard/session/openai"
)

// reply is one canned HTTP response.
type reply struct {
	status  int
	file    string // testdata file served as the body
	headers map[string]string
}

// server replays replies in order and records the requests.
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
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
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
	if len(s.replies) == 0 {
		s.mu.Unlock()
		http.Error(w, "no more replies", http.StatusInternalServerError)
		return
	}
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
	if rp.status == 0 || rp.status == 200 {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(max(rp.status, 200))
	// Write in small pieces so the client sees chunk boundaries inside lines.
	for len(data) > 0 {
		n := min(37, len(data))
		w.Write(data[:n])
		w.(http.Flusher).Flush()
		data = data[n:]
	}
}

func collect(t *testing.T, p *openai.Provider, req llm.Request) ([]llm.Chunk, error) {
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
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c0", Name: "mcp__fs__list", Args: json.RawMessage(`{}`)}}},
		{Role: llm.RoleTool, ToolCallID: "c0", ToolName: "mcp__fs__list", Text: "a.go"},
	},
	Tools: []llm.ToolSpec{{Name: "mcp__fs__list", Description: "list", InputSchema: json.RawMessage(`{"type":"object"}`)}},
}

func TestToolCallsSplitAcrossChunks(t *testing.T) {
	s, ts := newServer(t, reply{file: "tool_calls.sse"})
	p := openai.New(openai.Options{BaseURL: ts.URL + "/v1/", Model: "gpt-4.1-mini", APIKey: "sk-test", MaxTokens: 100, MaxTokensField: "max_completion_tokens"})
	got, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Chunk{
		{Kind: llm.ChunkUsage, Usage: llm.Usage{InputTokens: 412, OutputTokens: 37}},
		{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: "call_aaa", Name: "mcp__fs__list", Args: json.RawMessage(`{"path": "."}`)}},
		{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: "call_bbb", Name: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)}},
		{Kind: llm.ChunkStop, StopReason: llm.StopToolUse},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if h := s.headers[0].Get("Authorization"); h != "Bearer sk-test" {
		t.Errorf("Authorization = %q", h)
	}
	b := s.bodies[0]
	wantBody := map[string]any{
		"model":                 "gpt-4.1-mini",
		"stream":                true,
		"stream_options":        map[string]any{"include_usage": true},
		"max_completion_tokens": float64(100),
		"messages": []any{
			map[string]any{"role": "system", "content": "be brief"},
			map[string]any{"role": "user", "content": "list"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
				map[string]any{"id": "c0", "type": "function", "function": map[string]any{"name": "mcp__fs__list", "arguments": "{}"}}}},
			map[string]any{"role": "tool", "tool_call_id": "c0", "content": "a.go"},
		},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "mcp__fs__list", "description": "list", "parameters": map[string]any{"type": "object"}}}},
	}
	if diff := cmp.Diff(wantBody, b); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestTextAndUsage(t *testing.T) {
	_, ts := newServer(t, reply{file: "text.sse"})
	p := openai.New(openai.Options{BaseURL: ts.URL + "/v1", Model: "m"})
	got, err := collect(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Chunk{
		{Kind: llm.ChunkText, Text: "There are "},
		{Kind: llm.ChunkText, Text: "2 files: a.go, b.go."},
		{Kind: llm.ChunkUsage, Usage: llm.Usage{InputTokens: 480, CachedInputTokens: 384, OutputTokens: 11}},
		{Kind: llm.ChunkStop, StopReason: llm.StopEndTurn},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestOllamaWholeToolCallAndNoKey(t *testing.T) {
	s, ts := newServer(t, reply{file: "ollama_tool_call.sse"})
	p := openai.New(openai.Options{Name: "openai-compatible", BaseURL: ts.URL + "/v1", Model: "qwen3:4b"})
	got, err := collect(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}, Tools: req.Tools, NoToolCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[1].ToolCall.Name != "list_files" || string(got[1].ToolCall.Args) != `{"path":"."}` {
		t.Errorf("chunks = %+v", got)
	}
	if h := s.headers[0].Get("Authorization"); h != "" {
		t.Errorf("Authorization sent without a key: %q", h)
	}
	if _, ok := s.bodies[0]["tools"]; ok {
		t.Errorf("tools sent although NoToolCalls")
	}
	if _, ok := s.bodies[0]["max_tokens"]; ok {
		t.Errorf("max_tokens sent although not configured")
	}
}

func TestErrorCarriesProviderMessage(t *testing.T) {
	_, ts := newServer(t, reply{status: 401, file: "error_401.json"})
	p := openai.New(openai.Options{BaseURL: ts.URL + "/v1", Model: "m", APIKey: "sk-test"})
	_, err := collect(t, p, req)
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 401 || apiErr.Type != "invalid_request_error" {
		t.Fatalf("err = %v", err)
	}
	want := "openai: HTTP 401 Unauthorized (invalid_request_error): Incorrect API key provided: sk-test."
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q, want prefix %q", err, want)
	}
}

func TestErrorInsideStream(t *testing.T) {
	_, ts := newServer(t, reply{file: "stream_error.sse"})
	p := openai.New(openai.Options{BaseURL: ts.URL + "/v1", Model: "m"})
	got, err := collect(t, p, req)
	if len(got) != 1 || got[0].Text != "Partial" {
		t.Errorf("chunks before the error = %+v", got)
	}
	if err == nil || !strings.Contains(err.Error(), "The server had an error while processing your request") {
		t.Errorf("err = %v", err)
	}
}

// sleeper records the waits instead of sleeping.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func TestRetry429ThenSuccessHonoursRetryAfter(t *testing.T) {
	s, ts := newServer(t,
		reply{status: 429, file: "error_429.json", headers: map[string]string{"Retry-After": "7"}},
		reply{status: 503, file: "error_429.json"},
		reply{file: "text.sse"})
	sl := &sleeper{}
	p := openai.New(openai.Options{BaseURL: ts.URL + "/v1", Model: "m", Retry: llm.Retry{Sleep: sl.sleep, Base: 500 * time.Millisecond}})
	got, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Errorf("chunks = %+v", got)
	}
	// 7 s from Retry-After, then the backoff of the second attempt (500 ms << 1).
	if diff := cmp.Diff([]time.Duration{7 * time.Second, time.Second}, sl.waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if len(s.bodies) != 3 {
		t.Errorf("%d requests, want 3", len(s.bodies))
	}
}

func TestRetryGivesUpWithMessage(t *testing.T) {
	_, ts := newServer(t,
		reply{status: 429, file: "error_429.json", headers: map[string]string{"Retry-After": "1"}},
		reply{status: 429, file: "error_429.json", headers: map[string]string{"Retry-After": "1"}})
	sl := &sleeper{}
	p := openai.New(openai.Options{BaseURL: ts.URL + "/v1", Model: "m", Retry: llm.Retry{Sleep: sl.sleep, MaxRetries: 1}})
	_, err := collect(t, p, req)
	if err == nil || !strings.Contains(err.Error(), "HTTP 429") || !strings.Contains(err.Error(), "Rate limit reached") {
		t.Errorf("err = %v", err)
	}
	if len(sl.waits) != 1 {
		t.Errorf("waits = %v", sl.waits)
	}
}

func TestNoRetryOn400(t *testing.T) {
	s, ts := newServer(t, reply{status: 400, file: "error_401.json"}, reply{file: "text.sse"})
	p := openai.New(openai.Options{BaseURL: ts.URL + "/v1", Model: "m", Retry: llm.Retry{Sleep: (&sleeper{}).sleep}})
	if _, err := collect(t, p, req); err == nil {
		t.Fatal("want an error")
	}
	if len(s.bodies) != 1 {
		t.Errorf("%d requests, want 1", len(s.bodies))
	}
}

func TestCancelClosesRequest(t *testing.T) {
	closed := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(closed)
	}))
	defer ts.Close()
	p := openai.New(openai.Options{BaseURL: ts.URL + "/v1", Model: "m"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var gotErr error
	n := 0
	for c, err := range p.Stream(ctx, req) {
		if err != nil {
			gotErr = err
			break
		}
		n++
		if c.Text == "Hel" {
			cancel()
		}
	}
	if n != 1 || !errors.Is(gotErr, context.Canceled) {
		t.Errorf("chunks %d, err %v; want 1 and context.Canceled", n, gotErr)
	}
	select {
	case <-closed:
	case <-time.After(20 * time.Second): // hang guard, not a timing assertion
		t.Fatal("the server did not see the request closed")
	}
}

// OpenAI caches a prompt's longest previously seen prefix automatically: from one step of a turn
// to the next, the tools and every earlier message must be byte-identical in the request.
func TestStablePrefixAcrossSteps(t *testing.T) {
	var mu sync.Mutex
	var raw [][]byte
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		raw = append(raw, b)
		mu.Unlock()
		data, _ := os.ReadFile("testdata/text.sse")
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(data)
	}))
	t.Cleanup(ts.Close)
	p := openai.New(openai.Options{BaseURL: ts.URL, Model: "m", APIKey: "k", MaxTokens: 100})
	step2 := req
	step2.Messages = append(slices.Clone(req.Messages),
		llm.Message{Role: llm.RoleAssistant, Text: "more", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "mcp__fs__list", Args: json.RawMessage(`{"path":"b"}`)}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "c1", ToolName: "mcp__fs__list", Text: "b.go"})
	for _, r := range []llm.Request{req, step2} {
		if _, err := collect(t, p, r); err != nil {
			t.Fatal(err)
		}
	}
	type body struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
	}
	var a, b body
	if json.Unmarshal(raw[0], &a) != nil || json.Unmarshal(raw[1], &b) != nil {
		t.Fatal("bodies are not JSON")
	}
	if string(a.Tools) != string(b.Tools) || len(a.Tools) == 0 {
		t.Errorf("tools differ between steps:\n%s\n%s", a.Tools, b.Tools)
	}
	for i := range a.Messages {
		if string(a.Messages[i]) != string(b.Messages[i]) {
			t.Errorf("message %d differs between steps:\n%s\n%s", i, a.Messages[i], b.Messages[i])
		}
	}
}

func TestModels(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.Error(w, `{"error":"not found"}`, 404)
			return
		}
		if r.Header.Get("Authorization") != "" {
			t.Errorf("no key configured, but Authorization = %q", r.Header.Get("Authorization"))
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"qwen3:8b","object":"model","created":1751000000,"owned_by":"library"}]}`)
	}))
	t.Cleanup(ts.Close)
	got, err := openai.New(openai.Options{BaseURL: ts.URL + "/v1", Model: "qwen3:8b"}).Models(context.Background())
	if err != nil || len(got) != 1 || got[0].ID != "qwen3:8b" || got[0].Created != 1751000000 {
		t.Errorf("models = %+v, %v", got, err)
	}
	_, err = openai.New(openai.Options{BaseURL: ts.URL + "/nope"}).Models(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("err = %v, want the server's message", err)
	}
}
