package openai

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/session/llm"
)

// imageRequest is a tool round whose result carries one PNG.
func imageRequest() llm.Request {
	return llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "look"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "mcp__s__shot", Args: json.RawMessage(`{}`)}}},
		{Role: llm.RoleTool, ToolCallID: "c1", ToolName: "mcp__s__shot", Text: "a picture\n[image \"image/png\", 3 bytes]",
			Images: []llm.Image{{MIMEType: "image/png", Data: "iVBO"}}},
		{Role: llm.RoleUser, Text: "and?"},
	}}
}

func decodeBody(t *testing.T, b []byte, err error) map[string]any {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// Chat Completions: a tool message takes text only, so the image follows the tool messages in a
// user message of content parts, as an image_url data URL.
func TestImageResultWireFormat(t *testing.T) {
	p := New(Options{Model: "m"})
	b, err := p.body(imageRequest())
	v := decodeBody(t, b, err)
	msgs := v["messages"].([]any)
	if len(msgs) != 5 {
		t.Fatalf("messages = %s", js(msgs))
	}
	if got := js(msgs[2]); got != `{"content":"a picture\n[image \"image/png\", 3 bytes]","role":"tool","tool_call_id":"c1"}` {
		t.Errorf("tool message = %s", got)
	}
	want := `{"content":[{"text":"Images returned by tool call c1:","type":"text"},{"image_url":{"url":"data:image/png;base64,iVBO"},"type":"image_url"}],"role":"user"}`
	if got := js(msgs[3]); got != want {
		t.Errorf("image message = %s\nwant %s", got, want)
	}
	if got := js(msgs[4]); got != `{"content":"and?","role":"user"}` {
		t.Errorf("next user message = %s", got)
	}
}
