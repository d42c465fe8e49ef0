package session_test

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
)

// instantTools answers every call at once (no tool time).
type instantTools struct{ tools []mcpbridge.Tool }

func (f instantTools) Tools() []mcpbridge.Tool { return f.tools }
func (f instantTools) Instructions() map[string]string {
	return map[string]string{"fs": "Use list first."}
}
func (f instantTools) Call(_ context.Context, name string, _ json.RawMessage) (mcpbridge.Result, error) {
	return mcpbridge.Result{Name: name, Text: "a.go\nb.go\n", Bytes: 10}, nil
}

type allowGate struct{}

func (allowGate) Check(context.Context, permissions.Request) (permissions.Decision, error) {
	return permissions.Decision{Allowed: true, By: permissions.ByMode}, nil
}

// instantModel asks for callsPerStep calls per response for steps responses, then answers (no
// model time).
type instantModel struct{ steps, callsPerStep int }

func (p instantModel) Stream(_ context.Context, req session.Request) iter.Seq2[session.Chunk, error] {
	return func(yield func(session.Chunk, error) bool) {
		rounds := 0
		for _, m := range req.Messages {
			if len(m.ToolCalls) > 0 {
				rounds++
			}
		}
		if rounds >= p.steps {
			yield(session.Chunk{Text: "done"}, nil)
			return
		}
		for i := range p.callsPerStep {
			id := "c" + strconv.Itoa(rounds) + "_" + strconv.Itoa(i)
			if !yield(session.Chunk{Kind: 1, ToolCall: session.ToolCall{ID: id, Name: "mcp__fs__list", Args: json.RawMessage(`{"path":"."}`)}}, nil) {
				return
			}
		}
	}
}

// BenchmarkLoopPerToolCall measures the loop's own cost per tool call: snapshot of the tool list
// and schemas, system prompt, events, gate request, result capping, history append. Model and
// tools answer instantly, so what is measured is overhead.
func BenchmarkLoopPerToolCall(b *testing.B) {
	const steps, perStep = 10, 4
	var tools []mcpbridge.Tool
	for i := range 10 {
		name := "t" + strconv.Itoa(i)
		tools = append(tools, mcpbridge.Tool{Name: "mcp__fs__" + name, Server: "fs", Tool: name, InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	tools = append(tools, mcpbridge.Tool{Name: "mcp__fs__list", Server: "fs", Tool: "list", InputSchema: json.RawMessage(`{"type":"object"}`)})
	m := session.NewManager(session.Options{Tools: instantTools{tools}, Gate: allowGate{}, MaxSteps: 100})
	defer m.Close()
	m.UseProvider(instantModel{steps, perStep})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		done := make(chan struct{})
		_, _, err := m.Start(context.Background(), session.StartParams{Prompt: "go"}, func(e session.Event) {
			if e.Kind == session.KindDone {
				if e.StopReason != session.StopEndTurn {
					b.Errorf("done %+v", e)
				}
				close(done)
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		<-done
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps*perStep), "ns/toolcall")
}
