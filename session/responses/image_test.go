package responses

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

// Responses API: the function_call_output's output is a list of input_text and input_image.
func TestImageResultWireFormat(t *testing.T) {
	p := New(Options{Model: "m"})
	b, err := p.body(imageRequest())
	v := decodeBody(t, b, err)
	var out any
	for _, it := range v["input"].([]any) {
		if m := it.(map[string]any); m["type"] == "function_call_output" {
			out = m
		}
	}
	want := `{"call_id":"c1","output":[{"text":"a picture\n[image \"image/png\", 3 bytes]","type":"input_text"},{"image_url":"data:image/png;base64,iVBO","type":"input_image"}],"type":"function_call_output"}`
	if got := js(out); got != want {
		t.Errorf("function_call_output = %s\nwant %s", got, want)
	}
}
