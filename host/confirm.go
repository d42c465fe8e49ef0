package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"

	"go.lsp.dev/protocol"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/permissions"
)

// approvals implements permissions.Prompter for the editor (PROTOCOL.md section 4): each question
// is raised at once as a window/showMessageRequest, a switchboard/approvalRequested notification and
// quickfix code actions, and the first answer from any of them wins.
type approvals struct {
	s *server

	mu      sync.Mutex // guards seq, pending
	seq     int
	pending map[string]*approval
}

var _ permissions.Prompter = (*approvals)(nil)

type approval struct {
	wire   Approval
	ctx    context.Context // Confirm's: permissions.Accept orders a user's answer against the timeout
	answer chan resolution // buffered(1); written once by resolve
	// stopPrompt cancels the showMessageRequest when the approval is resolved another way.
	stopPrompt context.CancelFunc
}

// errEditorGone is the error of a call to the editor when the connection is lost.
var errEditorGone = errors.New("host: editor connection lost")

// resolution is how an approval ended: the answer and who or what gave it (ResolvedBy*).
type resolution struct {
	ans permissions.Answer
	by  string
}

// noAnswer is Confirm's error when nobody can answer any more: the gate then records a denial by
// disconnect or shutdown, never by the user.
func (s *server) noAnswer() error {
	if s.wasShutdown() {
		return fmt.Errorf("host: %w", permissions.ErrNoAnswer{By: permissions.ByShutdown})
	}
	return fmt.Errorf("host: %w", permissions.ErrNoAnswer{By: permissions.ByDisconnect})
}

// outcome is Confirm's result for a resolution.
func (s *server) outcome(r resolution) (permissions.Answer, error) {
	if r.by == ResolvedByDisconnect {
		return permissions.AnswerDeny, s.noAnswer()
	}
	return r.ans, nil
}

func newApprovals(s *server) *approvals {
	return &approvals{s: s, pending: map[string]*approval{}}
}

// Confirm asks the editor and waits for the first answer, ctx's end (the gate's approval timeout or
// a cancelled turn) or the loss of the editor. Every way out resolves the approval exactly once.
func (a *approvals) Confirm(ctx context.Context, req permissions.Request) (permissions.Answer, error) {
	s := a.s
	select {
	case <-s.gone:
		return permissions.AnswerDeny, s.noAnswer()
	default:
	}
	args := approvalArguments(req.Arguments)
	promptCtx, stopPrompt := context.WithCancel(s.baseCtx)
	ap := &approval{ctx: ctx, answer: make(chan resolution, 1), stopPrompt: stopPrompt}
	a.mu.Lock()
	a.seq++
	ap.wire = Approval{
		ID:          "a" + strconv.Itoa(a.seq),
		Tool:        req.Tool,
		Server:      req.Server,
		Arguments:   args,
		Mode:        req.Mode,
		Turn:        req.Turn,
		RequestedAt: s.now().UTC().Format(time.RFC3339),
	}
	a.pending[ap.wire.ID] = ap
	a.mu.Unlock()
	id := ap.wire.ID

	s.events.record("approvalRequested", map[string]any{"approval": ap.wire})
	s.sendJSON(NotifyApprovalRequested, ap.wire) // before the prompt, so it precedes approvalResolved
	go a.prompt(promptCtx, ap, req)

	select {
	case r := <-ap.answer:
		return s.outcome(r)
	case <-ctx.Done():
		by := ResolvedByCancelled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			by = ResolvedByTimeout
		}
		if !a.resolve(id, permissions.AnswerDeny, by) {
			return s.outcome(<-ap.answer) // answered (and accepted) just before: that answer counts
		}
		<-ap.answer
		return permissions.AnswerDeny, ctx.Err()
	case <-s.gone:
		if !a.resolve(id, permissions.AnswerDeny, ResolvedByDisconnect) {
			return s.outcome(<-ap.answer)
		}
		<-ap.answer
		return permissions.AnswerDeny, s.noAnswer()
	}
}

// prompt sends the showMessageRequest. A dismissed or failed prompt leaves the approval pending:
// a code action or switchboard.approve can still answer it.
func (a *approvals) prompt(ctx context.Context, ap *approval, req permissions.Request) {
	title, ok := a.s.askButtons(ctx, protocol.MessageTypeWarning, promptMessage(req),
		TitleAllowOnce, TitleAllowTool, TitleAllowServer, TitleDeny)
	if !ok {
		return // still pending
	}
	a.resolve(ap.wire.ID, answerFromTitle(title), ResolvedByUser) // false when resolved another way first: ignored
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

// answerFromTitle maps an approval prompt's button to its answer.
func answerFromTitle(title string) permissions.Answer {
	switch title {
	case TitleAllowOnce:
		return permissions.AnswerOnce
	case TitleAllowTool:
		return permissions.AnswerAlways
	case TitleAllowServer:
		return permissions.AnswerServer
	}
	return permissions.AnswerDeny
}

// resolve answers a pending approval; it reports false when id is unknown or already resolved, or
// when the user's answer comes after the gate gave up (then the timeout resolves it, as denied).
func (a *approvals) resolve(id string, ans permissions.Answer, by string) bool {
	a.mu.Lock()
	ap, ok := a.pending[id]
	if ok && by == ResolvedByUser && !permissions.Accept(ap.ctx) {
		ok = false
	}
	if ok {
		delete(a.pending, id)
	}
	a.mu.Unlock()
	if !ok {
		return false
	}
	ap.stopPrompt()
	res := ApprovalResolvedParams{ID: id, Decision: ans.String(), By: by}
	a.s.events.record("approvalResolved", map[string]any{"id": id, "decision": res.Decision, "by": by})
	a.s.sendJSON(NotifyApprovalResolved, res)
	ap.answer <- resolution{ans, by}
	return true
}

// approve is switchboard.approve (and the code actions' command).
func (a *approvals) approve(p ApproveParams) error {
	if p.ID == "" {
		return lspconn.InvalidParams("%s: id is required", CmdApprove)
	}
	ans, err := permissions.ParseAnswer(p.Decision)
	if err != nil {
		return lspconn.InvalidParams("%s: decision must be once, always, server or deny, not %q", CmdApprove, p.Decision)
	}
	if !a.resolve(p.ID, ans, ResolvedByUser) {
		return lspconn.InvalidParams("%s: no pending approval %q (unknown, already resolved or timed out)", CmdApprove, p.ID)
	}
	return nil
}

// list returns the pending approvals, oldest first.
func (a *approvals) list() []Approval {
	return oldestFirst(&a.mu, a.pending, func(ap *approval) Approval { return ap.wire }, func(w Approval) string { return w.ID })
}

// oldestFirst returns the wire form of every pending question, oldest first: ids are a letter and
// a sequence number ("a12", "e3"). mu guards pending.
func oldestFirst[P, W any](mu *sync.Mutex, pending map[string]P, wire func(P) W, id func(W) string) []W {
	mu.Lock()
	out := make([]W, 0, len(pending))
	for _, p := range pending {
		out = append(out, wire(p))
	}
	mu.Unlock()
	seq := func(w W) int {
		n, _ := strconv.Atoi(id(w)[1:]) // ignore error: our own ids
		return n
	}
	slices.SortFunc(out, func(x, y W) int { return seq(x) - seq(y) })
	return out
}

// denyAll resolves every pending approval (shutdown).
func (a *approvals) denyAll(by string) {
	for _, ap := range a.list() {
		a.resolve(ap.ID, permissions.AnswerDeny, by)
	}
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
