package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/session"
)

// MCP resources and prompts (issue 15): listing, reading, prompts, completion and subscriptions
// for the front ends, and the attached context and prompt invocation of a chat turn. The person
// asks for each of these directly (browsing, opening, attaching, running a prompt), so none of
// them passes the tool gate; what a server returns passes the tool results' caps (mcpbridge) and
// its names and descriptions are escaped here. Contents go to the front end as the server sent
// them (an editor shows them in a document) and to the model quoted and escaped.

// ResourceUI is implemented by a UI that shows news about servers' resources and prompts (a list
// changed, a subscribed resource was updated). It is optional: a UI without it hears nothing.
type ResourceUI interface {
	ResourcesChanged(ev mcpbridge.ResourceEvent)
}

// resourceEvent is the registry's OnResource.
func (a *App) resourceEvent(ev mcpbridge.ResourceEvent) {
	if ru, ok := a.ui.(ResourceUI); ok {
		ru.ResourcesChanged(ev)
	}
}

// bridgeError turns a registry error into what the front end reports: an unknown or not ready
// server is the request's fault; anything else is the server's, in one escaped line.
func (a *App) bridgeError(server string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if !a.knownServer(server) {
		return badRequest("unknown server %q", server)
	}
	for _, st := range a.registry.Servers() {
		if st.Name == server && st.State != mcpbridge.StateReady {
			return badRequest("server %q is %s", server, st.State)
		}
	}
	if errors.Is(err, mcpbridge.ErrNotSupported) {
		return badRequest("%s", safetext.Line(strings.TrimPrefix(err.Error(), "mcpbridge: ")))
	}
	return fmt.Errorf("host: %s", safetext.Line(strings.TrimPrefix(err.Error(), "mcpbridge: ")))
}

// Resources lists the resources and templates of every ready server, or of one ("" = all), with
// names and descriptions escaped.
func (a *App) Resources(ctx context.Context, server string) ([]mcpbridge.Resource, []mcpbridge.ResourceTemplate, error) {
	if server != "" && !a.knownServer(server) {
		return nil, nil, badRequest("unknown server %q", server)
	}
	rs, ts, err := a.registry.Resources(ctx, server)
	if err != nil {
		return nil, nil, a.bridgeError(server, err)
	}
	for i := range rs {
		r := &rs[i]
		r.Name, r.Title, r.MIMEType = safetext.Line(r.Name), safetext.Line(r.Title), safetext.Line(r.MIMEType)
		r.Description = safetext.Block(r.Description)
	}
	for i := range ts {
		t := &ts[i]
		t.Name, t.Title, t.MIMEType = safetext.Line(t.Name), safetext.Line(t.Title), safetext.Line(t.MIMEType)
		t.Description = safetext.Block(t.Description)
	}
	return rs, ts, nil
}

// resourceServer finds the server of uri when none is given: the one that lists it, else the one
// with a template whose fixed start it begins with. None or several is the request's fault.
func (a *App) resourceServer(ctx context.Context, uri string) (string, error) {
	rs, ts, err := a.registry.Resources(ctx, "")
	if err != nil {
		return "", err
	}
	found := map[string]bool{}
	for _, r := range rs {
		if r.URI == uri {
			found[r.Server] = true
		}
	}
	if len(found) == 0 {
		for _, t := range ts {
			fixed, _, _ := strings.Cut(t.URITemplate, "{")
			if fixed != "" && strings.HasPrefix(uri, fixed) {
				found[t.Server] = true
			}
		}
	}
	switch len(found) {
	case 1:
		for s := range found {
			return s, nil
		}
	case 0:
		return "", badRequest("no server offers %s: say which server", safetext.Line(uri))
	}
	return "", badRequest("several servers offer %s: say which server", safetext.Line(uri))
}

// ReadResource reads uri from server ("" = the server that offers it); subscribe also asks the
// server to tell of updates (ResourceUI), when it can.
func (a *App) ReadResource(ctx context.Context, server, uri string, subscribe bool) (mcpbridge.ReadResult, error) {
	if uri == "" {
		return mcpbridge.ReadResult{}, badRequest("uri is required")
	}
	if server == "" {
		s, err := a.resourceServer(ctx, uri)
		if err != nil {
			return mcpbridge.ReadResult{}, err
		}
		server = s
	}
	res, err := a.registry.ReadResource(ctx, server, uri)
	if err != nil {
		return mcpbridge.ReadResult{}, a.bridgeError(server, err)
	}
	for i := range res.Contents {
		res.Contents[i].MIMEType = safetext.Line(res.Contents[i].MIMEType)
	}
	if subscribe {
		if err := a.registry.Subscribe(ctx, server, uri); err != nil && !errors.Is(err, mcpbridge.ErrNotSupported) {
			a.log.Debug("host: subscribe", "server", server, "uri", uri, "error", err)
		}
	}
	return res, nil
}

// Unsubscribe stops updates about uri (the front end closed it). Not subscribed is not an error.
func (a *App) Unsubscribe(ctx context.Context, server, uri string) error {
	if server == "" || uri == "" {
		return badRequest("server and uri are required")
	}
	if err := a.registry.Unsubscribe(ctx, server, uri); err != nil && !errors.Is(err, mcpbridge.ErrNotSupported) {
		return a.bridgeError(server, err)
	}
	return nil
}

// Prompts lists the prompts of every ready server, or of one ("" = all), escaped.
func (a *App) Prompts(ctx context.Context, server string) ([]mcpbridge.Prompt, error) {
	if server != "" && !a.knownServer(server) {
		return nil, badRequest("unknown server %q", server)
	}
	ps, err := a.registry.Prompts(ctx, server)
	if err != nil {
		return nil, a.bridgeError(server, err)
	}
	for i := range ps {
		p := &ps[i]
		p.Name, p.Title = safetext.Line(p.Name), safetext.Line(p.Title)
		p.Description = safetext.Block(p.Description)
		args := make([]mcpbridge.PromptArgument, len(p.Arguments))
		for j, arg := range p.Arguments {
			args[j] = mcpbridge.PromptArgument{Name: safetext.Line(arg.Name), Description: safetext.Block(arg.Description), Required: arg.Required}
		}
		p.Arguments = args
	}
	return ps, nil
}

// GetPrompt runs a server's prompt with its arguments.
func (a *App) GetPrompt(ctx context.Context, server, name string, args map[string]string) (mcpbridge.PromptResult, error) {
	if server == "" || name == "" {
		return mcpbridge.PromptResult{}, badRequest("server and name are required")
	}
	res, err := a.registry.GetPrompt(ctx, server, name, args)
	if err != nil {
		return mcpbridge.PromptResult{}, a.bridgeError(server, err)
	}
	res.Description = safetext.Block(res.Description)
	for i := range res.Messages {
		res.Messages[i].Role = safetext.Line(res.Messages[i].Role)
	}
	return res, nil
}

// CompleteRequest asks for the values of one argument of a prompt (Prompt) or of a resource
// template's variable (Template), given what is typed (Value) and the other arguments (Context).
type CompleteRequest struct {
	Server   string
	Prompt   string
	Template string
	Argument string
	Value    string
	Context  map[string]string
}

// Complete returns the server's suggestions (escaped; none when the server cannot complete).
func (a *App) Complete(ctx context.Context, r CompleteRequest) ([]string, error) {
	if r.Server == "" || r.Argument == "" || (r.Prompt == "") == (r.Template == "") {
		return nil, badRequest("server, argument and one of prompt or template are required")
	}
	vals, err := a.registry.Complete(ctx, r.Server, mcpbridge.CompleteRef{Prompt: r.Prompt, URI: r.Template}, r.Argument, r.Value, r.Context)
	if err != nil {
		return nil, a.bridgeError(r.Server, err)
	}
	for i, v := range vals {
		vals[i] = safetext.Line(v)
	}
	return vals, nil
}

// ResourceRef names one resource to attach to a chat turn.
type ResourceRef struct {
	Server string // "" = the server that offers URI
	URI    string
}

// PromptCall is a server prompt run as (part of) a chat turn.
type PromptCall struct {
	Server    string
	Name      string
	Arguments map[string]string
}

// attachmentBudget is how much of one attached resource or prompt the model sees: the budget of
// one tool result.
const attachmentBudget = session.DefaultResultTokens * session.BytesPerToken

// chatContext reads the attached resources and runs the prompt, and returns the turn's user
// content: each quoted and escaped, then the person's own text.
func (a *App) chatContext(ctx context.Context, r ChatRequest) (string, error) {
	var b strings.Builder
	b.WriteString(r.viewContext)
	for _, ref := range r.Attach {
		res, err := a.ReadResource(ctx, ref.Server, ref.URI, false)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "<%s server=%q uri=%q>\n", session.FenceResource, res.Server, safetext.Line(session.Unfence(res.URI)))
		for _, c := range res.Contents {
			if c.Blob != "" || c.Text == "" && c.Bytes > 0 {
				fmt.Fprintf(&b, "> [binary content %s, %d bytes of base64: not shown]\n", safetext.Line(c.MIMEType), c.Bytes)
				continue
			}
			b.WriteString(quoteBudget(c.Text, c.Bytes))
		}
		b.WriteString("</" + session.FenceResource + ">\n")
	}
	if p := r.Invoke; p != nil {
		res, err := a.GetPrompt(ctx, p.Server, p.Name, p.Arguments)
		if err != nil {
			return "", err
		}
		name := safetext.Line(session.Unfence(p.Name))
		fmt.Fprintf(&b, "The user ran the prompt %q of MCP server %q; its messages follow, quoted:\n<%s server=%q name=%q>\n",
			name, p.Server, session.FencePrompt, p.Server, name)
		var msgs strings.Builder
		for _, m := range res.Messages {
			fmt.Fprintf(&msgs, "%s: %s\n", m.Role, m.Text)
		}
		b.WriteString(quoteBudget(msgs.String(), msgs.Len()))
		b.WriteString("</" + session.FencePrompt + ">\n")
		if strings.TrimSpace(r.Prompt) == "" {
			b.WriteString("Respond to the prompt above.\n")
		}
	}
	if b.Len() > 0 && strings.TrimSpace(r.Prompt) != "" {
		b.WriteString("\n")
	}
	b.WriteString(r.Prompt)
	return b.String(), nil
}

// quoteBudget quotes text (escaped, every line prefixed with "> " and every fence marker
// neutralised, so nothing in it can close the block or open another) cut to attachmentBudget with
// a note; total is its size before any cap.
func quoteBudget(text string, total int) string {
	shown := mcpbridge.Cut(text, attachmentBudget)
	lines := strings.Split(strings.TrimSuffix(safetext.Block(session.Unfence(shown)), "\n"), "\n")
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("> ")
		b.WriteString(l)
		b.WriteString("\n")
	}
	if len(shown) < len(text) || total > len(text) {
		fmt.Fprintf(&b, "> [cut for the context: %d bytes in all, %d shown]\n", max(total, len(text)), len(shown))
	}
	return b.String()
}
