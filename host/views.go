package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
)

// MCP Apps views (issue 31). A call of a tool that declares a view (mcpbridge.ToolUI) leaves a
// view behind: the view's HTML as pinned with the tool, the call's arguments and its full result.
// The result the editor gets names it (ViewRef); the editor fetches it (View) and shows it in a
// sandboxed frame, or opens it in the browser (host/appview). Everything the view asks for comes
// back here: its tool calls go through the same gate as any call (ViewCallTool), only to tools of
// its own server that it may call, and a link it wants opened is a question to the person
// (ViewOpenLink).

// maxViews bounds the views kept; the oldest is forgotten first.
const maxViews = 64

// ViewRef says that a tool result has a view, and names it.
type ViewRef struct {
	ID     string `json:"id"`
	Server string `json:"server"`
	Tool   string `json:"tool"` // the registered name of the tool called
	URI    string `json:"uri"`
	// Error says why the view cannot be shown ("" when it can): the server's resource could not
	// be read, had the wrong type or was too big.
	Error string `json:"error,omitempty"`
}

// ViewContent is what a front end needs to show a view.
type ViewContent struct {
	ViewRef
	HTML string
	// CSP is the view document's Content-Security-Policy: nothing beyond the origins the view
	// declared (ViewPolicy).
	CSP         string
	Declared    mcpbridge.ViewCSP
	Permissions mcpbridge.ViewPermissions
	// Allow is the frame's allow attribute: the declared permissions the host grants.
	Allow         string
	PrefersBorder *bool
	// ToolInput is the call's arguments; ToolResult the CallToolResult (content,
	// structuredContent, isError); ToolInfo the tool as the view's host context names it.
	ToolInput  json.RawMessage
	ToolResult json.RawMessage
	ToolInfo   json.RawMessage
}

type viewInstance struct {
	ref ViewRef
	// asking, denials and muted bound the view's questions to the person (beginAsk); guarded by
	// views.mu.
	asking  bool
	denials int // denied in a row
	muted   bool
	// unasked: muted because its calls were refused without a question (refusedUnasked), not by
	// the person; guarded by views.mu.
	unasked bool
	// conversation is the chat conversation whose call made the view ("" for a direct call), and
	// context what the view gave for the model's next turn (viewcontext.go); guarded by views.mu.
	conversation string
	context      *viewContext
	// callTokens and callsAt bound how fast the view's calls run (takeViewCall); throttled: the
	// person was told once. Guarded by views.mu.
	callTokens float64
	callsAt    time.Time
	throttled  bool
	created    time.Time
	ui         *mcpbridge.ToolUI
	tool       mcpbridge.Tool
	input      json.RawMessage
	result     json.RawMessage

	// ended: its conversation ended (EndConversation); guarded by views.mu.
	ended bool
}

// views are the views kept, and the chat calls whose view waits for their result event.
type views struct {
	mu     sync.Mutex // guards byID, order, byCall
	byID   map[string]*viewInstance
	order  []string
	byCall map[string]*viewInstance // a chat call's chatCallKey -> its view, until its result event
	seq    uint64                   // counts context updates (viewcontext.go)
}

func (v *views) add(vi *viewInstance, callKey string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.byID == nil {
		v.byID, v.byCall = map[string]*viewInstance{}, map[string]*viewInstance{}
	}
	v.byID[vi.ref.ID] = vi
	v.order = append(v.order, vi.ref.ID)
	if len(v.order) > maxViews {
		delete(v.byID, v.order[0])
		v.order = v.order[1:]
	}
	if callKey != "" {
		v.byCall[callKey] = vi
		if len(v.byCall) > maxViews { // results that never came (a cancelled turn)
			clear(v.byCall)
			v.byCall[callKey] = vi
		}
	}
}

func (v *views) get(id string) (*viewInstance, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	vi, ok := v.byID[id]
	return vi, ok
}

func (v *views) takeCall(callKey string) *viewInstance {
	v.mu.Lock()
	defer v.mu.Unlock()
	vi := v.byCall[callKey]
	delete(v.byCall, callKey)
	return vi
}

// keepView records a finished call of a tool with a view; nil when the tool has none.
func (a *App) keepView(ctx context.Context, name string, args json.RawMessage, res mcpbridge.Result) *ViewRef {
	// The tool as the gate sees it now: a server that changed the tool (its view) while the call
	// ran has it held, and the changed view is not shown before the person reviewed it.
	t, ok := a.currentPins().snap.Lookup(name)
	if !ok || t.UI == nil || t.UI.ResourceURI == "" {
		return nil
	}
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	vi := &viewInstance{
		ref:     ViewRef{ID: "v" + hex.EncodeToString(b[:]), Server: t.Server, Tool: t.Name, URI: t.UI.ResourceURI},
		ui:      t.UI,
		tool:    t,
		input:   args,
		created: time.Now(),
	}
	if t.Held {
		vi.ref.Error = "the tool changed while the call ran; review the change, then call it again to see its view"
	} else if t.UI.View == nil || t.UI.View.Error != "" || t.UI.View.HTML == "" {
		vi.ref.Error = "the view could not be read from the server"
		if t.UI.View != nil && t.UI.View.Error != "" {
			// The server's words (its read error): editors show this in a notification.
			vi.ref.Error = safetext.NoLinks(safetext.Bounded(t.UI.View.Error, 300))
		}
	}
	vi.result = CallToolResultJSON(res)
	key := ""
	if id := session.CallID(ctx); id != "" {
		key = chatCallKey(session.CallTurn(ctx), id)
	}
	a.views.add(vi, key)
	ref := vi.ref
	return &ref
}

// chatCallKey names one chat call among all running turns: a call id alone is the model's to
// choose, and two conversations' turns running at once could use the same one (their views
// would be swapped, each then acting in the other's conversation).
func chatCallKey(turn, callID string) string { return turn + "\x00" + callID }

// ChatView is the view of a chat call whose result event this is (nil: none), once; the view
// then belongs to conversation conv.
func (a *App) chatView(turn, callID, conv string) *ViewRef {
	vi := a.views.takeCall(chatCallKey(turn, callID))
	if vi == nil {
		return nil
	}
	ended := !a.sessions.Has(conv) // ended while the call ran
	a.views.mu.Lock()
	vi.conversation, vi.ended = conv, ended
	a.views.mu.Unlock()
	ref := vi.ref
	return &ref
}

// View returns what a front end needs to show the view id.
func (a *App) View(id string) (ViewContent, error) {
	vi, ok := a.views.get(id)
	if !ok {
		return ViewContent{}, badRequest("no view %q (unknown, or forgotten: the %d most recent are kept)", id, maxViews)
	}
	if vi.ref.Error != "" {
		return ViewContent{}, badRequest("the view of %s cannot be shown: %s", vi.ref.Tool, vi.ref.Error)
	}
	v := vi.ui.View
	info, _ := json.Marshal(map[string]any{"tool": map[string]any{ // ignore error: JSON values
		"name": vi.tool.Tool, "description": vi.tool.Description, "inputSchema": vi.tool.InputSchema,
	}})
	input := vi.input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return ViewContent{
		ViewRef: vi.ref, HTML: v.HTML, CSP: ViewPolicy(v.CSP), Declared: v.CSP, Permissions: v.Permissions,
		Allow: viewAllow(v.Permissions), PrefersBorder: v.PrefersBorder,
		ToolInput: input, ToolResult: vi.result, ToolInfo: info,
	}, nil
}

// ViewPolicy is the Content-Security-Policy of a view's document: nothing at all by default
// (default-src 'none'), its inline script and style, and exactly the origins it declared: network
// requests to connectDomains, scripts, styles, images, fonts and media from resourceDomains,
// frames from frameDomains, base URIs from baseUriDomains. No 'self', no 'unsafe-eval', no form
// posts. The origins were checked when the view was read (mcpbridge.cspSource): none can add a
// directive or a keyword.
func ViewPolicy(c mcpbridge.ViewCSP) string {
	list := func(prefix string, origins []string, none string) string {
		parts := []string{}
		if prefix != "" {
			parts = append(parts, prefix)
		}
		parts = append(parts, origins...)
		if len(parts) == 0 {
			return none
		}
		return strings.Join(parts, " ")
	}
	r := c.ResourceDomains
	return strings.Join([]string{
		"default-src 'none'",
		"script-src " + list("'unsafe-inline'", r, ""),
		"style-src " + list("'unsafe-inline'", r, ""),
		"img-src " + list("data: blob:", r, ""),
		"font-src " + list("data:", r, ""),
		"media-src " + list("data: blob:", r, ""),
		"connect-src " + list("", c.ConnectDomains, "'none'"),
		"frame-src " + list("", c.FrameDomains, "'none'"),
		"base-uri " + list("", c.BaseURIDomains, "'none'"),
		"form-action 'none'",
		"object-src 'none'",
		"worker-src 'none'",
	}, "; ")
}

// viewAllow is the frame's allow attribute for the permissions a view declared.
func viewAllow(p mcpbridge.ViewPermissions) string {
	var out []string
	if p.Camera {
		out = append(out, "camera")
	}
	if p.Microphone {
		out = append(out, "microphone")
	}
	if p.Geolocation {
		out = append(out, "geolocation")
	}
	if p.ClipboardWrite {
		out = append(out, "clipboard-write")
	}
	return strings.Join(out, "; ")
}

// ViewCallTool runs a tools/call that the view id made: name is the server's own tool name. The
// tool must belong to the view's server and be visible to apps; the call passes the gate exactly
// as any call does (mode, allowlist, pins), and the question says it comes from the view. A
// denial is an error result, as for any call.
func (a *App) ViewCallTool(ctx context.Context, id, name string, args json.RawMessage) (mcpbridge.Result, permissions.Decision, error) {
	vi, ok := a.views.get(id)
	if !ok {
		return mcpbridge.Result{}, permissions.Decision{}, badRequest("no view %q", id)
	}
	var target *mcpbridge.Tool
	for _, t := range a.registry.Tools() {
		if t.Server == vi.ref.Server && t.Tool == name {
			target = &t
			break
		}
	}
	if target == nil || !target.UI.AppVisible() {
		// Not one of its server's tools that apps may call: the view cannot reach another
		// server's tools, nor a model-only tool of its own server.
		msg := fmt.Sprintf("Tool %q is not a tool this view may call.", safetext.Bounded(name, 100))
		return mcpbridge.Result{Name: name, IsError: true, Text: msg, Bytes: len(msg),
			Content: []json.RawMessage{textContent(msg)}}, permissions.Decision{By: session.ByUnknown, Reason: "not callable from the view"}, nil
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	a.views.mu.Lock()
	conv, ended := vi.conversation, vi.ended
	a.views.mu.Unlock()
	if ended {
		// Its chat is over (the person began a new one or closed it, or the session forgot it):
		// the mode that conversation ran in is gone with it, and the host's may be looser. The
		// browser's relay refuses such a view (403); a view the editor still shows (VS Code keeps
		// its panel) is refused here the same way.
		msg := fmt.Sprintf("Tool call %s was not run: the chat conversation of the view of %s has ended; call the tool again for a new view.", target.Name, vi.ref.Tool)
		return mcpbridge.Result{Name: target.Name, IsError: true, Text: msg, Bytes: len(msg), Content: []json.RawMessage{textContent(msg)}},
			permissions.Decision{By: permissions.ByLimit, Reason: "denied: the view's chat conversation ended"}, nil
	}
	if !a.takeViewCall(vi) {
		msg := fmt.Sprintf("Tool call %s was not run: the view of %s calls tools more often than %d times a second; it may call again in a moment.", target.Name, vi.ref.Tool, int(time.Second/viewCallEvery))
		return mcpbridge.Result{Name: target.Name, IsError: true, Text: msg, Bytes: len(msg), Content: []json.RawMessage{textContent(msg)}},
			permissions.Decision{By: permissions.ByLimit, Reason: "denied: the view calls too often"}, nil
	}
	req := CallRequest{Name: target.Name, Arguments: args, Source: "view", View: vi.ref.Tool, ViewID: vi.ref.ID}
	// A chat call's view acts within its conversation: never in a mode looser than the one the
	// person last ran that conversation in (as its message's turn, viewmessage.go), so a chat in
	// allowlist-only does not auto-run what its view calls because the host's mode is always-allow.
	mode, modeErr := a.policyMode(nil)
	if last, ok := a.sessions.Mode(conv); ok && conv != "" && modeErr == nil {
		if m := stricterMode(mode, last); m != mode {
			req.Mode, mode = &m, m
		}
	}
	if res, dec, refused := a.refusedBeforeGate(vi, *target, mode, modeErr == nil); refused {
		return res, dec, nil
	}
	res, dec := a.CallTool(ctx, req)
	if !dec.Allowed && (dec.By == permissions.ByMode || dec.By == permissions.ByPin || dec.By == permissions.ByPolicy) {
		a.refusedUnasked(vi.ref.ID)
	}
	if len(res.Content) == 0 && res.Text != "" {
		res.Content = []json.RawMessage{textContent(res.Text)}
	}
	return res, dec, nil
}

func textContent(s string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": s}) // ignore error: a string
	return b
}

// ViewOpenLink asks the person whether to open the page a view wants opened (ui/open-link):
// http and https only. It reports whether the person agreed (the UI then opened it).
func (a *App) ViewOpenLink(ctx context.Context, id, link string) (bool, error) {
	vi, ok := a.views.get(id)
	if !ok {
		return false, badRequest("no view %q", id)
	}
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return false, badRequest("the view may open only http and https pages, not %q", safetext.Bounded(link, 200))
	}
	a.views.mu.Lock()
	ended := vi.ended
	a.views.mu.Unlock()
	if ended {
		return false, nil // its chat is over: nothing it asks reaches the person (as ViewCallTool)
	}
	if err := a.beginAsk(id); err != nil {
		return false, nil // the view learns only that nothing was opened (ui/open-link's isError)
	}
	r := a.elicit(ctx, mcpbridge.Elicitation{Server: vi.ref.Server, Mode: "url", URL: u.String(),
		Message: fmt.Sprintf("(the view of %s wants to open this page)", vi.ref.Tool)})
	accepted := r.Action == mcpbridge.ElicitAccept
	a.endAsk(id, outcomeOf(accepted, !accepted)) // declined, dismissed or withdrawn by the view: refused
	return accepted, nil
}

// A view's questions to the person are bounded: a view that calls tools (or asks to open links)
// in a loop must not flood the person with questions nor queue thousands of them. A view has at
// most one question open: what it asks meanwhile is refused at once, with a reason it can read.
// After maxViewDenials answers in a row that refuse it (denied, not answered in time, or withdrawn
// by the view before an answer: asking and withdrawing at once must not ask forever), it is
// muted for the rest of its life: nothing it asks reaches the person again, and the person is
// told so once. What needs no question (an allowlisted call, mode always-allow) still runs.
const maxViewDenials = 3

// askOutcome is how a view's question ended, for its count of denials in a row.
type askOutcome int

const (
	askNeutral askOutcome = iota // cancelled, or nobody there to answer: not the person's refusal
	askAllowed
	askDenied
)

func outcomeOf(allowed, denied bool) askOutcome {
	switch {
	case allowed:
		return askAllowed
	case denied:
		return askDenied
	}
	return askNeutral
}

// beginAsk claims the view's one open question, or says why it may not ask. An unknown id (a view
// forgotten meanwhile) asks as any call does.
func (a *App) beginAsk(id string) error {
	a.views.mu.Lock()
	defer a.views.mu.Unlock()
	vi := a.views.byID[id]
	if vi == nil {
		return nil
	}
	if why := askRefusal(vi); why != "" {
		return permissions.ErrNotAsked{Why: why}
	}
	vi.asking = true
	return nil
}

// askRefusal says why the view may not ask the person now ("": it may); views.mu held.
func askRefusal(vi *viewInstance) string {
	switch {
	case vi.muted && vi.unasked:
		return fmt.Sprintf("%d calls in a row of the view of %s were refused without a question (the permission mode, a changed tool or the organisation's policy), so nothing it asks that is not allowed outright runs any more", maxViewDenials, vi.ref.Tool)
	case vi.muted:
		return fmt.Sprintf("the person stopped asking for the view of %s after %d denials in a row; nothing it asks that needs their approval runs", vi.ref.Tool, maxViewDenials)
	case vi.asking:
		return fmt.Sprintf("the view of %s already has a question open; wait for its answer before asking again", vi.ref.Tool)
	}
	return ""
}

// refusedBeforeGate is the result of a view's call that is refused before the gate: the view may
// not ask now, and the call is not one that runs without a question (mode always-allow, an
// allowlist entry); mode is the one the call would run in (modeOK: known). The gate would refuse
// it too (ErrNotAsked, or its mode), but it writes an audit line per call: a view calling in a
// loop would rotate the person's audit history away.
func (a *App) refusedBeforeGate(vi *viewInstance, t mcpbridge.Tool, mode permissions.Mode, modeOK bool) (mcpbridge.Result, permissions.Decision, bool) {
	a.views.mu.Lock()
	why := askRefusal(vi)
	a.views.mu.Unlock()
	if why == "" {
		return mcpbridge.Result{}, permissions.Decision{}, false
	}
	if modeOK && mode == permissions.AlwaysAllow && a.Policy().Empty() ||
		a.gate.Allowlisted(permissions.Request{Tool: t.Name, Server: t.Server, Definition: t.Definition}) {
		return mcpbridge.Result{}, permissions.Decision{}, false // the gate decides: no question is needed
	}
	msg := fmt.Sprintf("Tool call %s was not run: %s.", t.Name, why)
	return mcpbridge.Result{Name: t.Name, IsError: true, Text: msg, Bytes: len(msg), Content: []json.RawMessage{textContent(msg)}},
		permissions.Decision{By: permissions.ByLimit, Reason: "denied: " + why}, true
}

// A view's calls run at most viewCallBurst at once and then one per viewCallEvery (5 a second).
// A view is a page its server wrote: a grant of its tool (always-allow, the allowlist) is the
// person's to the view as they use it, not to a page that calls it in a loop (a side effect per
// call, a paid API's quota), which would also write an audit line per call. Past the bound a
// call is refused before the gate (no audit line), and the person is told once.
const (
	viewCallBurst = 20
	viewCallEvery = 200 * time.Millisecond
)

// takeViewCall reports whether the view may make a call now, and counts it (a token bucket).
func (a *App) takeViewCall(vi *viewInstance) bool {
	now := a.taskNow()
	a.views.mu.Lock()
	switch d := now.Sub(vi.callsAt); {
	case vi.callsAt.IsZero():
		vi.callTokens, vi.callsAt = viewCallBurst, now
	case d > 0: // a clock that steps back refills nothing
		vi.callTokens, vi.callsAt = min(viewCallBurst, vi.callTokens+float64(d)/float64(viewCallEvery)), now
	}
	if vi.callTokens >= 1 {
		vi.callTokens--
		a.views.mu.Unlock()
		return true
	}
	tell := !vi.throttled
	vi.throttled = true
	tool := safetext.Bounded(vi.ref.Tool, previewLimit)
	a.views.mu.Unlock()
	if tell {
		a.ui.Notify(LevelWarning, fmt.Sprintf("The view of %s calls tools more often than %d times a second: Switchboard did not run the calls beyond that.", tool, int(time.Second/viewCallEvery)))
	}
	return false
}

// endAsk releases the view's open question and counts its outcome (countOutcome).
func (a *App) endAsk(id string, o askOutcome) { a.countOutcome(id, o, true) }

// refusedUnasked counts a view's call that the gate refused without asking anyone (the permission
// mode, a pin holding a changed tool, the organisation's policy) as a denial in a row: nobody is
// asked, so beginAsk never bounds it, and the gate writes an audit line per call, so a view
// calling such a tool in a loop would rotate the person's audit history away (10 MiB and one old
// file) in seconds. At maxViewDenials the view is muted: refusedBeforeGate then refuses what it
// asks, before the gate, unless it runs outright.
func (a *App) refusedUnasked(id string) { a.countOutcome(id, askDenied, false) }

// countOutcome counts a view's allowed or denied question (asked: it releases the view's open
// question) or a call refused unasked; the view that reaches maxViewDenials denials in a row is
// muted, and the person told once, in words that say who refused.
func (a *App) countOutcome(id string, o askOutcome, asked bool) {
	a.views.mu.Lock()
	vi := a.views.byID[id]
	if vi == nil {
		a.views.mu.Unlock()
		return
	}
	if asked {
		vi.asking = false
	}
	switch o {
	case askAllowed:
		vi.denials = 0
	case askDenied:
		vi.denials++
	}
	mutedNow := !vi.muted && vi.denials >= maxViewDenials
	if mutedNow {
		vi.muted, vi.unasked = true, !asked
	}
	tool := safetext.Bounded(vi.ref.Tool, previewLimit)
	a.views.mu.Unlock()
	switch {
	case mutedNow && asked:
		a.ui.Notify(LevelWarning, fmt.Sprintf("Switchboard will not ask you again for the view of %s: you refused it %d times in a row, so what it asks from now on is refused; call the tool again for a new view.", tool, maxViewDenials))
	case mutedNow:
		a.ui.Notify(LevelWarning, fmt.Sprintf("Switchboard refuses what the view of %s asks from now on: %d of its tool calls in a row were not allowed (by the permission mode, a changed tool or your organisation's policy); call the tool again for a new view.", tool, maxViewDenials))
	}
}

// CallToolResultJSON is a result as MCP's CallToolResult, what a view reads: content,
// structuredContent and isError.
func CallToolResultJSON(res mcpbridge.Result) json.RawMessage {
	content := res.Content
	if content == nil {
		content = []json.RawMessage{}
	}
	b, _ := json.Marshal(struct { // ignore error: JSON values
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
		IsError           bool              `json:"isError,omitempty"`
	}{content, res.StructuredContent, res.IsError})
	return b
}

// RecentViews are the views (that can be shown) of the last n calls made within since, newest
// first: what an editor without its own way to show them offers to open (a code action).
func (a *App) RecentViews(n int, since time.Duration) []ViewRef {
	a.views.mu.Lock()
	defer a.views.mu.Unlock()
	var out []ViewRef
	for i := len(a.views.order) - 1; i >= 0 && len(out) < n; i-- {
		vi := a.views.byID[a.views.order[i]]
		if vi == nil || vi.ref.Error != "" || time.Since(vi.created) > since {
			continue
		}
		out = append(out, vi.ref)
	}
	return out
}
