package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/oauth"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// MCP resources, resource templates, prompts and completion (issue 15). Lists are fetched on
// demand (every page, following cursors), kept per connection and dropped when the server sends
// notifications/resources/list_changed or notifications/prompts/list_changed; the next listing
// fetches them again. Reads and prompts pass the same caps as tool results (cap.go).

// Resource is one entry of resources/list.
type Resource struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// ResourceTemplate is one entry of resources/templates/list; URITemplate is an RFC 6570 template.
type ResourceTemplate struct {
	Server      string `json:"server"`
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// Prompt is one entry of prompts/list.
type Prompt struct {
	Server      string           `json:"server"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// ResourceContent is one entry of a resources/read result. Text is capped like a tool result's
// text; a binary entry keeps its base64 Blob (bounded by MaxResultTotal in all).
type ResourceContent struct {
	URI       string `json:"uri"`
	MIMEType  string `json:"mimeType,omitempty"`
	Text      string `json:"text,omitempty"`
	Blob      string `json:"blob,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Bytes     int    `json:"bytes"` // the text's (or the base64 blob's) size before the cap
}

// ReadResult is the outcome of resources/read.
type ReadResult struct {
	Server   string            `json:"server"`
	URI      string            `json:"uri"`
	Contents []ResourceContent `json:"contents"`
}

// PromptMessage is one message of a prompts/get result. Text is the text of a text block (capped);
// other blocks (images, embedded resources) are described in Text and kept in Content.
type PromptMessage struct {
	Role    string          `json:"role"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"`
}

// PromptResult is the outcome of prompts/get.
type PromptResult struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Truncated   bool            `json:"truncated,omitempty"`
}

// CompleteRef says what completion/complete completes: a prompt's argument (Prompt set) or a
// resource template's variable (URI set: the template).
type CompleteRef struct {
	Prompt string
	URI    string
}

// MaxCompletions bounds the values of one completion (the protocol's own limit).
const MaxCompletions = 100

// ErrNotSupported is returned when a server does not offer what was asked (no resources, prompts
// or completions capability).
var ErrNotSupported = errors.New("not supported by the server")

// lists is one connection's cached resources, templates and prompts.
type lists struct {
	// mu guards everything below.
	mu        sync.Mutex
	resources []Resource // nil = not fetched (or dropped by list_changed)
	templates []ResourceTemplate
	prompts   []Prompt
	// subscribed are the URIs this connection subscribed to.
	subscribed map[string]bool
}

// dropResources forgets the resource lists (notifications/resources/list_changed). It runs on the
// transport's read goroutine and does not call the server.
func (l *lists) dropResources() {
	l.mu.Lock()
	l.resources, l.templates = nil, nil
	l.mu.Unlock()
}

func (l *lists) dropPrompts() {
	l.mu.Lock()
	l.prompts = nil
	l.mu.Unlock()
}

// maxListed bounds how many entries one list keeps: a server paging forever is cut off.
const maxListed = 10000

// listAll runs a paged list method and decodes every page's items under key.
func listAll[T any](ctx context.Context, c *conn, method, key string) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	cursor := ""
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := c.request(ctx, method, params)
		if err != nil {
			return nil, err
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("malformed %s result: %w", method, err)
		}
		var items []T
		if b, ok := page[key]; ok {
			if err := json.Unmarshal(b, &items); err != nil {
				return nil, fmt.Errorf("malformed %s result: %w", method, err)
			}
		}
		all = append(all, items...)
		if len(all) > maxListed {
			return nil, fmt.Errorf("%s: over %d entries", method, maxListed)
		}
		var next string
		if b, ok := page["nextCursor"]; ok {
			_ = json.Unmarshal(b, &next) // ignore error: a malformed cursor ends the list
		}
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("%s repeats a cursor", method)
		}
		seen[next] = true
		cursor = next
	}
}

// readyConn returns the connection of a ready server.
func (r *Registry) readyConn(server string) (*conn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.servers[server]
	if e == nil {
		return nil, fmt.Errorf("mcpbridge: unknown server %q", server)
	}
	if e.state != StateReady || e.conn == nil {
		return nil, fmt.Errorf("mcpbridge: server %q is %s", server, e.state)
	}
	return e.conn, nil
}

// readyConns returns the connections of every ready server (server "" ) or of one, by name.
func (r *Registry) readyConns(server string) (map[string]*conn, error) {
	if server != "" {
		c, err := r.readyConn(server)
		if err != nil {
			return nil, err
		}
		return map[string]*conn{server: c}, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]*conn{}
	for n, e := range r.servers {
		if e.state == StateReady && e.conn != nil {
			out[n] = e.conn
		}
	}
	return out, nil
}

// requestTimeout bounds one request of c (its call timeout).
func requestTimeout(ctx context.Context, c *conn) (context.Context, context.CancelFunc) {
	t := c.cfg.CallTimeout
	if t <= 0 {
		t = config.DefaultCallTimeout
	}
	return context.WithTimeout(ctx, t)
}

// Resources lists the resources and resource templates of every ready server, or of one ("" =
// all), sorted by server then URI. A server without the resources capability has none; a server
// whose listing fails is left out (and named in the error when it was asked for alone).
func (r *Registry) Resources(ctx context.Context, server string) ([]Resource, []ResourceTemplate, error) {
	conns, err := r.readyConns(server)
	if err != nil {
		return nil, nil, err
	}
	res, tmpl := []Resource{}, []ResourceTemplate{}
	for name, c := range conns {
		rs, ts, err := c.resourceLists(ctx, name)
		if err != nil {
			if server != "" || ctx.Err() != nil {
				return nil, nil, fmt.Errorf("mcpbridge: resources of %q: %w", name, r.redactErr(c, err))
			}
			r.log.Warn("mcp resources/list failed", "server", name, "err", r.redactErr(c, err))
			continue
		}
		res = append(res, rs...)
		tmpl = append(tmpl, ts...)
	}
	sort.SliceStable(res, func(i, j int) bool {
		return res[i].Server < res[j].Server || res[i].Server == res[j].Server && res[i].URI < res[j].URI
	})
	sort.SliceStable(tmpl, func(i, j int) bool {
		return tmpl[i].Server < tmpl[j].Server || tmpl[i].Server == tmpl[j].Server && tmpl[i].URITemplate < tmpl[j].URITemplate
	})
	return res, tmpl, nil
}

func (r *Registry) redactErr(c *conn, err error) error {
	return errors.New(c.written.Redact(oauth.PlainHTTPError(err).Error(), r.opts.Getenv))
}

func (c *conn) resourceLists(ctx context.Context, name string) ([]Resource, []ResourceTemplate, error) {
	if c.caps.Resources == nil {
		return nil, nil, nil
	}
	c.lists.mu.Lock()
	rs, ts := c.lists.resources, c.lists.templates
	c.lists.mu.Unlock()
	if rs != nil && ts != nil {
		return rs, ts, nil
	}
	ctx, cancel := requestTimeout(ctx, c)
	defer cancel()
	rs, err := listAll[Resource](ctx, c, string(mcp.MethodResourcesList), "resources")
	if err != nil {
		return nil, nil, err
	}
	ts, err = listAll[ResourceTemplate](ctx, c, string(mcp.MethodResourcesTemplatesList), "resourceTemplates")
	if err != nil {
		// Templates are optional: a server that has none may not implement the method.
		if !errors.Is(err, mcp.ErrMethodNotFound) {
			return nil, nil, err
		}
		ts = nil
	}
	rs, ts = orEmpty(rs), orEmpty(ts)
	for i := range rs {
		rs[i].Server = name
	}
	for i := range ts {
		ts[i].Server = name
	}
	c.lists.mu.Lock()
	c.lists.resources, c.lists.templates = rs, ts
	c.lists.mu.Unlock()
	return rs, ts, nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Prompts lists the prompts of every ready server, or of one ("" = all), sorted by server then
// name.
func (r *Registry) Prompts(ctx context.Context, server string) ([]Prompt, error) {
	conns, err := r.readyConns(server)
	if err != nil {
		return nil, err
	}
	out := []Prompt{}
	for name, c := range conns {
		ps, err := c.promptList(ctx, name)
		if err != nil {
			if server != "" || ctx.Err() != nil {
				return nil, fmt.Errorf("mcpbridge: prompts of %q: %w", name, r.redactErr(c, err))
			}
			r.log.Warn("mcp prompts/list failed", "server", name, "err", r.redactErr(c, err))
			continue
		}
		out = append(out, ps...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Server < out[j].Server || out[i].Server == out[j].Server && out[i].Name < out[j].Name
	})
	return out, nil
}

func (c *conn) promptList(ctx context.Context, name string) ([]Prompt, error) {
	if c.caps.Prompts == nil {
		return nil, nil
	}
	c.lists.mu.Lock()
	ps := c.lists.prompts
	c.lists.mu.Unlock()
	if ps != nil {
		return ps, nil
	}
	ctx, cancel := requestTimeout(ctx, c)
	defer cancel()
	ps, err := listAll[Prompt](ctx, c, string(mcp.MethodPromptsList), "prompts")
	if err != nil {
		return nil, err
	}
	ps = orEmpty(ps)
	for i := range ps {
		ps[i].Server = name
	}
	c.lists.mu.Lock()
	c.lists.prompts = ps
	c.lists.mu.Unlock()
	return ps, nil
}

// roundTrip sends req and waits for its response; over stdio it keeps the frame (fr) so that a
// string the reader shortened is known (stdio/frame.go); fr is nil over HTTP.
func (c *conn) roundTrip(ctx context.Context, req transport.JSONRPCRequest) (resp *transport.JSONRPCResponse, fr *stdio.Frame, err error) {
	if s := c.stdio(); s != nil {
		sr, err := s.RoundTrip(ctx, req)
		if sr != nil {
			return &sr.JSONRPCResponse, &sr.Frame, err
		}
		return nil, nil, err
	}
	resp, err = c.tr.SendRequest(ctx, req)
	return resp, nil, err
}

// rawRequest sends one request and returns its raw result; over stdio it keeps the frame so that
// a string the reader shortened is known (stdio/frame.go).
func (c *conn) rawRequest(ctx context.Context, method string, params any) ([]byte, *stdio.Frame, error) {
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: c.nextID(), Method: method, Params: params}
	if err := c.decorate(&req); err != nil { // era.go
		return nil, nil, err
	}
	resp, fr, err := c.roundTrip(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			c.cancelled(req.ID, ctx.Err())
		}
		return nil, nil, err
	}
	if resp.Error != nil {
		return nil, nil, resp.Error.AsError()
	}
	if fr == nil {
		fr = &stdio.Frame{}
	}
	return resp.Result, fr, nil
}

// ReadResource runs resources/read on server. Each text is capped at MaxResultText (with the
// truncation marker), their sum at MaxResultText too, and the whole result at MaxResultTotal.
func (r *Registry) ReadResource(ctx context.Context, server, uri string) (ReadResult, error) {
	c, err := r.readyConn(server)
	if err != nil {
		return ReadResult{}, err
	}
	if c.caps.Resources == nil {
		return ReadResult{}, fmt.Errorf("mcpbridge: read %s: resources %w", server, ErrNotSupported)
	}
	ctx, cancel := requestTimeout(ctx, c)
	defer cancel()
	raw, fr, err := c.requestWithInput(ctx, string(mcp.MethodResourcesRead), map[string]any{"uri": uri}) // mrtr.go
	if err != nil {
		return ReadResult{}, fmt.Errorf("mcpbridge: read %s: %w", server, r.redactErr(c, err))
	}
	res, err := parseReadResult(raw, fr)
	if err != nil {
		return ReadResult{}, fmt.Errorf("mcpbridge: read %s: %w", server, err)
	}
	res.Server, res.URI = server, uri
	return res, nil
}

type wireContents struct {
	URI      string         `json:"uri"`
	MIMEType string         `json:"mimeType"`
	Text     stdio.AliasRaw `json:"text"`
	Blob     stdio.AliasRaw `json:"blob"`
}

// parseReadResult caps a resources/read result (see ReadResource).
func parseReadResult(raw []byte, fr *stdio.Frame) (ReadResult, error) {
	var w struct {
		Contents []wireContents `json:"contents"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return ReadResult{}, fmt.Errorf("malformed resources/read result: %w", err)
	}
	out := ReadResult{Contents: make([]ResourceContent, 0, len(w.Contents))}
	room, size, usedElisions := MaxResultText, 0, 0
	for _, wc := range w.Contents {
		rc := ResourceContent{URI: wc.URI, MIMEType: wc.MIMEType}
		switch {
		case len(wc.Text) > 0 && string(wc.Text) != "null":
			cs, err := decodeCappedString(wc.Text, MaxResultText+utf8Slack)
			if err != nil {
				return ReadResult{}, errors.New("malformed text contents")
			}
			if n, ok := fr.ElidedLen(wc.Text); ok {
				cs.total = n
				usedElisions++
			}
			rc.Text, rc.Truncated = capText(cs.prefix, cs.total, max(room, 0))
			rc.Bytes = cs.total
			room -= min(cs.total, room)
			size += len(rc.Text)
		case len(wc.Blob) > 0 && string(wc.Blob) != "null":
			if _, ok := fr.ElidedLen(wc.Blob); ok {
				return ReadResult{}, fmt.Errorf("resource too large: a binary content is over %d bytes (limit %d in all)", stdio.ElideAt, MaxResultTotal)
			}
			var b string
			if err := json.Unmarshal(wc.Blob, &b); err != nil {
				return ReadResult{}, errors.New("malformed blob contents")
			}
			rc.Blob, rc.Bytes = b, len(b)
			size += len(b)
		}
		if size > MaxResultTotal {
			return ReadResult{}, fmt.Errorf("resource too large: over %d bytes (limit %d)", size, MaxResultTotal)
		}
		out.Contents = append(out.Contents, rc)
	}
	if len(fr.Elided) > usedElisions {
		return ReadResult{}, fmt.Errorf("resource too large: a value besides text is over %d bytes (limit %d in all)", stdio.ElideAt, MaxResultTotal)
	}
	return out, nil
}

// GetPrompt runs prompts/get with args. Text blocks are capped like tool results (MaxResultText
// for all messages together); other blocks are kept within MaxResultTotal.
func (r *Registry) GetPrompt(ctx context.Context, server, name string, args map[string]string) (PromptResult, error) {
	c, err := r.readyConn(server)
	if err != nil {
		return PromptResult{}, err
	}
	if c.caps.Prompts == nil {
		return PromptResult{}, fmt.Errorf("mcpbridge: prompt %s: prompts %w", server, ErrNotSupported)
	}
	if args == nil {
		args = map[string]string{}
	}
	ctx, cancel := requestTimeout(ctx, c)
	defer cancel()
	raw, fr, err := c.requestWithInput(ctx, string(mcp.MethodPromptsGet), map[string]any{"name": name, "arguments": args}) // mrtr.go
	if err != nil {
		return PromptResult{}, fmt.Errorf("mcpbridge: prompt %s: %w", server, r.redactErr(c, err))
	}
	res, err := parsePromptResult(raw, fr)
	if err != nil {
		return PromptResult{}, fmt.Errorf("mcpbridge: prompt %s: %w", server, err)
	}
	res.Server, res.Name = server, name
	return res, nil
}

func parsePromptResult(raw []byte, fr *stdio.Frame) (PromptResult, error) {
	var w struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string    `json:"role"`
			Content wireBlock `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return PromptResult{}, fmt.Errorf("malformed prompts/get result: %w", err)
	}
	desc, _ := Cap(w.Description)
	out := PromptResult{Description: desc, Messages: make([]PromptMessage, 0, len(w.Messages))}
	room, size, usedElisions := MaxResultText, 0, 0
	for _, m := range w.Messages {
		pm := PromptMessage{Role: m.Role}
		blk := m.Content
		if blk.typ == "text" {
			cs, err := decodeCappedString(blk.text, MaxResultText+utf8Slack)
			if err != nil {
				return PromptResult{}, errors.New("malformed text content block")
			}
			if n, ok := fr.ElidedLen(blk.text); ok {
				cs.total = n
				usedElisions++
			}
			var cut bool
			pm.Text, cut = capText(cs.prefix, cs.total, max(room, 0))
			room -= min(cs.total, room)
			out.Truncated = out.Truncated || cut
			pm.Content = textBlock(pm.Text)
		} else {
			pm.Text = fmt.Sprintf("[%s content, %d bytes]", blockType(blk.typ), len(blk.raw))
			pm.Content = json.RawMessage(append([]byte(nil), blk.raw...))
		}
		size += len(pm.Content)
		if size > MaxResultTotal {
			return PromptResult{}, fmt.Errorf("prompt too large: over %d bytes (limit %d)", size, MaxResultTotal)
		}
		out.Messages = append(out.Messages, pm)
	}
	if len(fr.Elided) > usedElisions {
		return PromptResult{}, fmt.Errorf("prompt too large: a value besides text is over %d bytes (limit %d in all)", stdio.ElideAt, MaxResultTotal)
	}
	return out, nil
}

func blockType(t string) string {
	if t == "" {
		return "unknown"
	}
	return Cut(t, 40)
}

// Cut returns s cut to at most n bytes on a UTF-8 boundary.
func Cut(s string, n int) string { return s[:utf8Cut(s, n)] }

// Complete runs completion/complete for an argument of a prompt or a resource template, with the
// arguments already given (context). It returns at most MaxCompletions values.
func (r *Registry) Complete(ctx context.Context, server string, ref CompleteRef, arg, value string, given map[string]string) ([]string, error) {
	c, err := r.readyConn(server)
	if err != nil {
		return nil, err
	}
	if c.caps.Completions == nil {
		return []string{}, nil // nothing to offer: the person types the value
	}
	wref := map[string]string{}
	switch {
	case ref.Prompt != "":
		wref["type"], wref["name"] = "ref/prompt", ref.Prompt
	case ref.URI != "":
		wref["type"], wref["uri"] = "ref/resource", ref.URI
	default:
		return nil, errors.New("mcpbridge: complete: a prompt or a resource template is required")
	}
	params := map[string]any{"ref": wref, "argument": map[string]string{"name": arg, "value": value}}
	if len(given) > 0 {
		params["context"] = map[string]any{"arguments": given}
	}
	ctx, cancel := requestTimeout(ctx, c)
	defer cancel()
	raw, err := c.request(ctx, string(mcp.MethodCompletionComplete), params)
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: complete %s: %w", server, r.redactErr(c, err))
	}
	var w struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("mcpbridge: complete %s: malformed result: %w", server, err)
	}
	vals := w.Completion.Values
	if len(vals) > MaxCompletions {
		vals = vals[:MaxCompletions]
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		out = append(out, Cut(v, 1024))
	}
	return out, nil
}

// Subscribe asks server for notifications/resources/updated about uri (Options.ResourceUpdated
// receives them). A server without the subscribe capability is ErrNotSupported.
func (r *Registry) Subscribe(ctx context.Context, server, uri string) error {
	return r.subscription(ctx, server, uri, true)
}

// Unsubscribe ends a Subscribe.
func (r *Registry) Unsubscribe(ctx context.Context, server, uri string) error {
	return r.subscription(ctx, server, uri, false)
}

func (r *Registry) subscription(ctx context.Context, server, uri string, on bool) error {
	c, err := r.readyConn(server)
	if err != nil {
		return err
	}
	if c.caps.Resources == nil || !c.caps.Resources.Subscribe {
		return fmt.Errorf("mcpbridge: subscribe %s: resource updates %w", server, ErrNotSupported)
	}
	if c.isModern() { // 2026-07-28: resourceSubscriptions of subscriptions/listen (listen.go)
		ctx, cancel := requestTimeout(ctx, c)
		defer cancel()
		if err := c.subscribeModern(ctx, uri, on); err != nil {
			return fmt.Errorf("mcpbridge: subscribe %s: %w", server, r.redactErr(c, err))
		}
		return nil
	}
	method := mcp.MethodResourcesSubscribe
	if !on {
		method = mcp.MethodResourcesUnsubscribe
	}
	ctx, cancel := requestTimeout(ctx, c)
	defer cancel()
	if _, err := c.request(ctx, string(method), map[string]any{"uri": uri}); err != nil {
		return fmt.Errorf("mcpbridge: %s %s: %w", method, server, r.redactErr(c, err))
	}
	c.lists.mu.Lock()
	if c.lists.subscribed == nil {
		c.lists.subscribed = map[string]bool{}
	}
	if on {
		c.lists.subscribed[uri] = true
	} else {
		delete(c.lists.subscribed, uri)
	}
	c.lists.mu.Unlock()
	return nil
}

// onResourceNotification handles resources and prompts notifications on the read goroutine: it
// drops stale lists and hands the news to the registry's callbacks on a goroutine of their own.
func (c *conn) onResourceNotification(n mcp.JSONRPCNotification, fire func(ResourceEvent)) {
	ev := ResourceEvent{Server: c.cfg.Name}
	switch n.Method {
	case string(mcp.MethodNotificationResourcesListChanged):
		c.lists.dropResources()
		ev.Kind = EventResourcesChanged
	case string(mcp.MethodNotificationPromptsListChanged):
		c.lists.dropPrompts()
		ev.Kind = EventPromptsChanged
	case string(mcp.MethodNotificationResourceUpdated):
		uri, _ := n.Params.AdditionalFields["uri"].(string)
		c.lists.mu.Lock()
		subscribed := c.lists.subscribed[uri]
		c.lists.mu.Unlock()
		if !subscribed {
			return // not asked for: a server cannot make the editor re-read what it did not open
		}
		ev.Kind, ev.URI = EventResourceUpdated, uri
	default:
		return
	}
	if fire != nil {
		go fire(ev)
	}
}

// ResourceEvent is news from a server about its resources or prompts.
type ResourceEvent struct {
	Server string
	Kind   string // EventResourcesChanged, EventPromptsChanged or EventResourceUpdated
	URI    string // EventResourceUpdated: the resource
}

// Kinds of ResourceEvent.
const (
	EventResourcesChanged = "resourcesChanged"
	EventPromptsChanged   = "promptsChanged"
	EventResourceUpdated  = "resourceUpdated"
)
