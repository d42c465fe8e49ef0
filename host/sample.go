package host

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"

	"go.lsp.dev/protocol"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/llm"
)

// Sampling: an MCP server asking to use the user's model (MCP sampling/createMessage). The user
// is asked first with a window/showMessageRequest naming the server, the model and a preview of
// what the server sends; "Allow this server" stops the asking for that server until the host
// exits. The model is the provider of switchboard.chat; the call has no tools.

// Titles of the sampling prompt: none is an approval's or a trust prompt's title, so an editor
// that routes those by title never mistakes this prompt for one.
const (
	TitleSampleOnce   = "Allow this time"
	TitleSampleServer = "Allow this server"
	TitleSampleRefuse = "Refuse"
)

type sampling struct {
	s *server

	mu      sync.Mutex
	allowed map[string]bool // servers the user allowed for this session
}

func newSampling(s *server) *sampling { return &sampling{s: s, allowed: map[string]bool{}} }

// sample is mcpbridge.Options.Sample.
func (sp *sampling) sample(ctx context.Context, req mcpbridge.SampleRequest) (mcpbridge.SampleResult, error) {
	s := sp.s
	sp.mu.Lock()
	allowed := sp.allowed[req.Server]
	sp.mu.Unlock()
	if !allowed {
		ok, err := sp.ask(ctx, req)
		if err != nil {
			return mcpbridge.SampleResult{}, err
		}
		if !ok {
			s.log.Info(fmt.Sprintf("host: MCP server '%s' asked to use the model; refused", req.Server))
			return mcpbridge.SampleResult{}, mcpbridge.ErrSampleRejected
		}
	}
	msgs := make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		role := llm.RoleUser
		if m.Role == "assistant" {
			role = llm.RoleAssistant
		}
		msgs[i] = llm.Message{Role: role, Text: m.Text}
	}
	c, err := s.sessions.Complete(ctx, req.System, msgs, req.MaxTokens)
	if errors.Is(err, session.ErrNoProvider) {
		return mcpbridge.SampleResult{}, fmt.Errorf("Switchboard has no usable model (settings: provider): %w", err)
	}
	if err != nil {
		return mcpbridge.SampleResult{}, fmt.Errorf("the model failed: %w", err)
	}
	stop := c.StopReason
	switch stop {
	case llm.StopEndTurn, "":
		stop = "endTurn"
	case llm.StopMaxTokens:
		stop = "maxTokens"
	}
	s.log.Info(fmt.Sprintf("host: MCP server '%s' used the model (%d characters back)", req.Server, len(c.Text)))
	return mcpbridge.SampleResult{Model: c.Model, Text: c.Text, StopReason: stop}, nil
}

// ask puts the question to the user; false when refused, dismissed or not answered in time.
func (sp *sampling) ask(ctx context.Context, req mcpbridge.SampleRequest) (bool, error) {
	s := sp.s
	if s.isGone() {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.questionTimeout())
	defer cancel()
	last := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			last = req.Messages[i].Text
			break
		}
	}
	limit := "no token limit"
	if req.MaxTokens > 0 {
		limit = fmt.Sprintf("up to %d tokens", req.MaxTokens)
	}
	msg := fmt.Sprintf("MCP server '%s' asks to use your model (%s, %s): %s",
		req.Server, s.modelName(), limit, safetext.Bounded(last, previewLimit))
	title, ok := s.askButtons(ctx, protocol.MessageTypeInfo, msg, TitleSampleOnce, TitleSampleServer, TitleSampleRefuse)
	switch {
	case !ok, title == TitleSampleRefuse:
		return false, nil
	case title == TitleSampleServer:
		sp.mu.Lock()
		sp.allowed[req.Server] = true
		sp.mu.Unlock()
	}
	return true, nil
}

// modelName is the configured model, for the prompt.
func (s *server) modelName() string {
	s.stateMu.Lock()
	p := s.provider
	s.stateMu.Unlock()
	switch {
	case p.Model != "":
		return p.Model
	case p.Type != "":
		return p.Type
	}
	return "the configured model"
}
