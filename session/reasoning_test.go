package session_test

import (
	"context"
	"encoding/json"
	"iter"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/llm"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

// stepProvider answers each call with the chunks of the next step and records the requests.
type stepProvider struct {
	mu    sync.Mutex
	steps [][]llm.Chunk
	reqs  []llm.Request
}

func (p *stepProvider) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	step := p.steps[0]
	p.steps = p.steps[1:]
	p.mu.Unlock()
	return func(yield func(llm.Chunk, error) bool) {
		for _, c := range step {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// A reasoning model's reasoning items (opaque, encrypted) are kept with the assistant message and
// sent back at the next step, so the model keeps its chain between tool calls.
func TestReasoningItemsCarriedBetweenSteps(t *testing.T) {
	item := json.RawMessage(`{"id":"rs_1","type":"reasoning","encrypted_content":"gAAA"}`)
	p := &stepProvider{steps: [][]llm.Chunk{
		{{Kind: llm.ChunkReasoning, Raw: item}, {Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: "c1", Name: "mcp__fs__list", Args: json.RawMessage(`{}`)}}},
		{{Kind: llm.ChunkText, Text: "done"}},
	}}
	tools := sessiontest.NewTools().Add("fs", "list", sessiontest.Text("a.go"))
	m := session.NewManager(session.Options{Tools: tools, Gate: sessiontest.AllowAll()})
	t.Cleanup(m.Close)
	m.UseProvider(p)
	runTurnIn(t, m, "", "list")
	if len(p.reqs) != 2 {
		t.Fatalf("%d model calls", len(p.reqs))
	}
	msgs := p.reqs[1].Messages
	if len(msgs) < 2 || len(msgs[1].Reasoning) != 1 || string(msgs[1].Reasoning[0]) != string(item) {
		t.Errorf("step 2 assistant message = %+v, want the reasoning item", msgs[1])
	}
}
