package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
)

// Confirm is the gate's Prompter: it asks the person through the UI and waits for the first of
// their answer (from any front end), the deadline, the turn's end or the loss of the front end.
// The Question orders an answer against the deadline, so what the UI announced as the outcome is
// what the gate decides.
func (a *App) Confirm(ctx context.Context, req permissions.Request) (permissions.Answer, error) {
	select {
	case <-a.gone:
		return permissions.AnswerDeny, a.noAnswer()
	default:
	}
	if req.ViewID != "" { // views.go: a view's questions are bounded
		if err := a.beginAsk(req.ViewID); err != nil {
			return permissions.AnswerDeny, fmt.Errorf("host: %w", err)
		}
	}
	q := a.questions.open(KindApproval, a.gate.Timeout(), func(q *Question) {
		q.Approval = req
		q.Arguments = approvalArguments(req.Arguments)
		q.Deadline = req.Deadline
		q.Text = promptMessage(req)
		if v := req.Via; v != "" { // views.go: the call comes from a tool's view, not the model
			q.Text = fmt.Sprintf("The view of %s asks: %s", safetext.Bounded(v, previewLimit), q.Text)
		}
		if req.ViewID != "" {
			// Released before the outcome is announced: a view told its question ended (or an
			// editor that saw approvalResolved) may ask again at once.
			q.ended = func(o Outcome) {
				allowed := o.By == ByUser && o.Reply.Decision != permissions.AnswerDeny
				// A question the view withdrew (its request ended before an answer) counts as
				// refused: else a view asking and withdrawing at once would never be muted.
				a.endAsk(req.ViewID, outcomeOf(allowed, o.By == ByUser && !allowed || o.By == ByTimeout || o.By == ByCancelled))
			}
		}
	})
	a.ui.Ask(q)
	o := q.wait(ctx, a.gone)
	switch o.By {
	case ByUser:
		return o.Reply.Decision, nil
	case ByTimeout:
		return permissions.AnswerDeny, fmt.Errorf("host: %w", permissions.ErrNoAnswer{By: permissions.ByTimeout})
	case ByDisconnect:
		return permissions.AnswerDeny, a.noAnswer()
	}
	if err := ctx.Err(); err != nil {
		return permissions.AnswerDeny, err
	}
	return permissions.AnswerDeny, context.Canceled
}

// noAnswer is Confirm's error when nobody can answer any more: the gate then records a denial by
// disconnect or shutdown, never by the user.
func (a *App) noAnswer() error {
	if a.shutdown.Load() {
		return fmt.Errorf("host: %w", permissions.ErrNoAnswer{By: permissions.ByShutdown})
	}
	return fmt.Errorf("host: %w", permissions.ErrNoAnswer{By: permissions.ByDisconnect})
}

// promptMessage is "Allow <tool>? <argument preview>". The message must name the tool and its
// server; a registered name made safe (long or odd names: cut and hashed) may no longer spell the
// server, which is then named separately.
func promptMessage(req permissions.Request) string {
	tool := req.Tool
	if req.Server != "" && !strings.HasPrefix(req.Tool, permissions.ServerPrefix(req.Server)) {
		tool = fmt.Sprintf("%s (server '%s')", req.Tool, safetext.Bounded(req.Server, previewLimit))
	}
	return fmt.Sprintf("Allow %s? %s", tool, previewArguments(req.Arguments, previewLimit))
}

// approvalArguments returns the arguments as a JSON object for the wire Approval: the arguments
// themselves when they are an object, {} when absent, else {"value": <them>} (or the raw text as a
// string when they are not JSON at all).
func approvalArguments(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}")
	}
	if json.Valid(t) {
		var buf bytes.Buffer
		if json.Compact(&buf, t) == nil {
			t = buf.Bytes()
		}
		if t[0] == '{' {
			return json.RawMessage(t)
		}
		b, _ := json.Marshal(map[string]json.RawMessage{"value": t}) // ignore error: valid JSON
		return b
	}
	b, _ := json.Marshal(map[string]string{"value": string(raw)}) // ignore error: invalid UTF-8 becomes U+FFFD
	return b
}

// previewLimit bounds the approval prompt's argument preview (in characters; see safetext.Arguments).
const previewLimit = 200

// previewWhole says where the whole call can be read when a preview leaves something out.
const previewWhole = "see the whole call in the pending approvals (VS Code: Switchboard: Approve Pending Tool Call...; Neovim: :Switchboard approve; any editor: switchboard.approvals)"

// previewArguments is the approval prompt's argument preview: every key named, values cut with a
// marker, everything escaped.
func previewArguments(raw json.RawMessage, limit int) string {
	return safetext.Arguments(raw, limit, previewWhole)
}
