package lsp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// MCP Apps views (issue 31; host/views.go): the commands an editor uses to show a view itself
// (VS Code's webview) or in the browser (any LSP editor), and to carry what the view asks for.

func wireViewRef(v *host.ViewRef) *wire.ViewRef {
	if v == nil {
		return nil
	}
	return &wire.ViewRef{ID: v.ID, Server: v.Server, Tool: v.Tool, URI: v.URI, Error: v.Error}
}

func viewID(cmd string, id string) error {
	if strings.TrimSpace(id) == "" {
		return lspconn.InvalidParams("%s: id is required", cmd)
	}
	return nil
}

func (s *server) cmdView(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ViewParams
	if err := decodeArg(wire.CmdView, arg, &p); err != nil {
		return nil, err
	}
	if err := viewID(wire.CmdView, p.ID); err != nil {
		return nil, err
	}
	v, err := s.app.View(p.ID)
	if err != nil {
		return nil, requestError(wire.CmdView, err)
	}
	s.record("viewOpened", map[string]any{"id": v.ID, "tool": v.Tool})
	d, pm := v.Declared, v.Permissions
	return wire.ViewResult{
		ID: v.ID, Server: v.Server, Tool: v.Tool, URI: v.URI, HTML: v.HTML, CSP: v.CSP,
		DeclaredCSP: wire.ViewCSP{ConnectDomains: d.ConnectDomains, ResourceDomains: d.ResourceDomains, FrameDomains: d.FrameDomains, BaseURIDomains: d.BaseURIDomains},
		Permissions: wire.ViewPermissions{Camera: pm.Camera, Microphone: pm.Microphone, Geolocation: pm.Geolocation, ClipboardWrite: pm.ClipboardWrite},
		Allow:       v.Allow, PrefersBorder: v.PrefersBorder,
		ToolInput: v.ToolInput, ToolResult: v.ToolResult, ToolInfo: v.ToolInfo,
	}, nil
}

func (s *server) cmdViewCallTool(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ViewCallToolParams
	if err := decodeArg(wire.CmdViewCallTool, arg, &p); err != nil {
		return nil, err
	}
	if err := viewID(wire.CmdViewCallTool, p.ID); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, lspconn.InvalidParams("%s: name is required", wire.CmdViewCallTool)
	}
	args := json.RawMessage(strings.TrimSpace(string(p.Arguments)))
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	} else if args[0] != '{' {
		return nil, lspconn.InvalidParams("%s: arguments must be an object, not %s", wire.CmdViewCallTool, abbreviate(string(args)))
	}
	res, dec, err := s.app.ViewCallTool(ctx, p.ID, p.Name, args)
	if err != nil {
		return nil, requestError(wire.CmdViewCallTool, err)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	out := wireResult(res, false) // the view reads its content blocks, text ones included
	out.StructuredContent = res.StructuredContent
	out.Summary = s.app.Summary(res.Name, res, dec)
	return out, nil
}

func (s *server) cmdViewOpenLink(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ViewOpenLinkParams
	if err := decodeArg(wire.CmdViewOpenLink, arg, &p); err != nil {
		return nil, err
	}
	if err := viewID(wire.CmdViewOpenLink, p.ID); err != nil {
		return nil, err
	}
	opened, err := s.app.ViewOpenLink(ctx, p.ID, p.URL)
	if err != nil {
		return nil, requestError(wire.CmdViewOpenLink, err)
	}
	return wire.ViewOpenLinkResult{Opened: opened}, nil
}

func (s *server) cmdViewOpenInBrowser(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ViewParams
	if err := decodeArg(wire.CmdViewOpenInBrowser, arg, &p); err != nil {
		return nil, err
	}
	if err := viewID(wire.CmdViewOpenInBrowser, p.ID); err != nil {
		return nil, err
	}
	u, err := s.app.OpenViewInBrowser(p.ID)
	if err != nil {
		return nil, requestError(wire.CmdViewOpenInBrowser, err)
	}
	var shown struct {
		Success bool `json:"success"`
	}
	err = s.conn.call(ctx, wire.MethodShowDocument, map[string]any{"uri": u, "external": true, "takeFocus": true}, &shown)
	return wire.ViewOpenInBrowserResult{URL: u, Shown: err == nil && shown.Success}, nil
}

func (s *server) cmdViewUpdateModelContext(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ViewUpdateModelContextParams
	if err := decodeArg(wire.CmdViewUpdateModelContext, arg, &p); err != nil {
		return nil, err
	}
	if err := viewID(wire.CmdViewUpdateModelContext, p.ID); err != nil {
		return nil, err
	}
	if err := s.app.ViewUpdateModelContext(p.ID, p.Content, p.StructuredContent); err != nil {
		return nil, requestError(wire.CmdViewUpdateModelContext, err)
	}
	return struct{}{}, nil
}

func (s *server) cmdViewMessage(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ViewMessageParams
	if err := decodeArg(wire.CmdViewMessage, arg, &p); err != nil {
		return nil, err
	}
	if err := viewID(wire.CmdViewMessage, p.ID); err != nil {
		return nil, err
	}
	r, err := s.app.ViewMessage(ctx, p.ID, p.Role, p.Content)
	if err != nil {
		return nil, requestError(wire.CmdViewMessage, err)
	}
	return wire.ViewMessageResult{Sent: r.Sent, Reason: r.Reason, Conversation: r.Conversation, Turn: r.Turn}, nil
}

func (s *server) cmdChatEnd(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.ChatEndParams
	if err := decodeArg(wire.CmdChatEnd, arg, &p); err != nil {
		return nil, err
	}
	if err := s.app.EndConversation(p.Conversation); err != nil {
		return nil, requestError(wire.CmdChatEnd, err)
	}
	return struct{}{}, nil
}

var _ host.ViewTurnUI = (*server)(nil)

// ShowsViewTurns is host.ViewTurnUI: the editor declared experimental.switchboard.viewMessages.
func (s *server) ShowsViewTurns() bool { return s.capabilities().viewMessages }

// ViewMessageStarted is host.ViewTurnUI: switchboard/viewMessage, before the turn's first event.
func (s *server) ViewMessageStarted(m host.ViewMessageStarted) {
	n := wire.ViewMessageNotice{Conversation: m.Conversation, Turn: m.Turn, View: *wireViewRef(&m.View), Text: m.Text}
	for _, c := range m.ViewContext {
		n.ViewContext = append(n.ViewContext, wire.ViewContextNote{Server: c.Server, Tool: c.Tool, Text: c.Text})
	}
	s.record("viewMessage", map[string]any{"conversation": m.Conversation, "turn": m.Turn, "tool": m.View.Tool})
	s.conn.sendJSON(wire.NotifyViewMessage, n)
}
