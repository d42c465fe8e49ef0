// Package agentbench is the scripted-model benchmark of tool search (issue 18): a session.Manager
// with many fake MCP tools talks to a scripted model over the real OpenAI Chat Completions wire
// format (an httptest server), so the request bytes are what a real model would receive. The
// model searches first, then calls every tool over the steps of one turn. For each request the
// benchmark records the body's size and its tools' size, and what both would be with every tool
// sent (the same body with the full tool list: without tool search Switchboard refuses to send
// more than session.MaxTools tools, so that request is computed, not sent).
package agentbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

// Step is one model request of the turn.
type Step struct {
	Tools       int // tools offered
	ToolBytes   int // bytes of the "tools" array
	BodyBytes   int // bytes of the whole request body
	AllTools    int // tools offered without tool search
	AllToolByte int // bytes of the "tools" array with every tool
	AllBody     int // bytes of the body with every tool
}

// Result is one run.
type Result struct {
	Servers, PerServer int
	Steps              []Step
	Reached            int // distinct MCP tools the model called successfully
	Total              int // MCP tools
}

// Sum returns the totals of the steps.
func (r Result) Sum() Step {
	var s Step
	for _, st := range r.Steps {
		s.Tools += st.Tools
		s.ToolBytes += st.ToolBytes
		s.BodyBytes += st.BodyBytes
		s.AllTools += st.AllTools
		s.AllToolByte += st.AllToolByte
		s.AllBody += st.AllBody
	}
	return s
}

// toolName is the MCP name of tool i of server s.
func serverName(s int) string { return fmt.Sprintf("srv%02d", s) }
func toolName(s, i int) string {
	return fmt.Sprintf("mcp__%s__op%02d", serverName(s), i)
}

// schema is a typical MCP input schema (about 600 bytes: four described properties).
func schema(s, i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"id":{"type":"string","description":"identifier of the %[1]s record to act on (see list_%[1]s)"},`+
		`"query":{"type":"string","description":"filter expression; fields are name, owner, state, created and updated; combine with AND/OR"},`+
		`"limit":{"type":"integer","minimum":1,"maximum":500,"description":"most items to return (default 50)"},`+
		`"fields":{"type":"array","items":{"type":"string"},"description":"fields to include in each item; default all of them"}},"required":["id"],"additionalProperties":false,"$comment":"op%02[2]d"}`,
		serverName(s), i))
}

// Run runs one turn of steps model calls over servers×perServer tools (steps >= 2: the last
// answers in text; the others search and call their share of the tools).
func Run(ctx context.Context, servers, perServer, steps int, threshold int) (Result, error) {
	res := Result{Servers: servers, PerServer: perServer, Total: servers * perServer}
	tools := sessiontest.NewTools()
	var mu sync.Mutex
	reached := map[string]bool{}
	for s := range servers {
		for i := range perServer {
			name := toolName(s, i)
			tools.AddToolSchema(serverName(s), fmt.Sprintf("op%02d", i),
				fmt.Sprintf("Operation %d of the %s service: reads or changes %s records selected by id or a query; answers JSON.", i, serverName(s), serverName(s)),
				schema(s, i), func(context.Context, json.RawMessage) (mcpbridge.Result, error) {
					mu.Lock()
					reached[name] = true
					mu.Unlock()
					return mcpbridge.Result{Text: "ok", Bytes: 2}, nil
				})
		}
	}
	// Every tool in the provider's wire format: what the request would carry without search.
	m := session.NewManager(session.Options{Tools: tools, Gate: sessiontest.AllowAll(), ToolSearch: session.ToolSearchOptions{Threshold: threshold},
		Getenv: func(string) string { return "" }})
	defer m.Close()
	all := m.ToolList()
	allSpecs := make([]map[string]any, len(all))
	for i, t := range all {
		allSpecs[i] = map[string]any{"type": "function", "function": map[string]any{"name": t.Name, "description": t.Description,
			"parameters": json.RawMessage(compact(t.InputSchema))}}
	}
	allBytes, _ := json.Marshal(allSpecs)

	perStep := (res.Total + steps - 2) / (steps - 1)
	var stepMu sync.Mutex
	step := 0
	var failure error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Tools json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, `{"error":{"message":"bad body"}}`, 400)
			return
		}
		var offered []json.RawMessage
		json.Unmarshal(req.Tools, &offered) // ignore error: absent on the final call
		stepMu.Lock()
		k := step
		step++
		res.Steps = append(res.Steps, Step{Tools: len(offered), ToolBytes: len(req.Tools), BodyBytes: len(body),
			AllTools: len(all), AllToolByte: len(allBytes), AllBody: len(body) - len(req.Tools) + len(allBytes)})
		stepMu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		var calls []string
		if k < steps-1 {
			// Search first (by the server whose tools come next), then call this step's share.
			first := k * perStep
			calls = append(calls, fmt.Sprintf(`{"name":"search_tools","arguments":%q}`, fmt.Sprintf(`{"query":"%s records"}`, serverName(first/perServer))))
			for j := first; j < min(first+perStep, res.Total); j++ {
				calls = append(calls, fmt.Sprintf(`{"name":%q,"arguments":"{\"id\":\"x\"}"}`, toolName(j/perServer, j%perServer)))
			}
		}
		writeSSE(w, calls)
	}))
	defer srv.Close()
	m.SetProvider(session.ProviderConfig{Type: session.ProviderOpenAICompatible, BaseURL: srv.URL + "/v1", Model: "scripted"})
	done := make(chan session.Event, 1)
	_, _, err := m.Start(ctx, session.StartParams{Prompt: "use every tool", Mode: permissions.SingleConfirm}, func(e session.Event) {
		switch e.Kind {
		case session.KindError:
			stepMu.Lock()
			failure = fmt.Errorf("agentbench: the turn failed: %s", e.Error)
			stepMu.Unlock()
		case session.KindDone:
			done <- e
		}
	})
	if err != nil {
		return res, err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(2 * time.Minute):
		return res, fmt.Errorf("agentbench: the turn did not end")
	}
	mu.Lock()
	res.Reached = len(reached)
	mu.Unlock()
	stepMu.Lock()
	defer stepMu.Unlock()
	return res, failure
}

func compact(s json.RawMessage) []byte {
	var b strings.Builder
	var v any
	if json.Unmarshal(s, &v) != nil {
		return s
	}
	out, _ := json.Marshal(v)
	b.Write(out)
	return []byte(b.String())
}

// writeSSE answers one chat.completion stream: the calls (each a {"name","arguments"} object), or
// a text when there are none.
func writeSSE(w io.Writer, calls []string) {
	chunk := func(s string) { fmt.Fprintf(w, "data: %s\n\n", s) }
	if len(calls) == 0 {
		chunk(`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Every tool answered."},"finish_reason":null}]}`)
		chunk(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	} else {
		for i, c := range calls {
			chunk(fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":%s}]},"finish_reason":null}]}`, i, i, c))
		}
		chunk(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
	}
	chunk(`{"choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0}}`)
	io.WriteString(w, "data: [DONE]\n\n")
}
