package mcpbridge

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestSampling: a server's sampling/createMessage reaches Options.Sample as text messages, and
// the answer (or the user's refusal) goes back.
func TestSampling(t *testing.T) {
	var mu sync.Mutex
	var seen []SampleRequest
	reject := false
	r := newTestRegistry(t, Options{Sample: func(ctx context.Context, req SampleRequest) (SampleResult, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, req)
		if reject {
			return SampleResult{}, ErrSampleRejected
		}
		return SampleResult{Model: "m-1", Text: "short", StopReason: "endTurn"}, nil
	}})
	applyAndWait(t, r, stdioCfg("s", "--sample"))
	res, err := r.Call(context.Background(), "mcp__s__summarize", json.RawMessage(`{"text":"long"}`))
	if err != nil || res.Text != `{"model":"m-1","stopReason":"endTurn","text":"short"}` {
		t.Errorf("summarize = %+v, %v", res, err)
	}
	mu.Lock()
	want := SampleRequest{Server: "s", System: "You summarize.", MaxTokens: 100, ModelHint: "claude",
		Messages: []SampleMessage{{Role: "user", Text: "Summarize in one line: long"}}}
	if len(seen) != 1 {
		t.Fatalf("Sample called %d times", len(seen))
	}
	if diff := cmp.Diff(want, seen[0]); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	reject = true
	mu.Unlock()
	res, _ = r.Call(context.Background(), "mcp__s__summarize", json.RawMessage(`{"text":"long"}`))
	if !res.IsError || !strings.Contains(res.Text, "User rejected sampling request") {
		t.Errorf("rejected: summarize = %+v", res)
	}
}

func TestSamplingContentText(t *testing.T) {
	for _, tc := range []struct {
		content any
		want    string
		err     string
	}{
		{mcp.NewTextContent("a"), "a", ""},
		{map[string]any{"type": "text", "text": "b"}, "b", ""},
		{[]mcp.Content{mcp.NewTextContent("c"), mcp.NewTextContent("d")}, "c\nd", ""},
		{[]any{map[string]any{"type": "text", "text": "e"}}, "e", ""},
		{map[string]any{"type": "image", "data": "x"}, "", "only text"},
		{mcp.NewImageContent("x", "image/png"), "", "only text"},
		{map[string]any{"type": "text"}, "", "without text"},
	} {
		got, err := contentText(tc.content)
		if got != tc.want || (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("contentText(%#v) = %q, %v; want %q, %q", tc.content, got, err, tc.want, tc.err)
		}
	}
}
