// Package responses is a small hand-written client for the OpenAI Responses API (POST
// /v1/responses), provider type "openai-responses": streaming (SSE: response.output_text.delta,
// response.output_item.added/done, response.function_call_arguments.delta/done,
// response.completed, response.incomplete, response.failed, error), function tools and parallel
// calls, store false with the reasoning items' encrypted content asked for and carried back
// between steps (llm.Message.Reasoning) so a reasoning model keeps its chain without OpenAI
// storing the conversation, a reasoning effort setting, usage with cached input tokens, the
// API's error messages, the same retries as the other providers (llm.Retry), and cancellation
// through the request context. Models lists GET /v1/models.
package responses

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/session/llm"
)

// Options configures a Provider.
type Options struct {
	BaseURL string // default https://api.openai.com/v1; /responses is appended
	Model   string
	APIKey  string
	// MaxTokens is max_output_tokens (reasoning included) when > 0.
	MaxTokens int
	// ReasoningEffort is reasoning.effort (minimal, low, medium, high); "" = not sent (the
	// model's default; models without reasoning reject the field).
	ReasoningEffort string
	HTTPClient      *http.Client
	Retry           llm.Retry
}

// Provider implements llm.Provider and llm.ModelLister. Safe for concurrent use.
type Provider struct {
	opts Options
}

var (
	_ llm.Provider    = (*Provider)(nil)
	_ llm.ModelLister = (*Provider)(nil)
)

// New returns a Provider.
func New(o Options) *Provider {
	if o.BaseURL == "" {
		o.BaseURL = "https://api.openai.com/v1"
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	return &Provider{opts: o}
}

func (p *Provider) headers() map[string]string {
	if p.opts.APIKey == "" {
		return nil
	}
	return map[string]string{"Authorization": "Bearer " + p.opts.APIKey}
}

// Input items. Field order is fixed (structs, not maps) so that the bytes of earlier items are
// the same at every step (prompt caching).
type inputMessage struct {
	Type    string `json:"type"` // message
	Role    string `json:"role"`
	Content string `json:"content"`
}

type functionCall struct {
	Type      string `json:"type"` // function_call
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionCallOutput struct {
	Type   string `json:"type"` // function_call_output
	CallID string `json:"call_id"`
	Output any    `json:"output"` // a string, or []outputPart when the result has images
}

// outputPart is one item of a function_call_output's output list.
type outputPart struct {
	Type     string `json:"type"` // input_text, input_image
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

type toolDef struct {
	Type        string          `json:"type"` // function
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"` // false: MCP schemas are not all strict-mode schemas
}

type reasoning struct {
	Effort string `json:"effort"`
}

type request struct {
	Model             string     `json:"model"`
	Instructions      string     `json:"instructions,omitempty"`
	Input             []any      `json:"input"`
	Tools             []toolDef  `json:"tools,omitempty"`
	ToolChoice        string     `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool      `json:"parallel_tool_calls,omitempty"`
	Reasoning         *reasoning `json:"reasoning,omitempty"`
	MaxOutputTokens   int        `json:"max_output_tokens,omitempty"`
	Store             bool       `json:"store"`
	Include           []string   `json:"include"`
	Stream            bool       `json:"stream"`
}

func (p *Provider) body(req llm.Request) ([]byte, error) {
	in := make([]any, 0, len(req.Messages)+4)
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleUser:
			in = append(in, inputMessage{Type: "message", Role: "user", Content: m.Text})
		case llm.RoleAssistant:
			for _, r := range m.Reasoning {
				if json.Valid(r) {
					in = append(in, r) // as the API sent it
				}
			}
			if m.Text != "" {
				in = append(in, inputMessage{Type: "message", Role: "assistant", Content: m.Text})
			}
			for _, c := range m.ToolCalls {
				args := string(c.Args)
				if args == "" {
					args = "{}"
				}
				in = append(in, functionCall{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: args})
			}
		case llm.RoleTool:
			var out any = m.Text
			if len(m.Images) > 0 {
				parts := []outputPart{{Type: "input_text", Text: m.Text}}
				for _, img := range m.Images {
					parts = append(parts, outputPart{Type: "input_image", ImageURL: img.DataURL()})
				}
				out = parts
			}
			in = append(in, functionCallOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: out})
		}
	}
	r := request{Model: p.opts.Model, Instructions: req.System, Input: in, Store: false,
		Include: []string{"reasoning.encrypted_content"}, Stream: true}
	if len(req.Tools) > 0 {
		// Tools stay when no calls are wanted: the history's calls refer to them.
		r.Tools = make([]toolDef, len(req.Tools))
		for i, t := range req.Tools {
			r.Tools[i] = toolDef{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.InputSchema}
		}
		if req.NoToolCalls {
			r.ToolChoice = "none"
		} else {
			yes := true
			r.ParallelToolCalls = &yes
		}
	}
	if p.opts.ReasoningEffort != "" {
		r.Reasoning = &reasoning{Effort: p.opts.ReasoningEffort}
	}
	r.MaxOutputTokens = req.MaxTokens
	if r.MaxOutputTokens <= 0 {
		r.MaxOutputTokens = p.opts.MaxTokens
	}
	return json.Marshal(r)
}

// parseError reads OpenAI's {"error":{"message","type","code"}}.
func parseError(b []byte) (typ, msg string) {
	var e struct {
		Error struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil {
		return "", ""
	}
	typ = e.Error.Type
	if c := strings.Trim(string(e.Error.Code), `"`); c != "" && c != "null" {
		typ = c
	}
	return typ, e.Error.Message
}

type item struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type apiUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens int `json:"output_tokens"`
}

type event struct {
	Type        string          `json:"type"`
	Delta       string          `json:"delta"`
	ItemID      string          `json:"item_id"`
	OutputIndex int             `json:"output_index"`
	Arguments   string          `json:"arguments"`
	Item        json.RawMessage `json:"item"`
	Response    struct {
		Status            string    `json:"status"`
		Usage             *apiUsage `json:"usage"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"response"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

type call struct {
	id, name string
	args     strings.Builder
	final    *string // the arguments of output_item.done / function_call_arguments.done
}

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		body, err := p.body(req)
		if err != nil {
			yield(llm.Chunk{}, fmt.Errorf("openai-responses: %w", err))
			return
		}
		resp, err := p.opts.Retry.PostStream(ctx, p.opts.HTTPClient, "openai-responses", p.opts.BaseURL+"/responses", body,
			p.headers(), parseError)
		if err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		defer resp.Body.Close()
		var (
			calls    = map[string]*call{} // by item id
			order    []string
			usage    llm.Usage
			stop     string
			finished bool
			stopped  bool
		)
		errStop := fmt.Errorf("stop")
		emit := func(c llm.Chunk) error {
			if !yield(c, nil) {
				stopped = true
				return errStop
			}
			return nil
		}
		getCall := func(id string) *call {
			c := calls[id]
			if c == nil {
				c = &call{}
				calls[id] = c
				order = append(order, id)
			}
			return c
		}
		err = llm.ReadSSE(resp.Body, func(sse llm.SSEEvent) error {
			data := strings.TrimSpace(sse.Data)
			if data == "" || data == "[DONE]" {
				return nil
			}
			var ev event
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				return fmt.Errorf("openai-responses: bad stream event: %v: %.200s", err, data)
			}
			switch ev.Type {
			case "response.output_text.delta", "response.refusal.delta": // a refusal is the answer's text
				if ev.Delta != "" {
					return emit(llm.Chunk{Kind: llm.ChunkText, Text: ev.Delta})
				}
			case "response.output_item.added", "response.output_item.done":
				var it item
				if json.Unmarshal(ev.Item, &it) != nil {
					return nil
				}
				switch it.Type {
				case "function_call":
					c := getCall(it.ID)
					if it.CallID != "" {
						c.id = it.CallID
					}
					if it.Name != "" {
						c.name = it.Name
					}
					if ev.Type == "response.output_item.done" {
						a := it.Arguments
						c.final = &a
					}
				case "reasoning":
					if ev.Type == "response.output_item.done" {
						return emit(llm.Chunk{Kind: llm.ChunkReasoning, Raw: append(json.RawMessage(nil), ev.Item...)})
					}
				}
			case "response.function_call_arguments.delta":
				getCall(ev.ItemID).args.WriteString(ev.Delta)
			case "response.function_call_arguments.done":
				a := ev.Arguments
				getCall(ev.ItemID).final = &a
			case "response.completed":
				finished = true
				if u := ev.Response.Usage; u != nil {
					usage = llm.Usage{InputTokens: u.InputTokens, CachedInputTokens: u.InputTokensDetails.CachedTokens, OutputTokens: u.OutputTokens}
				}
			case "response.incomplete":
				finished = true
				stop = llm.StopMaxTokens
				if d := ev.Response.IncompleteDetails; d != nil && d.Reason != "" && d.Reason != "max_output_tokens" {
					stop = d.Reason
				}
				if u := ev.Response.Usage; u != nil {
					usage = llm.Usage{InputTokens: u.InputTokens, CachedInputTokens: u.InputTokensDetails.CachedTokens, OutputTokens: u.OutputTokens}
				}
			case "response.failed":
				e := ev.Response.Error
				if e == nil {
					return &llm.APIError{Provider: "openai-responses", Message: "the response failed"}
				}
				return &llm.APIError{Provider: "openai-responses", Type: e.Code, Message: e.Message}
			case "error":
				return &llm.APIError{Provider: "openai-responses", Type: ev.Code, Message: ev.Message}
			}
			return nil
		})
		if stopped {
			return
		}
		if err := llm.StreamEnd(ctx, "openai-responses", err, finished, "response.completed"); err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		n := 0
		for _, id := range order {
			c := calls[id]
			if c.name == "" {
				continue
			}
			args := c.args.String()
			if c.final != nil {
				args = *c.final
			}
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			n++
			if !yield(llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: c.id, Name: c.name, Args: json.RawMessage(args)}}, nil) {
				return
			}
		}
		if !yield(llm.Chunk{Kind: llm.ChunkUsage, Usage: usage}, nil) {
			return
		}
		if stop == "" {
			stop = llm.StopEndTurn
			if n > 0 {
				stop = llm.StopToolUse
			}
		}
		yield(llm.Chunk{Kind: llm.ChunkStop, StopReason: stop}, nil)
	}
}

// Models lists the models of GET /models.
func (p *Provider) Models(ctx context.Context) ([]llm.ModelInfo, error) {
	return p.opts.Retry.GetModels(ctx, p.opts.HTTPClient, "openai-responses", p.opts.BaseURL+"/models", p.headers(), parseError)
}
