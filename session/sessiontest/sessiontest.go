// Package sessiontest has fakes for testing package session and its users: a fake MCP tool set,
// fake gates, a fake workspace and a helper that loads a script provider and checks in t.Cleanup
// that the script was consumed. The fakes behave; they do not assert call sequences.
package sessiontest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session/script"
)

// Script parses a script (see package script) and fails the test at cleanup when steps remain.
func Script(t testing.TB, text string) *script.Provider {
	t.Helper()
	p, err := script.Parse(t.Name()+".script", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Done(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// Handler runs one fake tool call.
type Handler func(ctx context.Context, args json.RawMessage) (mcpbridge.Result, error)

// Text returns a handler answering text.
func Text(text string) Handler {
	return func(context.Context, json.RawMessage) (mcpbridge.Result, error) {
		return mcpbridge.Result{Text: text, Bytes: len(text)}, nil
	}
}

// Fail returns a handler answering an error result.
func Fail(text string) Handler {
	return func(context.Context, json.RawMessage) (mcpbridge.Result, error) {
		return mcpbridge.Result{Text: text, IsError: true, Bytes: len(text)}, nil
	}
}

// Echo answers the arguments.
func Echo(_ context.Context, args json.RawMessage) (mcpbridge.Result, error) {
	return mcpbridge.Result{Text: string(args), Bytes: len(args)}, nil
}

// Block returns a handler that closes started (once) and waits until ctx ends, as the registry
// does on cancel: an error result and ctx's error.
func Block(started chan<- struct{}) Handler {
	var once sync.Once
	return func(ctx context.Context, _ json.RawMessage) (mcpbridge.Result, error) {
		once.Do(func() { close(started) })
		<-ctx.Done()
		return mcpbridge.Result{Text: "call cancelled", IsError: true}, ctx.Err()
	}
}

// Barrier returns a handler that returns text only once n calls of handlers sharing the barrier
// are running at the same time: sequential calls would wait until ctx ends.
func Barrier(n int) func(text string) Handler {
	var mu sync.Mutex
	waiting := 0
	all := make(chan struct{})
	return func(text string) Handler {
		return func(ctx context.Context, _ json.RawMessage) (mcpbridge.Result, error) {
			mu.Lock()
			if waiting++; waiting == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
				return mcpbridge.Result{Text: text, Bytes: len(text)}, nil
			case <-ctx.Done():
				return mcpbridge.Result{Text: "cancelled at the barrier", IsError: true}, ctx.Err()
			}
		}
	}
}

// Tools is a fake MCP tool set (session.Tools). Safe for concurrent use.
type Tools struct {
	mu       sync.Mutex
	tools    map[string]mcpbridge.Tool
	handlers map[string]Handler
	instr    map[string]string
	calls    []string
}

// NewTools returns an empty tool set.
func NewTools() *Tools {
	return &Tools{tools: map[string]mcpbridge.Tool{}, handlers: map[string]Handler{}, instr: map[string]string{}}
}

// Add registers mcp__server__tool.
func (f *Tools) Add(server, tool string, h Handler) *Tools {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := "mcp__" + server + "__" + tool
	f.tools[name] = mcpbridge.Tool{Name: name, Server: server, Tool: tool, Description: "fake " + tool,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
	f.handlers[name] = h
	return f
}

// AddTool adds a tool with a description.
func (f *Tools) AddTool(server, tool, description string, h Handler) *Tools {
	f.Add(server, tool, h)
	f.mu.Lock()
	defer f.mu.Unlock()
	name := "mcp__" + server + "__" + tool
	t := f.tools[name]
	t.Description = description
	f.tools[name] = t
	return f
}

// AddToolSchema adds a tool with a description and an input schema.
func (f *Tools) AddToolSchema(server, tool, description string, schema json.RawMessage, h Handler) *Tools {
	f.AddTool(server, tool, description, h)
	f.mu.Lock()
	defer f.mu.Unlock()
	name := "mcp__" + server + "__" + tool
	t := f.tools[name]
	t.InputSchema = schema
	f.tools[name] = t
	return f
}

// SetInstructions sets a server's instructions.
func (f *Tools) SetInstructions(server, text string) *Tools {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.instr[server] = text
	return f
}

// Calls returns the names of the calls made so far, in the order they started.
func (f *Tools) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *Tools) Tools() []mcpbridge.Tool {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := slices.Sorted(maps.Keys(f.tools))
	out := make([]mcpbridge.Tool, len(names))
	for i, n := range names {
		out[i] = f.tools[n]
	}
	return out
}

func (f *Tools) Instructions() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.instr)
}

func (f *Tools) Call(ctx context.Context, name string, args json.RawMessage) (mcpbridge.Result, error) {
	f.mu.Lock()
	h := f.handlers[name]
	f.calls = append(f.calls, name)
	f.mu.Unlock()
	if h == nil {
		text := fmt.Sprintf(`{"error":"Unknown tool: %s"}`, name)
		return mcpbridge.Result{Name: name, IsError: true, Text: text, Bytes: len(text)}, nil
	}
	res, err := h(ctx, args)
	res.Name = name
	if res.Bytes == 0 {
		res.Bytes = len(res.Text)
	}
	return res, err
}

// Gate is a fake confirm gate following the real gate's order: always-allow runs everything; a
// read-only built-in runs in single-confirm; otherwise Answer decides (nil = deny, By user), and
// in allowlist-only everything else is denied by mode. It honours ctx like the real gate.
type Gate struct {
	Answer func(req permissions.Request) permissions.Answer

	mu       sync.Mutex
	requests []permissions.Request
}

// AllowAll is a gate that answers "once" to every prompt.
func AllowAll() *Gate {
	return &Gate{Answer: func(permissions.Request) permissions.Answer { return permissions.AnswerOnce }}
}

// DenyTools is a gate that denies the named tools and allows the rest.
func DenyTools(names ...string) *Gate {
	return &Gate{Answer: func(r permissions.Request) permissions.Answer {
		if slices.Contains(names, r.Tool) {
			return permissions.AnswerDeny
		}
		return permissions.AnswerOnce
	}}
}

// Requests returns the requests seen so far.
func (g *Gate) Requests() []permissions.Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.requests)
}

func (g *Gate) Check(ctx context.Context, req permissions.Request) (permissions.Decision, error) {
	g.mu.Lock()
	g.requests = append(g.requests, req)
	g.mu.Unlock()
	if ctx.Err() != nil {
		return permissions.Decision{By: permissions.ByCancel, Reason: "cancelled"}, nil
	}
	switch {
	case req.Mode == permissions.AlwaysAllow:
		return permissions.Decision{Allowed: true, By: permissions.ByMode}, nil
	case req.ReadOnlyBuiltin && req.Mode == permissions.SingleConfirm:
		return permissions.Decision{Allowed: true, By: permissions.ByBuiltin}, nil
	case req.Mode == permissions.AllowlistOnly:
		return permissions.Decision{By: permissions.ByMode, Reason: "not on the allowlist"}, nil
	}
	a := permissions.AnswerDeny
	if g.Answer != nil {
		a = g.Answer(req)
	}
	return permissions.Decision{Allowed: a != permissions.AnswerDeny, Answer: a, By: permissions.ByUser}, nil
}

// Workspace is a fake editor workspace: folders on disk, open buffers, and ApplyEdit that records
// the edit (and updates the buffer when the file is open).
type Workspace struct {
	Dirs []string

	mu      sync.Mutex
	buffers map[string]string
	edits   []Edit
}

// Edit is one applied edit.
type Edit struct{ Path, Text string }

func (w *Workspace) Folders() []string { return slices.Clone(w.Dirs) }

// Open sets an open buffer's text.
func (w *Workspace) Open(path, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buffers == nil {
		w.buffers = map[string]string{}
	}
	w.buffers[path] = text
}

func (w *Workspace) Buffer(path string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.buffers[path]
	return t, ok
}

// Edits returns the applied edits.
func (w *Workspace) Edits() []Edit {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.edits)
}

func (w *Workspace) ApplyEdit(ctx context.Context, path, text string) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.edits = append(w.edits, Edit{Path: path, Text: text})
	if _, open := w.buffers[path]; open {
		w.buffers[path] = text
	}
	return true, nil
}
