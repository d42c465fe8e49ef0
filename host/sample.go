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
// what the server sends; "Allow this server" stops the asking for that server's definition until
// the host exits. The consent is bound to the definition the person was asked about (its
// fingerprint, as trust and a workspace server's grants are): a definition edited since, another
// folder's server of the same name, or a server no longer configured asks again. The model is the
// provider of switchboard.chat; the call has no tools.

// sample is mcpbridge.Options.Sample.
func (a *App) sample(ctx context.Context, req mcpbridge.SampleRequest) (mcpbridge.SampleResult, error) {
	if err := a.policySampling(ctx, req.Server); err != nil {
		return mcpbridge.SampleResult{}, err
	}
	fp, allowed := a.sampleAllowed(req.Server)
	if !allowed {
		if !a.askSample(ctx, req, fp) {
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

// sampleAllowed reports whether the person allowed server's current definition to use the model
// ("Allow this server"), and that definition's fingerprint ("" when server is not configured: it
// is asked every time). The consent is per fingerprint, which covers the server's name and, for a
// workspace file's entry, its folder: a server of the same name defined elsewhere or otherwise
// inherits nothing. A workspace definition that is not trusted (now) has no consent either: it
// should not be running (its trust was revoked while it ran, another window's decision say).
func (a *App) sampleAllowed(server string) (fp string, ok bool) {
	cfg, configured := a.configFor(server)
	if !configured {
		return "", false
	}
	fp = cfg.Fingerprint()
	a.stateMu.Lock()
	ok = a.sampleOK[fp]
	a.stateMu.Unlock()
	if ok && cfg.WorkspaceOnly && !a.trusted(cfg) {
		ok = false
	}
	return fp, ok
}

// askSample puts the question to the person; false when refused, dismissed or not answered in
// time. "Allow this server" stops the asking for the definition with fingerprint fp (the one
// current when the request came; "" remembers nothing) until the host exits.
func (a *App) askSample(ctx context.Context, req mcpbridge.SampleRequest, fp string) bool {
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
	if o.Reply.Always && fp != "" {
		a.stateMu.Lock()
		a.sampleOK[fp] = true
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
