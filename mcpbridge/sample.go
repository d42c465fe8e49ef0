package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// SampleRequest is a server's request to use the user's model (MCP sampling/createMessage), text
// only.
type SampleRequest struct {
	Server    string
	System    string
	Messages  []SampleMessage
	MaxTokens int
	ModelHint string // the server's first model hint, "" if none (advisory)
}

// SampleMessage is one message of a SampleRequest.
type SampleMessage struct {
	Role string // "user" or "assistant"
	Text string
}

// SampleResult is the model's answer.
type SampleResult struct {
	Model      string
	Text       string
	StopReason string // "endTurn", "maxTokens" or the provider's own
}

// ErrSampleRejected is what Options.Sample returns when the user said no: the server gets MCP's
// "user rejected" error.
var ErrSampleRejected = errors.New("the user rejected the sampling request")

// sampleHandler hands a server's sampling/createMessage to Options.Sample. It runs on its own
// goroutine; ctx ends with the server's request.
type sampleHandler struct {
	server string
	fn     func(context.Context, SampleRequest) (SampleResult, error)
}

func (h sampleHandler) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	p := req.CreateMessageParams
	if len(p.Tools) > 0 || p.ToolChoice != nil {
		return nil, errors.New("sampling with tools is not supported by this client")
	}
	sr := SampleRequest{Server: h.server, System: p.SystemPrompt, MaxTokens: p.MaxTokens}
	if p.ModelPreferences != nil && len(p.ModelPreferences.Hints) > 0 {
		sr.ModelHint = p.ModelPreferences.Hints[0].Name
	}
	if len(p.Messages) == 0 {
		return nil, errors.New("messages is empty")
	}
	for i, m := range p.Messages {
		text, err := contentText(m.Content)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		if m.Role != mcp.RoleUser && m.Role != mcp.RoleAssistant {
			return nil, fmt.Errorf("messages[%d]: role must be user or assistant, not %q", i, m.Role)
		}
		sr.Messages = append(sr.Messages, SampleMessage{Role: string(m.Role), Text: text})
	}
	res, err := h.fn(ctx, sr)
	if errors.Is(err, ErrSampleRejected) {
		return nil, errors.New("User rejected sampling request") // the spec's wording
	}
	if err != nil {
		return nil, err
	}
	return &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent(res.Text)},
		Model:           res.Model,
		StopReason:      res.StopReason,
	}, nil
}

// contentText is the text of a sampling message's content (one block or a list); anything but
// text is an error.
func contentText(c any) (string, error) {
	switch v := c.(type) {
	case mcp.TextContent:
		return v.Text, nil
	case *mcp.TextContent:
		return v.Text, nil
	case map[string]any:
		if v["type"] != "text" {
			return "", fmt.Errorf("content of type %v: only text is supported", v["type"])
		}
		s, ok := v["text"].(string)
		if !ok {
			return "", errors.New("text content without text")
		}
		return s, nil
	case []any:
		return joinText(v)
	case []mcp.Content: // mcp-go parses content before the handler sees it
		return joinText(v)
	}
	return "", fmt.Errorf("content %T: only text is supported", c) // image, audio, tool use

}

func joinText[T any](blocks []T) (string, error) {
	var parts []string
	for _, b := range blocks {
		s, err := contentText(b)
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n"), nil
}
