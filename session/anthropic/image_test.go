package anthropic

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

// Messages API: the image is a base64 image block inside the tool_result's content.
func TestImageResultWireFormat(t *testing.T) {
	p := New(Options{Model: "m"})
	b, err := p.body(imageRequest())
	v := decodeBody(t, b, err)
	msgs := v["messages"].([]any)
	user := msgs[2].(map[string]any)["content"].([]any)
	want := `{"content":[{"text":"a picture\n[image \"image/png\", 3 bytes]","type":"text"},{"source":{"data":"iVBO","media_type":"image/png","type":"base64"},"type":"image"}],"tool_use_id":"c1","type":"tool_result"}`
	if got := js(user[0]); got != want {
		t.Errorf("tool_result = %s\nwant %s", got, want)
	}
}
