package session_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/llm"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

// twoStep calls one tool, then answers; it keeps the second request.
type twoStep struct {
	tool string
	mu   sync.Mutex
	n    int
	last llm.Request
}

func (p *twoStep) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	p.mu.Lock()
	p.n++
	n := p.n
	p.last = req
	p.mu.Unlock()
	return func(yield func(llm.Chunk, error) bool) {
		if n == 1 {
			yield(llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: "c1", Name: p.tool, Args: json.RawMessage(`{}`)}}, nil)
			return
		}
		yield(llm.Chunk{Kind: llm.ChunkText, Text: "done"}, nil)
	}
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func imageBlock(mime string, data []byte) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "image", "mimeType": mime, "data": base64.StdEncoding.EncodeToString(data)})
	return b
}

// An image a tool returns reaches the model as an image; one over the cap, or whose bytes are not
// the image type it claims, is described in text and not sent.
func TestToolResultImages(t *testing.T) {
	small := pngBytes(t)
	big := append(append([]byte(nil), small...), make([]byte, session.MaxImageBytes)...)
	tools := sessiontest.NewTools().Add("pics", "shot", func(context.Context, json.RawMessage) (mcpbridge.Result, error) {
		return mcpbridge.Result{Text: "three pictures", Content: []json.RawMessage{
			json.RawMessage(`{"type":"text","text":"three pictures"}`),
			imageBlock("image/png", small),
			imageBlock("image/png", big),
			imageBlock("image/jpeg", []byte("not a jpeg at all")),
		}}, nil
	})
	p := &twoStep{tool: "mcp__pics__shot"}
	m := newManager(t, session.Options{Tools: tools}, "")
	m.UseProvider(p)
	runTurn(t, m, session.StartParams{Prompt: "look"})
	var res *llm.Message
	for i := range p.last.Messages {
		if p.last.Messages[i].Role == llm.RoleTool {
			res = &p.last.Messages[i]
		}
	}
	if res == nil {
		t.Fatal("no tool result in the second request")
	}
	if len(res.Images) != 1 || res.Images[0].MIMEType != "image/png" || res.Images[0].Data != base64.StdEncoding.EncodeToString(small) {
		t.Fatalf("images = %+v, want the small PNG only", res.Images)
	}
	if !strings.Contains(res.Text, "three pictures") || strings.Count(res.Text, "[image") != 3 {
		t.Errorf("text does not describe the three images: %q", res.Text)
	}
	if !strings.Contains(res.Text, "over the") || !strings.Contains(res.Text, "not image/jpeg") {
		t.Errorf("refused images not explained: %q", res.Text)
	}
}

// resourceTools is a fake registry that can read resources.
type resourceTools struct {
	fake  *sessiontest.Tools
	mu    sync.Mutex
	reads []string
}

func (r *resourceTools) Tools() []mcpbridge.Tool         { return r.fake.Tools() }
func (r *resourceTools) Instructions() map[string]string { return r.fake.Instructions() }
func (r *resourceTools) Call(ctx context.Context, name string, args json.RawMessage) (mcpbridge.Result, error) {
	return r.fake.Call(ctx, name, args)
}

func (r *resourceTools) ReadResource(_ context.Context, server, uri string) (mcpbridge.ReadResult, error) {
	r.mu.Lock()
	r.reads = append(r.reads, server+" "+uri)
	r.mu.Unlock()
	return mcpbridge.ReadResult{Server: server, URI: uri, Contents: []mcpbridge.ResourceContent{{URI: uri, MIMEType: "text/plain", Text: "ticket body"}}}, nil
}

// read_resource asks the gate as a call of the server's tools (Server set, not a read-only
// built-in), and a denied read reaches no server.
func TestReadResourceGated(t *testing.T) {
	tools := &resourceTools{fake: sessiontest.NewTools().Add("tix", "find", sessiontest.Text("x"))}
	gate := sessiontest.DenyTools(session.ToolReadResource)
	m := newManager(t, session.Options{Tools: tools, Gate: gate}, "")
	if !slices.ContainsFunc(m.ToolList(), func(t mcpbridge.Tool) bool { return t.Name == session.ToolReadResource }) {
		t.Fatal("read_resource not offered with a registry that reads resources")
	}
	args := json.RawMessage(`{"server":"tix","uri":"tix://1"}`)
	res, d := m.CallTool(context.Background(), session.ToolReadResource, args, permissions.SingleConfirm)
	if d.Allowed || !res.IsError || len(tools.reads) != 0 {
		t.Fatalf("denied read ran: %+v %+v reads=%v", d, res, tools.reads)
	}
	reqs := gate.Requests()
	if len(reqs) != 1 || reqs[0].Server != "tix" || reqs[0].ReadOnlyBuiltin {
		t.Fatalf("gate requests = %+v", reqs)
	}
	m2 := newManager(t, session.Options{Tools: tools}, "")
	res, d = m2.CallTool(context.Background(), session.ToolReadResource, args, permissions.SingleConfirm)
	if !d.Allowed || res.IsError || !strings.Contains(res.Text, "ticket body") || !strings.Contains(res.Text, `"tix://1"`) {
		t.Fatalf("allowed read = %+v", res)
	}
}
