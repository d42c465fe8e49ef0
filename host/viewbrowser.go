package host

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/switchboard-dev/switchboard/host/appview"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// The browser path for views (issue 31): editors that cannot show a view themselves (Neovim,
// Helix, any LSP editor) open it in the person's browser, served by host/appview on 127.0.0.1.
// What the page relays comes back here (ViewRequest) and takes the same ways as the VS Code
// webview's requests: ViewCallTool, ViewOpenLink.

// browserViews is the app's appview server, made on first use.
type browserViews struct {
	mu     sync.Mutex // guards srv, closed
	srv    *appview.Server
	closed bool
}

func (a *App) appview() (*appview.Server, error) {
	a.browser.mu.Lock()
	defer a.browser.mu.Unlock()
	if a.browser.closed {
		return nil, errors.New("host: closed")
	}
	if a.browser.srv == nil {
		a.browser.srv = appview.New(appview.Options{Bridge: viewBridge{a}, Log: a.log, Version: "switchboard"})
	}
	return a.browser.srv, nil
}

// closeBrowserViews stops serving views (Close).
func (a *App) closeBrowserViews() {
	a.browser.mu.Lock()
	defer a.browser.mu.Unlock()
	a.browser.closed = true
	if a.browser.srv != nil {
		a.browser.srv.Close() // ignore error: closing
	}
}

// closeBrowserViewsOf stops serving the views ids: their conversation ended (EndConversation).
// A view of a direct call has no conversation and is served until the server's idle stop.
func (a *App) closeBrowserViewsOf(ids []string) {
	a.browser.mu.Lock()
	srv := a.browser.srv
	a.browser.mu.Unlock()
	if srv == nil {
		return
	}
	for _, id := range ids {
		srv.CloseView(id)
	}
}

// OpenViewInBrowser serves the view id and returns its one-time address. A chat call's view is
// served until its conversation ends (EndConversation) or the server's idle stop; the page
// offers it ui/message (viewmessage.go). A direct call's view, only until the idle stop.
func (a *App) OpenViewInBrowser(id string) (string, error) {
	v, err := a.View(id)
	if err != nil {
		return "", err
	}
	message := false
	if vi, ok := a.views.get(id); ok {
		a.views.mu.Lock()
		ended, conv := vi.ended, vi.conversation
		a.views.mu.Unlock()
		if ended {
			return "", badRequest("the view of %s is not served any more: its chat conversation ended", v.Tool)
		}
		ui, turns := a.ui.(ViewTurnUI)
		turns = turns && ui.ShowsViewTurns()
		message = conv != "" && turns // a direct call's view has no conversation to send to
	}
	init, _ := json.Marshal(map[string]any{ // ignore error: JSON values
		"toolInput": v.ToolInput, "toolResult": v.ToolResult,
		"hostContext": map[string]any{"toolInfo": v.ToolInfo},
	})
	srv, err := a.appview()
	if err != nil {
		return "", err
	}
	u, err := srv.Open(appview.Page{ID: v.ID, Title: safetext.Bounded(v.Tool, 100), HTML: v.HTML, CSP: v.CSP, Allow: v.Allow, Init: init, Message: message})
	if err != nil {
		return "", err
	}
	// Its conversation may have ended since the check above: EndConversation marks the view ended
	// and then closes what the browser serves of it, which was nothing yet. Looked at again now
	// that the page is served, one of the two closes it.
	if vi, ok := a.views.get(id); ok {
		a.views.mu.Lock()
		ended := vi.ended
		a.views.mu.Unlock()
		if ended {
			srv.CloseView(id)
			return "", badRequest("the view of %s is not served any more: its chat conversation ended", v.Tool)
		}
	}
	a.events.record("viewOpened", map[string]any{"id": v.ID, "tool": v.Tool, "browser": true})
	return u, nil
}

// viewBridge is appview.Bridge: what a view in the browser asks for.
type viewBridge struct{ a *App }

// ViewRequest runs a view's tools/call, ui/open-link, ui/update-model-context or ui/message;
// anything else is not supported.
func (b viewBridge) ViewRequest(ctx context.Context, id, method string, params json.RawMessage) (json.RawMessage, *appview.RPCError) {
	switch method {
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(params, &p) != nil || p.Name == "" {
			return nil, &appview.RPCError{Code: -32602, Message: "tools/call needs a name"}
		}
		res, _, err := b.a.ViewCallTool(ctx, id, p.Name, p.Arguments)
		if err != nil {
			return nil, &appview.RPCError{Code: -32602, Message: err.Error()}
		}
		return CallToolResultJSON(res), nil
	case "ui/open-link":
		var p struct {
			URL string `json:"url"`
		}
		json.Unmarshal(params, &p) // ignore error: an empty URL is refused below
		opened, err := b.a.ViewOpenLink(ctx, id, p.URL)
		if err != nil {
			return nil, &appview.RPCError{Code: -32602, Message: err.Error()}
		}
		out, _ := json.Marshal(map[string]any{"isError": !opened}) // ignore error: plain
		return out, nil
	case "ui/update-model-context":
		var p struct {
			Content           []json.RawMessage `json:"content"`
			StructuredContent json.RawMessage   `json:"structuredContent"`
		}
		if json.Unmarshal(params, &p) != nil {
			return nil, &appview.RPCError{Code: -32602, Message: "ui/update-model-context needs content blocks"}
		}
		if err := b.a.ViewUpdateModelContext(id, p.Content, p.StructuredContent); err != nil {
			return nil, &appview.RPCError{Code: -32602, Message: err.Error()}
		}
		return json.RawMessage("{}"), nil
	case "ui/message":
		var p struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(params, &p) != nil {
			return nil, &appview.RPCError{Code: -32602, Message: "ui/message needs content blocks"}
		}
		blocks, err := ContentBlocks(p.Content)
		if err != nil {
			return nil, &appview.RPCError{Code: -32602, Message: err.Error()}
		}
		r, err := b.a.ViewMessage(ctx, id, p.Role, blocks)
		if err != nil {
			return nil, &appview.RPCError{Code: -32602, Message: err.Error()}
		}
		if !r.Sent {
			// McpUiMessageResult: isError when the host did not deliver it; the reason is for
			// the view's author.
			out, _ := json.Marshal(map[string]any{"isError": true, "reason": r.Reason}) // ignore error: plain
			return out, nil
		}
		return json.RawMessage("{}"), nil
	}
	return nil, &appview.RPCError{Code: -32601, Message: "Switchboard does not support " + safetext.Bounded(method, 80)}
}
