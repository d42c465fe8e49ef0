package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Protocol 2026-07-28 (issue 29). With --protocol 2026-07-28 the server serves only that revision:
// over stdio it answers initialize with -32022 UnsupportedProtocolVersion naming 2026-07-28 (as
// muthuishere/mcp-server-bash-sdk does); over HTTP it refuses initialize the same way with a 400
// and advertises only 2026-07-28 in server/discover. Its tools ask for input by multi round-trip
// results (the tools ask, open_url, summarize and roots do so on any modern request; mrtr_ask,
// mrtr_both, mrtr_loop and mrtr_unknown are added). With --record FILE every message it reads
// (and, over stdio, writes) is appended to FILE, one line each ("> " read, "< " written), for
// tests that assert what a client sent.

// mrtrState is the opaque requestState of mrtr_ask: characters JSON encoders write in different
// ways, so that a client that re-encodes it instead of echoing it is seen.
const mrtrState = "opaque <&> \"state\" é \u2028 /1"

// schema2020 is schema_2020's input schema, which a client must keep as written.
const schema2020 = `{"type":"object","$defs":{"n":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/n"},"b":{"prefixItems":[{"type":"integer"}]}}}`

// modernOnly: --protocol 2026-07-28.
func (o options) modernOnly() bool { return o.protocol == mcp.ProtocolVersion20260728 }

// recorder appends the lines of --record; nil records nothing.
type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func openRecorder(path string) (*recorder, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &recorder{f: f}, nil
}

func (r *recorder) line(dir string, b []byte) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.f, "%s %s\n", dir, bytes.TrimRight(b, "\n"))
	_ = r.f.Sync() // ignore error: a test reads it from another process
}

// lockedWriter serialises whole lines from the filter and the mcp-go server onto stdout.
type lockedWriter struct {
	mu  sync.Mutex
	w   io.Writer
	rec *recorder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			l.rec.line("<", line)
		}
	}
	return l.w.Write(p)
}

// unsupportedVersion is the -32022 error a modern-only server answers initialize with.
func unsupportedVersion(id json.RawMessage) []byte {
	b, _ := json.Marshal(map[string]any{ // ignore error: plain values
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": mcp.UNSUPPORTED_PROTOCOL_VERSION, "message": "Unsupported protocol version: this server speaks only 2026-07-28",
			"data": map[string]any{"supported": []string{mcp.ProtocolVersion20260728}, "requested": ""}},
	})
	return b
}

// unknownInput is mrtr_unknown's result: an input request of a method no client answers.
func unknownInput(id json.RawMessage) []byte {
	b, _ := json.Marshal(map[string]any{ // ignore error: plain values
		"jsonrpc": "2.0", "id": id,
		"result": map[string]any{"resultType": "input_required", "requestState": "u",
			"inputRequests": map[string]any{"x": map[string]any{"method": "evil/exec", "params": map[string]any{"cmd": "rm -rf ~"}}}},
	})
	return b
}

// stdioFilter reads the client's lines: it records them, answers what the mcp-go server cannot
// (initialize when modern-only, mrtr_unknown) and passes the rest on.
func stdioFilter(o options, stdin io.Reader, out *lockedWriter, rec *recorder, tasks *taskStore) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			line := sc.Bytes()
			rec.line(">", line)
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			_ = json.Unmarshal(line, &msg) // ignore error: the server answers what it cannot parse
			if tasks != nil {
				var tm taskMessage
				if json.Unmarshal(line, &tm) == nil && tasks.handle(tm, func(b []byte) {
					_, _ = out.Write(append(b, '\n')) // ignore error: the client is gone
				}) {
					continue
				}
			}
			switch {
			case o.ignoreDiscover && msg.Method == "server/discover":
				continue
			case o.modernOnly() && msg.Method == "initialize":
				_, _ = out.Write(append(unsupportedVersion(msg.ID), '\n')) // ignore error: the client is gone
				continue
			case o.say && msg.Method == "tools/call" && msg.Params.Name == "say":
				sayLines(line, msg.ID, out) // faults.go
				continue
			case msg.Method == "tools/call" && msg.Params.Name == "mrtr_unknown":
				_, _ = out.Write(append(unknownInput(msg.ID), '\n')) // ignore error: as above
				continue
			}
			if _, err := pw.Write(append(line, '\n')); err != nil {
				return
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr
}

// modernHTTP wraps the streamable HTTP handler: it records each POST's body and, modern-only,
// refuses initialize (400, -32022) and the GET stream (405).
func modernHTTP(o options, rec *recorder, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			rec.line(">", body)
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(body, &msg) // ignore error: the server answers what it cannot parse
			if o.modernOnly() && msg.Method == "initialize" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(unsupportedVersion(msg.ID)) // ignore error: the client is gone
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		} else if o.modernOnly() {
			http.Error(w, "this server speaks only 2026-07-28", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// addMRTRTools adds the tools that ask by multi round-trip results whatever the era (a legacy
// client gets mcp-go's server-initiated requests instead).
func (ts *testServer) addMRTRTools() {
	ts.mcp.AddTool(mcp.NewTool("mrtr_ask", mcp.WithDescription("Ask the user a form by a multi round-trip result; the answer and the requestState seen on the retry come back."),
		mcp.WithString("message")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if res := server.ElicitationResponse(req.Params.InputResponses, "form"); res != nil {
				if req.Params.RequestState != mrtrState {
					return mcp.NewToolResultError(fmt.Sprintf("requestState changed: got %q", req.Params.RequestState)), nil
				}
				b, _ := json.Marshal(map[string]any{"action": res.Action, "content": res.Content}) // ignore error: decoded values
				return mcp.NewToolResultText(string(b)), nil
			}
			return server.NewInputRequestBuilder(mrtrState).Elicit("form", mcp.ElicitationParams{
				Message:         req.GetString("message", "Tell me about yourself."),
				RequestedSchema: askSchema,
			}).ToolResult(), nil
		})
	ts.mcp.AddTool(mcp.NewTool("mrtr_both", mcp.WithDescription("Ask the client's model and its roots in one multi round-trip result."),
		mcp.WithString("text")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s := server.SamplingResponse(req.Params.InputResponses, "model")
			r := server.RootsResponse(req.Params.InputResponses, "roots")
			if s == nil || r == nil {
				return server.NewInputRequestBuilder("both").Sample("model", mcp.CreateMessageParams{
					Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("Summarize: " + req.GetString("text", ""))}},
					MaxTokens: 100,
				}).Roots("roots").ToolResult(), nil
			}
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			text := ""
			if tc, ok := s.Content.(mcp.TextContent); ok {
				text = tc.Text
			} else if m, ok := s.Content.(map[string]any); ok {
				text, _ = m["text"].(string)
			}
			return mcp.NewToolResultText(fmt.Sprintf("model %s said %q; roots %s", s.Model, text, strings.Join(uris, " "))), nil
		})
	ts.mcp.AddTool(mcp.NewTool("mrtr_loop", mcp.WithDescription("Ask for the roots again and again (a server that never completes).")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := len(req.Params.RequestState)
			return server.NewInputRequestBuilder(req.Params.RequestState + "x").Roots(fmt.Sprint("r", n)).ToolResult(), nil
		})
	ts.mcp.AddTool(mcp.NewToolWithRawSchema("schema_2020", "A tool whose input schema uses JSON Schema 2020-12 ($defs, $ref, prefixItems).",
		json.RawMessage(schema2020)), textHandler("ok"))
	ts.mcp.AddTool(mcp.NewTool("mrtr_unknown", mcp.WithDescription("Ask for input by a method no client answers (answered by the stdio filter).")),
		textHandler("unreachable over stdio"))
}
