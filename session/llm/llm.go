// Package llm holds the vendor-neutral model request and stream types shared by package session
// and its provider subpackages (openai, anthropic, script). Package session re-exports them
// (session.Provider, session.Request, ...): the interface is owned by its consumer, the agent loop;
// it lives in this small leaf only so that the provider packages can implement it without an
// import cycle.
package llm

import (
	"context"
	"encoding/json"
	"iter"
)

// Role is a message author.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // a tool result
)

// Message is one history entry.
//
// A user message has Text. An assistant message has Text and/or ToolCalls. A tool message is the
// result of one tool call: ToolCallID, ToolName, Text (what the model sees) and IsError.
type Message struct {
	Role       Role       `json:"role"`
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	ToolName   string     `json:"toolName,omitempty"`
	IsError    bool       `json:"isError,omitempty"`
	// Reasoning (assistant) holds the provider's opaque reasoning items of this answer (the
	// Responses API's encrypted reasoning), sent back as they came so a reasoning model keeps its
	// chain between steps. Other providers ignore them.
	Reasoning []json.RawMessage `json:"reasoning,omitempty"`
	// Images (tool) are the images of a tool result, already checked and within the session's
	// cap; Text describes each. Providers whose API takes images send them in its format; others
	// ignore them (the model still has the description).
	Images []Image `json:"images,omitempty"`
}

// Image is one image: its MIME type (image/png, image/jpeg, image/gif or image/webp) and its
// bytes in standard base64.
type Image struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

// DataURL is the image as a data: URL.
func (i Image) DataURL() string { return "data:" + i.MIMEType + ";base64," + i.Data }

// ToolCall is one call the model asked for. Args is the raw JSON the model produced; it may be
// invalid JSON (the loop checks).
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// ToolSpec is one tool offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"` // a JSON Schema object
}

// Request is one model call.
type Request struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
	// NoToolCalls asks the model for a final answer without tool calls (the iteration cap).
	// Providers keep sending Tools where the API needs them to make sense of the history and set
	// the vendor's tool_choice "none", or omit them.
	NoToolCalls bool
	MaxTokens   int // 0 = provider default
}

// Usage is the token accounting of one or more model calls. InputTokens counts every input token,
// those read from the provider's prompt cache (CachedInputTokens) and those written to it
// (CacheWriteTokens, Anthropic) included; uncached input is InputTokens - CachedInputTokens -
// CacheWriteTokens. Cost is in US dollars, 0 (omitted) unless the user configured prices for the
// model.
type Usage struct {
	InputTokens       int     `json:"inputTokens"`
	CachedInputTokens int     `json:"cachedInputTokens"`
	CacheWriteTokens  int     `json:"cacheWriteTokens,omitempty"`
	OutputTokens      int     `json:"outputTokens"`
	Cost              float64 `json:"cost,omitempty"`
}

// Add returns u + o.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, CachedInputTokens: u.CachedInputTokens + o.CachedInputTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens, OutputTokens: u.OutputTokens + o.OutputTokens,
		Cost: u.Cost + o.Cost}
}

// Normalised stop reasons. Providers map their own values to these; unknown values pass through.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
)

// ChunkKind says which field of a Chunk is set.
type ChunkKind int

const (
	ChunkText      ChunkKind = iota // Text is a text delta
	ChunkToolCall                   // ToolCall is one complete call (deltas already accumulated)
	ChunkUsage                      // Usage for this model call (may come more than once; the last wins per field)
	ChunkStop                       // StopReason
	ChunkReasoning                  // Raw is one opaque reasoning item to keep in the history
)

// Chunk is one piece of a streamed model response.
type Chunk struct {
	Kind       ChunkKind
	Text       string
	ToolCall   ToolCall
	Usage      Usage
	StopReason string
	Raw        json.RawMessage
}

// ModelInfo is one model a provider offers.
type ModelInfo struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName,omitempty"`
	Created     int64  `json:"created,omitempty"` // Unix seconds, when the API says
}

// ModelLister is implemented by providers that can list their models (GET /v1/models).
type ModelLister interface {
	Models(ctx context.Context) ([]ModelInfo, error)
}

// Provider is a model API. Stream sends req and yields the response as it arrives: text deltas,
// then complete tool calls (in the order the model gave them), usage and the stop reason. An error
// ends the sequence; it carries the provider's own message. Cancelling ctx aborts the HTTP request
// and ends the sequence with ctx's error. A Provider is safe for concurrent use unless its
// documentation says otherwise.
type Provider interface {
	Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error]
}
