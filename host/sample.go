package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/llm"
)

// Sampling: an MCP server asking to use the user's model (MCP sampling/createMessage). The user
// is asked first with a window/showMessageRequest naming the server, the model and a preview of
// what the server sends; "Allow this server" stops the asking for that server until the host
// exits. The model is the provider of switchboard.chat; the call has no tools.

// sample is mcpbridge.Options.Sample.
func (a *App) sample(ctx context.Context, req mcpbridge.SampleRequest) (mcpbridge.SampleResult, error) {
	if err := a.policySampling(ctx, req.Server); err != nil {
		return mcpbridge.SampleResult{}, err
	}
	a.stateMu.Lock()
	allowed := a.sampleOK[req.Server]
	a.stateMu.Unlock()
	if !allowed {
		if !a.askSample(ctx, req) {
			a.log.Info(fmt.Sprintf("host: MCP server '%s' asked to use the model; refused", req.Server))
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
	c, err := a.sessions.Complete(ctx, req.System, msgs, req.MaxTokens)
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
	a.log.Info(fmt.Sprintf("host: MCP server '%s' used the model (%d characters back)", req.Server, len(c.Text)))
	return mcpbridge.SampleResult{Model: c.Model, Text: c.Text, StopReason: stop}, nil
}

// askSample puts the question to the person; false when refused, dismissed or not answered in
// time. "Allow this server" stops the asking for that server until the host exits.
func (a *App) askSample(ctx context.Context, req mcpbridge.SampleRequest) bool {
	select {
	case <-a.gone:
		return false
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, a.gate.Timeout())
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
	q := a.questions.open(KindSampling, a.gate.Timeout(), func(q *Question) {
		q.Sample = req
		q.Text = fmt.Sprintf("MCP server '%s' asks to use your model (%s, %s): %s",
			req.Server, a.modelName(), limit, safetext.Bounded(last, previewLimit))
	})
	a.ui.Ask(q)
	o := q.wait(ctx, a.gone)
	if o.By != ByUser || !o.Reply.Allow {
		return false
	}
	if o.Reply.Always {
		a.stateMu.Lock()
		a.sampleOK[req.Server] = true
		a.stateMu.Unlock()
	}
	return true
}

// modelName is the configured model, for the question.
func (a *App) modelName() string {
	p := a.currentProvider()
	switch {
	case p.Model != "":
		return p.Model
	case p.Type != "":
		return p.Type
	}
	return "the configured model"
}
