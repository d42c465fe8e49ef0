package permissions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// DefaultTimeout is how long the gate waits for the user's answer.
const DefaultTimeout = 120 * time.Second

// GateOptions configures a Gate.
type GateOptions struct {
	Allowlist *Allowlist       // nil = an empty in-memory list ("always" answers last for the process)
	Prompter  Prompter         // nil = every ask is denied (fail closed)
	Audit     *AuditLog        // nil = no audit
	Timeout   time.Duration    // approval timeout; 0 = DefaultTimeout
	Logger    *slog.Logger     // nil = discard
	Now       func() time.Time // injected clock for latency and audit time; nil = time.Now
}

// Gate is the one confirm gate every tool call passes. Safe for concurrent use.
type Gate struct {
	al    *Allowlist
	audit *AuditLog
	log   *slog.Logger
	now   func() time.Time

	prompter atomic.Pointer[prompterBox]
	timeout  atomic.Int64
}

type prompterBox struct{ p Prompter }

// NewGate returns a gate.
func NewGate(opts GateOptions) *Gate {
	g := &Gate{al: opts.Allowlist, audit: opts.Audit, log: opts.Logger, now: opts.Now}
	if g.al == nil {
		g.al, _ = OpenAllowlist("")
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	} else if g.audit != nil {
		g.audit.log.CompareAndSwap(nil, g.log) // its drop warning goes to the gate's log, unless set
	}
	if g.now == nil {
		g.now = time.Now
	}
	g.SetPrompter(opts.Prompter)
	g.SetTimeout(opts.Timeout)
	return g
}

// SetPrompter replaces the prompter (nil = deny every ask). Calls already asking keep theirs.
func (g *Gate) SetPrompter(p Prompter) { g.prompter.Store(&prompterBox{p}) }

// SetTimeout sets the approval timeout (0 or less = DefaultTimeout).
func (g *Gate) SetTimeout(d time.Duration) {
	if d <= 0 {
		d = DefaultTimeout
	}
	g.timeout.Store(int64(d))
}

// Timeout is how long the gate waits for the user's answer.
func (g *Gate) Timeout() time.Duration { return time.Duration(g.timeout.Load()) }

// Allowlist is the gate's allowlist (never nil).
func (g *Gate) Allowlist() *Allowlist { return g.al }

// Check decides whether req may run; see the package documentation for the order. Denials are
// Decisions; err is non-nil only for a broken invariant (an unknown mode), and then the Decision
// is a denial too. Every decision is audited. An "always" or "server" answer is written to the
// allowlist before Check returns.
func (g *Gate) Check(ctx context.Context, req Request) (Decision, error) {
	start := g.now()
	d, err := g.decide(ctx, req)
	g.audit.Record(req, d, g.now().Sub(start))
	if g.log.Enabled(ctx, slog.LevelDebug) {
		g.log.Debug("gate", "tool", req.Tool, "mode", req.Mode.String(), "allowed", d.Allowed, "by", d.By, "entry", d.Entry, "reason", d.Reason)
	}
	return d, err
}

func (g *Gate) decide(ctx context.Context, req Request) (Decision, error) {
	if ctx.Err() != nil {
		return Decision{By: ByCancel, Reason: "denied: the request was cancelled"}, nil
	}
	switch req.Mode {
	case AlwaysAllow:
		return Decision{Allowed: true, By: ByMode, Reason: "allowed by mode always-allow"}, nil
	case SingleConfirm, AllowlistOnly:
	default:
		err := fmt.Errorf("permissions: unknown mode %v", req.Mode)
		return Decision{By: ByError, Reason: "denied: " + err.Error()}, err
	}
	if e, ok := g.al.Match(req.Tool); ok {
		return Decision{Allowed: true, By: ByAllowlist, Entry: e, File: g.al.Path(),
			Reason: "allowed by allowlist entry " + e + fileSuffix(g.al.Path())}, nil
	}
	if req.ReadOnlyBuiltin && req.Server == "" {
		return Decision{Allowed: true, By: ByBuiltin, Reason: "allowed: read-only built-in tool"}, nil
	}
	brokenNote := ""
	if err := g.al.Err(); err != nil {
		brokenNote = "; the allowlist grants nothing while it has an error: " + err.Error()
	}
	if req.Mode == AllowlistOnly {
		return Decision{By: ByMode, Reason: "denied by mode allowlist-only: not in the allowlist" + brokenNote}, nil
	}
	p := g.prompter.Load().p
	if p == nil {
		return Decision{By: ByError, Reason: "denied: there is no way to ask the user (no prompter)"}, nil
	}
	timeout := time.Duration(g.timeout.Load())
	c := &claim{}
	pctx, cancel := context.WithTimeout(context.WithValue(ctx, claimKey{}, c), timeout)
	end := func() { c.state.CompareAndSwap(claimOpen, claimEnded) } // from now on Accept refuses
	stop := context.AfterFunc(pctx, end)
	ans, err := p.Confirm(pctx, req)
	stop()
	if pctx.Err() != nil {
		end() // AfterFunc may not have run yet
	}
	timedOut := c.state.Load() == claimEnded
	cancel()
	switch {
	case ctx.Err() != nil:
		return Decision{By: ByCancel, Reason: "denied: the request was cancelled while asking the user"}, nil
	case timedOut: // even with an answer not accepted in time: it came too late, fail closed
		return Decision{By: ByTimeout, Reason: fmt.Sprintf("denied: no answer within %s", timeout)}, nil
	case err != nil:
		if na := (ErrNoAnswer{}); errors.As(err, &na) && (na.By == ByDisconnect || na.By == ByShutdown) {
			return Decision{By: na.By, Reason: "denied: " + na.Error()}, nil
		}
		g.log.Warn("gate: asking the user failed", "tool", req.Tool, "err", err)
		return Decision{By: ByError, Reason: "denied: asking the user failed: " + err.Error()}, nil
	}
	d := Decision{Allowed: true, By: ByUser, Answer: ans}
	var entry string
	switch ans {
	case AnswerDeny:
		d.Allowed = false
		d.Reason = "denied by the user"
		return d, nil
	case AnswerOnce:
		d.Reason = "allowed once by the user"
		return d, nil
	case AnswerAlways:
		entry = req.Tool
	case AnswerServer:
		entry = req.Tool // a built-in tool has no server: "server" is "always"
		if req.Server != "" {
			entry = ServerPrefix(req.Server) + "*"
		}
	default:
		return Decision{By: ByError, Reason: fmt.Sprintf("denied: the prompter returned an unknown answer %v", ans)}, nil
	}
	if err := g.al.Add(entry); err != nil {
		g.log.Error("gate: could not save the allowlist entry", "entry", entry, "file", g.al.Path(), "err", err)
		d.Reason = fmt.Sprintf("allowed once by the user; could not add %s to the allowlist: %v", entry, err)
		return d, nil
	}
	d.Entry, d.File = entry, g.al.Path()
	d.Reason = "allowed by the user; added " + entry + " to the allowlist" + fileSuffix(g.al.Path())
	return d, nil
}

func fileSuffix(path string) string {
	if path == "" {
		return " (in memory)"
	}
	return " in " + path
}
