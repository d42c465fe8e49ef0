package lsp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard-dev/switchboard/host/wire"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"

	"go.lsp.dev/protocol"
)

// maxActionArgs bounds the arguments shown in a code action's title.
const maxActionArgs = 80

// codeAction answers textDocument/codeAction with four quickfix actions per pending approval
// (PROTOCOL.md section 4), whatever the document and range: an approval is not tied to a place.
func (s *server) codeAction(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Context struct {
			Only []string `json:"only"`
		} `json:"context"`
	}
	json.Unmarshal(raw, &p) // ignore error: the answer does not depend on the params
	out := []protocol.CodeAction{}
	if !kindRequested(p.Context.Only) {
		return out, nil
	}
	kind := protocol.CodeActionKindQuickFix
	for _, ap := range s.approvals() {
		// The call's arguments tell two pending calls of one tool apart; the suffix says what the
		// grant covers, naming the server for "Allow server".
		call := safetext.Line(ap.Tool) + " " + safetext.Arguments(ap.Arguments, maxActionArgs, "see Switchboard: approvals")
		server := ""
		if ap.Server != "" {
			server = ", and every tool of server '" + safetext.Line(ap.Server) + "'"
		}
		for _, c := range []struct{ title, decision, covers string }{
			{wire.TitleAllowOnce, "once", ""}, {wire.TitleAllowTool, "always", ", and its later calls"},
			{wire.TitleAllowServer, "server", server}, {wire.TitleDeny, "deny", ""},
		} {
			arg, _ := json.Marshal(wire.ApproveParams{ID: ap.ID, Decision: c.decision}) // ignore error: strings
			title := c.title + ": " + call + c.covers
			out = append(out, protocol.CodeAction{
				Title: title,
				Kind:  &kind,
				Command: protocol.Command{
					Title:     title,
					Command:   wire.CmdApprove,
					Arguments: []protocol.LSPAny{protocol.LSPAny(arg)},
				},
			})
		}
	}
	// MCP Apps (views.go): the recent results' views, to open in the browser, for editors with
	// no way of their own to show them.
	for _, v := range s.app.RecentViews(maxViewActions, viewActionWindow) {
		arg, _ := json.Marshal(wire.ViewParams{ID: v.ID}) // ignore error: a string
		title := "Open the view of " + safetext.Line(v.Tool) + " in your browser"
		out = append(out, protocol.CodeAction{
			Title: title,
			Kind:  &kind,
			Command: protocol.Command{
				Title:     title,
				Command:   wire.CmdViewOpenInBrowser,
				Arguments: []protocol.LSPAny{protocol.LSPAny(arg)},
			},
		})
	}
	return out, nil
}

// The views offered as code actions: the last few, of the last minutes.
const (
	maxViewActions   = 3
	viewActionWindow = 15 * time.Minute
)

// kindRequested reports whether quickfix passes the client's context.only filter.
func kindRequested(only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, k := range only {
		if k == "" || k == "quickfix" {
			return true
		}
	}
	return false
}
