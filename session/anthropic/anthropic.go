// Package anthropic is a small hand-written client for the Anthropic Messages API: streaming
// (SSE: message_start, content_block_start/delta/stop with text_delta and input_json_delta,
// message_delta, message_stop, error), tool_use and tool_result blocks, prompt-cache breakpoints
// (cache_control on the tool list, the system prompt and the end of the conversation) with cache
// reads and writes reported in the usage, x-api-key and
// anthropic-version headers, the API's error messages, retries of 408/409/429/5xx/529 with
// backoff honouring Retry-After, and cancellation through the request context.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/session/llm"
)

// DefaultVersion is the anthropic-version header value.
const DefaultVersion = "2023-06-01"

// Options configures a Provider.
type Options struct {
	BaseURL    string // default https://api.anthropic.com; "/v1/messages" is appended ("/messages" when it ends in /v1)
	Model      string
	APIKey     string
	MaxTokens  int    // required by the API; default 4096
	Version    string // default DefaultVersion
	HTTPClient *http.Client
	Retry      llm.Retry
}

// Provider implements llm.Provider. Safe for concurrent use.
type Provider struct {
	opts      Options
	url       string
	modelsURL string
}

var (
	_ llm.Provider    = (*Provider)(nil)
	_ llm.ModelLister = (*Provider)(nil)
)

// New returns a Provider.
func New(o Options) *Provider {
	if o.BaseURL == "" {
		o.BaseURL = "https://api.anthropic.com"
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 4096
	}
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	base := strings.TrimRight(o.BaseURL, "/")
	v1 := base + "/v1"
	if strings.HasSuffix(base, "/v1") {
		v1 = base
	}
	return &Provider{opts: o, url: v1 + "/messages", modelsURL: v1 + "/models"}
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   any             `json:"content,omitempty"` // tool_result: a string, or []block with images
	Source    *imageSource    `json:"source,omitempty"`  // image
	IsError   bool            `json:"is_error,omitempty"`
	// CacheControl marks a prompt-cache breakpoint: everything up to this block is cached.
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"` // base64
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral is the breakpoint (5-minute cache). A request uses three of the four allowed: the
// tool list, the system prompt, and the end of the conversation.
var ephemeral = &cacheControl{Type: "ephemeral"}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type toolDef struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

func (p *Provider) body(req llm.Request) ([]byte, error) {
	var msgs []message
	add := func(role string, b ...block) {
		// Consecutive messages of one role are merged (tool results and a following user text
		// share one user message, as the API wants).
		if n := len(msgs); n > 0 && msgs[n-1].Role == role {
			msgs[n-1].Content = append(msgs[n-1].Content, b...)
			return
		}
		msgs = append(msgs, message{Role: role, Content: b})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleUser:
			add("user", block{Type: "text", Text: m.Text})
		case llm.RoleAssistant:
			var bs []block
			if m.Text != "" {
				bs = append(bs, block{Type: "text", Text: m.Text})
			}
			for _, c := range m.ToolCalls {
				in := c.Args
				if !json.Valid(in) || !bytes.HasPrefix(bytes.TrimSpace(in), []byte("{")) {
					in = json.RawMessage("{}") // the API only accepts an object here
				}
				bs = append(bs, block{Type: "tool_use", ID: c.ID, Name: c.Name, Input: in})
			}
			if len(bs) > 0 {
				add("assistant", bs...)
			}
		case llm.RoleTool:
			text := m.Text
			if text == "" {
				text = "(empty result)"
			}
			var content any = text
			if len(m.Images) > 0 {
				bs := []block{{Type: "text", Text: text}}
				for _, img := range m.Images {
					bs = append(bs, block{Type: "image", Source: &imageSource{Type: "base64", MediaType: img.MIMEType, Data: img.Data}})
				}
				content = bs
			}
			add("user", block{Type: "tool_result", ToolUseID: m.ToolCallID, Content: content, IsError: m.IsError})
		}
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.opts.MaxTokens
	}
	body := map[string]any{
		"model":      p.opts.Model,
		"max_tokens": maxTokens,
		"messages":   msgs,
		"stream":     true,
	}
	if n := len(msgs); n > 0 {
		last := msgs[n-1].Content
		last[len(last)-1].CacheControl = ephemeral
	}
	if req.System != "" {
		body["system"] = []block{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	}
	if len(req.Tools) > 0 {
		// Tools stay in the request even when no calls are wanted: the history's tool_use blocks
		// need them; tool_choice none forbids new calls.
		tools := make([]toolDef, len(req.Tools))
		for i, t := range req.Tools {
			tools[i] = toolDef{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
		}
		tools[len(tools)-1].CacheControl = ephemeral
		body["tools"] = tools
		if req.NoToolCalls {
			body["tool_choice"] = map[string]string{"type": "none"}
		}
	}
	return json.Marshal(body)
}

func parseError(b []byte) (typ, msg string) {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil {
		return "", ""
	}
	return e.Error.Type, e.Error.Message
}

type event struct {
	Type    string `json:"type"`
	Message struct {
		Usage usage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Text  string          `json:"text"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *usage `json:"usage"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// llm converts the API's usage: input_tokens counts only the uncached input.
func (u usage) llm() llm.Usage {
	return llm.Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		CachedInputTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens, OutputTokens: u.OutputTokens}
}

type toolUse struct {
	id, name string
	input    strings.Builder
}

func stopReason(s string) string {
	switch s {
	case "end_turn", "stop_sequence":
		return llm.StopEndTurn
	case "tool_use":
		return llm.StopToolUse
	case "max_tokens":
		return llm.StopMaxTokens
	}
	return s
}

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		body, err := p.body(req)
		if err != nil {
			yield(llm.Chunk{}, fmt.Errorf("anthropic: %w", err))
			return
		}
		resp, err := p.opts.Retry.PostStream(ctx, p.opts.HTTPClient, "anthropic", p.url, body,
			map[string]string{"x-api-key": p.opts.APIKey, "anthropic-version": p.opts.Version}, parseError)
		if err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		defer resp.Body.Close()
		var (
			uses     = map[int]*toolUse{}
			order    []int
			u        llm.Usage
			stop     string
			finished bool // message_stop seen
			stopped  bool // the consumer stopped
		)
		errStop := fmt.Errorf("stop")
		err = llm.ReadSSE(resp.Body, func(sse llm.SSEEvent) error {
			if strings.TrimSpace(sse.Data) == "" {
				return nil
			}
			var ev event
			if err := json.Unmarshal([]byte(sse.Data), &ev); err != nil {
				return fmt.Errorf("anthropic: bad stream event: %v: %.200s", err, sse.Data)
			}
			switch ev.Type {
			case "message_start":
				u = ev.Message.Usage.llm()
			case "content_block_start":
				if ev.ContentBlock.Type == "tool_use" {
					tu := &toolUse{id: ev.ContentBlock.ID, name: ev.ContentBlock.Name}
					uses[ev.Index] = tu
					order = append(order, ev.Index)
				} else if ev.ContentBlock.Type == "text" && ev.ContentBlock.Text != "" {
					if !yield(llm.Chunk{Kind: llm.ChunkText, Text: ev.ContentBlock.Text}, nil) {
						stopped = true
						return errStop
					}
				}
			case "content_block_delta":
				switch ev.Delta.Type {
				case "text_delta":
					if ev.Delta.Text != "" && !yield(llm.Chunk{Kind: llm.ChunkText, Text: ev.Delta.Text}, nil) {
						stopped = true
						return errStop
					}
				case "input_json_delta":
					if tu := uses[ev.Index]; tu != nil {
						tu.input.WriteString(ev.Delta.PartialJSON)
					}
				}
			case "message_delta":
				if ev.Delta.StopReason != "" {
					stop = stopReason(ev.Delta.StopReason)
				}
				if ev.Usage != nil { // cumulative; input fields only when the API repeats them
					nu := ev.Usage.llm()
					if nu.InputTokens > 0 {
						u.InputTokens, u.CachedInputTokens, u.CacheWriteTokens = nu.InputTokens, nu.CachedInputTokens, nu.CacheWriteTokens
					}
					u.OutputTokens = nu.OutputTokens
				}
			case "message_stop":
				finished = true
			case "error":
				return &llm.APIError{Provider: "anthropic", Type: ev.Error.Type, Message: ev.Error.Message}
			}
			return nil
		})
		if stopped {
			return
		}
		if err := llm.StreamEnd(ctx, "anthropic", err, finished, "message_stop"); err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		for _, i := range order {
			tu := uses[i]
			args := strings.TrimSpace(tu.input.String())
			if args == "" {
				args = "{}"
			}
			if !yield(llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: tu.id, Name: tu.name, Args: json.RawMessage(args)}}, nil) {
				return
			}
		}
		if !yield(llm.Chunk{Kind: llm.ChunkUsage, Usage: u}, nil) {
			return
		}
		if stop == "" {
			stop = llm.StopEndTurn
		}
		yield(llm.Chunk{Kind: llm.ChunkStop, StopReason: stop}, nil)
	}
}

// Models lists the models of GET /v1/models (all pages), newest first as the API gives them.
func (p *Provider) Models(ctx context.Context) ([]llm.ModelInfo, error) {
	return p.opts.Retry.GetModels(ctx, p.opts.HTTPClient, "anthropic", p.modelsURL+"?limit=1000",
		map[string]string{"x-api-key": p.opts.APIKey, "anthropic-version": p.opts.Version}, parseError)
}
