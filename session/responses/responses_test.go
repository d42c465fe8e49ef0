package responses_test

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
	"github.com/switchboard-dev/switchboard/session/llm"
	"github.com/switchboard-dev/switchboard/session/responses"
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
	if r.URL.Path != "/v1/responses" {
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
	if rp.status == 0 {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(max(rp.status, 200))
	for len(data) > 0 { // small pieces: chunk boundaries fall inside lines
		n := min(37, len(data))
		w.Write(data[:n])
		w.(http.Flusher).Flush()
		data = data[n:]
	}
}

func collect(t *testing.T, p *responses.Provider, req llm.Request) ([]llm.Chunk, error) {
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

var reasoningItem = json.RawMessage(`{"id":"rs_00","type":"reasoning","summary":[],"encrypted_content":"gAAAA-earlier"}`)

var req = llm.Request{
	System: "be brief",
	Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "list"},
		{Role: llm.RoleAssistant, Text: "ok", Reasoning: []json.RawMessage{reasoningItem},
			ToolCalls: []llm.ToolCall{{ID: "call_0", Name: "mcp__fs__list", Args: json.RawMessage(`{"path":"."}`)}}},
		{Role: llm.RoleTool, ToolCallID: "call_0", ToolName: "mcp__fs__list", Text: "a.go", IsError: false},
		{Role: llm.RoleUser, Text: "and go.mod?"},
	},
	Tools: []llm.ToolSpec{{Name: "mcp__fs__list", Description: "list", InputSchema: json.RawMessage(`{"type":"object"}`)}},
}

func newProvider(url string) *responses.Provider {
	return responses.New(responses.Options{BaseURL: url + "/v1", Model: "o4-mini", APIKey: "sk-test", MaxTokens: 1000,
		ReasoningEffort: "low", Retry: llm.Retry{Sleep: func(context.Context, time.Duration) error { return nil }}})
}

// A reasoning model's answer: the reasoning item (with its encrypted content) is kept, text
// streams, two parallel function calls with arguments split across deltas come out whole, usage
// with cached tokens; the request carries store false, the encrypted-reasoning include, the
// reasoning effort, and replays the earlier reasoning item before its function call.
func TestReasoningAndParallelCalls(t *testing.T) {
	s, ts := newServer(t, reply{file: "reasoning_tool_calls.sse"})
	got, err := collect(t, newProvider(ts.URL), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Chunk{
		{Kind: llm.ChunkReasoning, Raw: json.RawMessage(`{"id":"rs_01","type":"reasoning","summary":[{"type":"summary_text","text":"Listing the folder and reading go.mod."}],"encrypted_content":"gAAAAABpEnc1-full-chain"}`)},
		{Kind: llm.ChunkText, Text: "Let me check "},
		{Kind: llm.ChunkText, Text: "both."},
		{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: "call_A", Name: "mcp__fs__list", Args: json.RawMessage(`{"path": "."}`)}},
		{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: "call_B", Name: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)}},
		{Kind: llm.ChunkUsage, Usage: llm.Usage{InputTokens: 2048, CachedInputTokens: 1536, OutputTokens: 310}},
		{Kind: llm.ChunkStop, StopReason: llm.StopToolUse},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if h := s.headers[0].Get("Authorization"); h != "Bearer sk-test" {
		t.Errorf("Authorization = %q", h)
	}
	wantBody := map[string]any{
		"model": "o4-mini", "instructions": "be brief", "stream": true, "store": false,
		"include": []any{"reasoning.encrypted_content"}, "reasoning": map[string]any{"effort": "low"},
		"max_output_tokens": float64(1000), "parallel_tool_calls": true,
		"input": []any{
			map[string]any{"type": "message", "role": "user", "content": "list"},
			map[string]any{"id": "rs_00", "type": "reasoning", "summary": []any{}, "encrypted_content": "gAAAA-earlier"},
			map[string]any{"type": "message", "role": "assistant", "content": "ok"},
			map[string]any{"type": "function_call", "call_id": "call_0", "name": "mcp__fs__list", "arguments": `{"path":"."}`},
			map[string]any{"type": "function_call_output", "call_id": "call_0", "output": "a.go"},
			map[string]any{"type": "message", "role": "user", "content": "and go.mod?"},
		},
		"tools": []any{map[string]any{"type": "function", "name": "mcp__fs__list", "description": "list",
			"parameters": map[string]any{"type": "object"}, "strict": false}},
	}
	if diff := cmp.Diff(wantBody, s.bodies[0]); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestTextAndNoToolCalls(t *testing.T) {
	s, ts := newServer(t, reply{file: "text.sse"})
	r := req
	r.NoToolCalls = true
	got, err := collect(t, newProvider(ts.URL), r)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Chunk{
		{Kind: llm.ChunkText, Text: "There are "},
		{Kind: llm.ChunkText, Text: "2 files."},
		{Kind: llm.ChunkUsage, Usage: llm.Usage{InputTokens: 480, OutputTokens: 11}},
		{Kind: llm.ChunkStop, StopReason: llm.StopEndTurn},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if s.bodies[0]["tool_choice"] != "none" {
		t.Errorf("tool_choice = %v, want none on the last call of a turn", s.bodies[0]["tool_choice"])
	}
}

func TestIncompleteIsMaxTokens(t *testing.T) {
	_, ts := newServer(t, reply{file: "incomplete.sse"})
	got, err := collect(t, newProvider(ts.URL), req)
	if err != nil {
		t.Fatal(err)
	}
	if last := got[len(got)-1]; last.Kind != llm.ChunkStop || last.StopReason != llm.StopMaxTokens {
		t.Errorf("last chunk %+v, want stop max_tokens", last)
	}
}

func TestFailedAndErrorEventsCarryTheMessage(t *testing.T) {
	for file, msg := range map[string]string{
		"failed.sse":      "The model failed to generate a response.",
		"error_event.sse": "the encrypted reasoning item could not be verified",
	} {
		_, ts := newServer(t, reply{file: file})
		_, err := collect(t, newProvider(ts.URL), req)
		var ae *llm.APIError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: err = %v, want an APIError with %q", file, err, msg)
		}
	}
}

func TestTruncatedStreamIsAnError(t *testing.T) {
	_, ts := newServer(t, reply{file: "truncated.sse"})
	if _, err := collect(t, newProvider(ts.URL), req); err == nil || !strings.Contains(err.Error(), "response.completed") {
		t.Errorf("err = %v, want one naming the missing response.completed", err)
	}
}

// Same retry rules as the other providers: 429 is retried (Retry-After honoured), 401 is not and
// carries the API's message.
func TestRetryAndErrors(t *testing.T) {
	var waits []time.Duration
	s, ts := newServer(t, reply{status: 429, file: "error_429.json", headers: map[string]string{"Retry-After": "2"}}, reply{file: "text.sse"})
	p := responses.New(responses.Options{BaseURL: ts.URL + "/v1", Model: "m", APIKey: "k",
		Retry: llm.Retry{Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}})
	if _, err := collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	if len(s.bodies) != 2 || len(waits) != 1 || waits[0] != 2*time.Second {
		t.Errorf("requests %d, waits %v: want one retry after 2s", len(s.bodies), waits)
	}
	s, ts = newServer(t, reply{status: 401, file: "error_401.json"})
	_, err := collect(t, newProvider(ts.URL), req)
	if err == nil || !strings.Contains(err.Error(), "Incorrect API key") || len(s.bodies) != 1 {
		t.Errorf("err = %v after %d requests", err, len(s.bodies))
	}
}

func TestModels(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, `{"error":{"message":"no"}}`, 404)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"o4-mini","object":"model","created":1744225351,"owned_by":"system"},{"id":"gpt-4.1","object":"model","created":1744316542,"owned_by":"system"}]}`)
	}))
	t.Cleanup(ts.Close)
	got, err := newProvider(ts.URL).Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ModelInfo{{ID: "o4-mini", Created: 1744225351}, {ID: "gpt-4.1", Created: 1744316542}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}
