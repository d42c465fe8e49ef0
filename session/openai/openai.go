// Package openai is a small hand-written client for the OpenAI Chat Completions API and the
// servers that speak it (Ollama, llama.cpp server, vLLM, LM Studio, OpenRouter, gateways): it
// streams (SSE), accumulates tool-call deltas by index, reports usage (stream_options
// include_usage, with the cached prompt tokens), keeps the request prefix (tools, earlier
// messages) byte-identical from step to step so OpenAI's automatic prompt cache applies, surfaces the server's error message, retries 408/409/429/5xx with backoff
// honouring Retry-After, and aborts the HTTP request when the context ends.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard/session/llm"
)

// Options configures a Provider.
type Options struct {
	Name    string // in error messages; default "openai"
	BaseURL string // e.g. https://api.openai.com/v1 or http://localhost:11434/v1; /chat/completions is appended
	Model   string
	APIKey  string // "" = no Authorization header (local servers)
	// MaxTokens is sent when > 0, under MaxTokensField ("max_tokens" when empty; OpenAI's newer
	// models want "max_completion_tokens").
	MaxTokens      int
	MaxTokensField string
	HTTPClient     *http.Client // nil = http.DefaultClient
	Retry          llm.Retry
}

// Provider implements llm.Provider. Safe for concurrent use.
type Provider struct {
	opts Options
}

var (
	_ llm.Provider    = (*Provider)(nil)
	_ llm.ModelLister = (*Provider)(nil)
)

// New returns a Provider.
func New(o Options) *Provider {
	if o.Name == "" {
		o.Name = "openai"
	}
	if o.MaxTokensField == "" {
		o.MaxTokensField = "max_tokens"
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	return &Provider{opts: o}
}

type fn struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function fn     `json:"function"`
}

type message struct {
	Role       string     `json:"role"`
	Content    any        `json:"content"` // *string, or []part for images
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolDef struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

func str(s string) *string { return &s }

// part is a content part of a user message: text, or an image as a data URL.
type part struct {
	Type     string    `json:"type"` // text, image_url
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

// body builds the request body.
func (p *Provider) body(req llm.Request) ([]byte, error) {
	msgs := make([]message, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, message{Role: "system", Content: str(req.System)})
	}
	// A tool message takes text only: the images of a round's tool results follow its tool
	// messages in one user message, each after a text part naming its call.
	var images []part
	flush := func() {
		if len(images) > 0 {
			msgs = append(msgs, message{Role: "user", Content: images})
			images = nil
		}
	}
	for _, m := range req.Messages {
		if m.Role != llm.RoleTool {
			flush()
		}
		switch m.Role {
		case llm.RoleUser:
			msgs = append(msgs, message{Role: "user", Content: str(m.Text)})
		case llm.RoleAssistant:
			am := message{Role: "assistant"}
			if m.Text != "" || len(m.ToolCalls) == 0 {
				am.Content = str(m.Text)
			}
			for _, c := range m.ToolCalls {
				args := string(c.Args)
				if args == "" {
					args = "{}"
				}
				am.ToolCalls = append(am.ToolCalls, toolCall{ID: c.ID, Type: "function", Function: fn{Name: c.Name, Arguments: args}})
			}
			msgs = append(msgs, am)
		case llm.RoleTool:
			msgs = append(msgs, message{Role: "tool", ToolCallID: m.ToolCallID, Content: str(m.Text)})
			if len(m.Images) > 0 {
				images = append(images, part{Type: "text", Text: "Images returned by tool call " + m.ToolCallID + ":"})
				for _, img := range m.Images {
					images = append(images, part{Type: "image_url", ImageURL: &imageURL{URL: img.DataURL()}})
				}
			}
		}
	}
	flush()
	body := map[string]any{
		"model":          p.opts.Model,
		"messages":       msgs,
		"stream":         true,
		"stream_options": map[string]bool{"include_usage": true},
	}
	if len(req.Tools) > 0 && !req.NoToolCalls {
		tools := make([]toolDef, len(req.Tools))
		for i, t := range req.Tools {
			tools[i].Type = "function"
			tools[i].Function.Name = t.Name
			tools[i].Function.Description = t.Description
			tools[i].Function.Parameters = t.InputSchema
		}
		body["tools"] = tools
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.opts.MaxTokens
	}
	if maxTokens > 0 {
		body[p.opts.MaxTokensField] = maxTokens
	}
	return json.Marshal(body)
}

// errorBody is OpenAI's error shape; compatible servers vary ({"error":"text"} in some).
func parseError(b []byte) (typ, msg string) {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &e) != nil {
		return "", ""
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(e.Error, &obj) == nil && (obj.Message != "" || obj.Type != "") {
		typ = obj.Type
		if typ == "" && len(obj.Code) > 0 && string(obj.Code) != "null" {
			typ = strings.Trim(string(obj.Code), `"`)
		}
		return typ, obj.Message
	}
	var s string
	if json.Unmarshal(e.Error, &s) == nil && s != "" {
		return "", s
	}
	return "", e.Message
}

type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type pending struct {
	id, name string
	args     strings.Builder
}

func stopReason(s string) string {
	switch s {
	case "stop":
		return llm.StopEndTurn
	case "tool_calls", "function_call":
		return llm.StopToolUse
	case "length":
		return llm.StopMaxTokens
	}
	return s
}

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		body, err := p.body(req)
		if err != nil {
			yield(llm.Chunk{}, fmt.Errorf("%s: %w", p.opts.Name, err))
			return
		}
		header := map[string]string{}
		if p.opts.APIKey != "" {
			header["Authorization"] = "Bearer " + p.opts.APIKey
		}
		resp, err := p.opts.Retry.PostStream(ctx, p.opts.HTTPClient, p.opts.Name, p.opts.BaseURL+"/chat/completions", body, header, parseError)
		if err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		defer resp.Body.Close()
		calls := map[int]*pending{}
		stop := ""
		stopped := false // the consumer stopped
		sawDone := false
		errStop := fmt.Errorf("stop")
		err = llm.ReadSSE(resp.Body, func(ev llm.SSEEvent) error {
			data := strings.TrimSpace(ev.Data)
			if data == "[DONE]" {
				sawDone = true
				return nil
			}
			if data == "" {
				return nil
			}
			var c chunk
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				return fmt.Errorf("%s: bad stream chunk: %v: %.200s", p.opts.Name, err, data)
			}
			if len(c.Error) > 0 && string(c.Error) != "null" {
				typ, msg := parseError([]byte(`{"error":` + string(c.Error) + `}`))
				return &llm.APIError{Provider: p.opts.Name, Type: typ, Message: msg}
			}
			for _, ch := range c.Choices {
				if ch.Index != 0 {
					continue
				}
				if ch.Delta.Content != nil && *ch.Delta.Content != "" {
					if !yield(llm.Chunk{Kind: llm.ChunkText, Text: *ch.Delta.Content}, nil) {
						stopped = true
						return errStop
					}
				}
				for _, tc := range ch.Delta.ToolCalls {
					pc := calls[tc.Index]
					if pc == nil {
						pc = &pending{}
						calls[tc.Index] = pc
					}
					if tc.ID != "" {
						pc.id = tc.ID
					}
					if tc.Function.Name != "" {
						pc.name += tc.Function.Name
					}
					pc.args.WriteString(tc.Function.Arguments)
				}
				if ch.FinishReason != nil && *ch.FinishReason != "" {
					stop = stopReason(*ch.FinishReason)
				}
			}
			if c.Usage != nil {
				if !yield(llm.Chunk{Kind: llm.ChunkUsage, Usage: llm.Usage{InputTokens: c.Usage.PromptTokens,
					CachedInputTokens: c.Usage.PromptTokensDetails.CachedTokens, OutputTokens: c.Usage.CompletionTokens}}, nil) {
					stopped = true
					return errStop
				}
			}
			return nil
		})
		if stopped {
			return
		}
		if err := llm.StreamEnd(ctx, p.opts.Name, err, sawDone || stop != "", "the response was complete"); err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		idx := make([]int, 0, len(calls))
		for i := range calls {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			pc := calls[i]
			args := strings.TrimSpace(pc.args.String())
			if args == "" {
				args = "{}"
			}
			if !yield(llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: pc.id, Name: pc.name, Args: json.RawMessage(args)}}, nil) {
				return
			}
		}
		if stop == "" {
			stop = llm.StopEndTurn
			if len(calls) > 0 {
				stop = llm.StopToolUse
			}
		}
		yield(llm.Chunk{Kind: llm.ChunkStop, StopReason: stop}, nil)
	}
}

// Models lists the models of GET <BaseURL>/models (OpenAI, Ollama, vLLM, LM Studio, llama.cpp and
// OpenRouter all answer it).
func (p *Provider) Models(ctx context.Context) ([]llm.ModelInfo, error) {
	var h map[string]string
	if p.opts.APIKey != "" {
		h = map[string]string{"Authorization": "Bearer " + p.opts.APIKey}
	}
	return p.opts.Retry.GetModels(ctx, p.opts.HTTPClient, p.opts.Name, p.opts.BaseURL+"/models", h, parseError)
}
