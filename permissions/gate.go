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
	Allowlist *Allowlist // nil = an empty in-memory list ("always" answers last for the process)
	// Trust records which allowlist grants were made for which workspace definition (see
	// Request.Definition). nil = an allowlist match never counts for a workspace-defined server,
	// and "always" or "server" answers for one are not saved.
	Trust    *TrustStore
	Prompter Prompter         // nil = every ask is denied (fail closed)
	Audit    *AuditLog        // nil = no audit
	Timeout  time.Duration    // approval timeout; 0 = DefaultTimeout
	Logger   *slog.Logger     // nil = discard
	Now      func() time.Time // injected clock for latency and audit time; nil = time.Now
	// Pins checks an MCP tool call against the user's pins before anything else (nil = no
	// pinning). It runs on every call, so it must be cheap (the host's is a map lookup).
	Pins func(Request) PinVerdict
	// Policy is the organisation's policy, asked on every call before anything but
	// cancellation (nil = no policy). It must be cheap: it runs on every call.
	Policy func(Request) PolicyVerdict
}

// Gate is the one confirm gate every tool call passes. Safe for concurrent use.
type Gate struct {
	al    *Allowlist
	trust *TrustStore
	audit *AuditLog
	log   *slog.Logger
	now   func() time.Time
	pins  func(Request) PinVerdict
	pol   func(Request) PolicyVerdict

	prompter atomic.Pointer[prompterBox]
	timeout  atomic.Int64
}

type prompterBox struct{ p Prompter }

// NewGate returns a gate.
func NewGate(opts GateOptions) *Gate {
	g := &Gate{al: opts.Allowlist, trust: opts.Trust, audit: opts.Audit, log: opts.Logger, now: opts.Now, pins: opts.Pins, pol: opts.Policy}
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
	var pol PolicyVerdict
	if g.pol != nil {
		pol = g.pol(req)
	}
	if pol.Deny {
		return Decision{By: ByPolicy, Entry: pol.Rule, File: pol.File, Reason: pol.Reason}, nil
	}
	policyNote := ""
	if pol.ModeOff {
		policyNote = fmt.Sprintf("; mode %s is disabled by the organisation's policy (%s), decided as %s", req.Mode, pol.ModeRule, pol.Fallback)
		req.Mode = pol.Fallback
	}
	var pv PinVerdict
	if g.pins != nil && req.Server != "" {
		pv = g.pins(req)
	}
	if pv.Hold {
		return Decision{By: ByPin, Reason: "denied: " + pv.Reason}, nil
	}
	d, err := g.decidePolicy(ctx, req, pv, pol)
	d.Reason += policyNote
	if pv.Note != "" {
		d.Reason += "; " + pv.Note
	}
	if d.Allowed && d.By == ByUser && pv.Ask && pv.Approved != nil {
		pv.Approved()
	}
	return d, err
}

// noUserGrants says why the user's allowlist counts for nothing (PolicyVerdict.NoUserGrants).
const noUserGrants = "the organisation's policy allows only its own rules (allowManagedPermissionRulesOnly)"

// decidePolicy applies the policy's ask and allow (gate order 5 and 6, after pins), then the
// rest of the order.
func (g *Gate) decidePolicy(ctx context.Context, req Request, pv PinVerdict, pol PolicyVerdict) (Decision, error) {
	switch {
	case pol.Ask && req.Mode == AllowlistOnly:
		return Decision{By: ByPolicy, Entry: pol.Rule, File: pol.File, Reason: "denied by mode allowlist-only: " + pol.Reason}, nil
	case pol.Ask:
		d, err := g.ask(ctx, req, pv, pol, "")
		if d.By == ByUser {
			d.Reason += "; " + pol.Reason
		}
		return d, err
	case pol.Allow && !pv.Ask:
		return Decision{Allowed: true, By: ByPolicy, Entry: pol.Rule, File: pol.File, Reason: pol.Reason}, nil
	case pol.AllowNotHere:
		// A rule names a server by name only, and a repository can give its own server any name:
		// the organisation's grant is for the server it knows, not for one a workspace file defines.
		d, err := g.decideMode(ctx, req, pv, pol)
		d.Reason += fmt.Sprintf("; the organisation's allow rule %s does not count for a server a workspace file defines", pol.Rule)
		return d, err
	}
	return g.decideMode(ctx, req, pv, pol)
}

func (g *Gate) decideMode(ctx context.Context, req Request, pv PinVerdict, pol PolicyVerdict) (Decision, error) {
	switch req.Mode {
	case AlwaysAllow:
		if !pv.Ask {
			return Decision{Allowed: true, By: ByMode, Reason: "allowed by mode always-allow"}, nil
		}
	case SingleConfirm, AllowlistOnly:
	default:
		err := fmt.Errorf("permissions: unknown mode %v", req.Mode)
		return Decision{By: ByError, Reason: "denied: " + err.Error()}, err
	}
	e, desc, note, ok := g.matchAllowlist(req)
	if ok && pol.NoUserGrants {
		ok, note = false, "; allowlist entry "+e+" grants nothing: "+noUserGrants
	}
	if ok && pv.Ask {
		if pe, err := parseEntry(e); err != nil || pe.Prefix {
			// A grant made before this tool existed does not cover it; an exact one does.
			if g.al.hasExact(req.Tool) && (req.Definition == "" || g.trust.Granted(req.Definition, req.Tool)) {
				e, desc = req.Tool, ""
			} else {
				ok = false
				note += "; " + pv.Reason
			}
		}
	}
	if ok {
		path := g.al.Path()
		// One concatenation (fileSuffix's text written out): the reason is built for every call
		// the allowlist allows.
		var reason string
		if path == "" {
			reason = "allowed by allowlist entry " + e + desc + " (in memory)" + note
		} else {
			reason = "allowed by allowlist entry " + e + desc + " in " + path + note
		}
		return Decision{Allowed: true, By: ByAllowlist, Entry: e, File: path, Reason: reason}, nil
	}
	if pv.Ask && req.Mode == AllowlistOnly {
		return Decision{By: ByPin, Reason: "denied by mode allowlist-only: " + pv.Reason + note}, nil
	}
	if req.ReadOnlyBuiltin && req.Server == "" {
		return Decision{Allowed: true, By: ByBuiltin, Reason: "allowed: read-only built-in tool"}, nil
	}
	brokenNote := note
	if err := g.al.Err(); err != nil {
		brokenNote += "; the allowlist grants nothing while it has an error: " + err.Error()
	}
	if req.Mode == AllowlistOnly {
		return Decision{By: ByMode, Reason: "denied by mode allowlist-only: not in the allowlist" + brokenNote}, nil
	}
	return g.ask(ctx, req, pv, pol, brokenNote)
}

// ask asks the Prompter (gate order 10) and saves an "always" or "server" answer.
func (g *Gate) ask(ctx context.Context, req Request, pv PinVerdict, pol PolicyVerdict, brokenNote string) (Decision, error) {
	p := g.prompter.Load().p
	if p == nil {
		return Decision{By: ByError, Reason: "denied: there is no way to ask the user (no prompter)"}, nil
	}
	timeout := time.Duration(g.timeout.Load())
	pctx, cancel := context.WithTimeout(ctx, timeout)
	req.Deadline, _ = pctx.Deadline()
	ans, err := p.Confirm(pctx, req) // the prompter orders an answer against the deadline (Prompter)
	cancel()
	switch {
	case ctx.Err() != nil:
		return Decision{By: ByCancel, Reason: "denied: the request was cancelled while asking the user"}, nil
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrNoAnswer{By: ByTimeout})):
		return Decision{By: ByTimeout, Reason: fmt.Sprintf("denied: no answer within %s", timeout)}, nil
	case err != nil && errors.As(err, new(ErrNotAsked)):
		var na ErrNotAsked
		errors.As(err, &na)
		return Decision{By: ByLimit, Reason: "denied: " + na.Why}, nil
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
		d.Reason = "denied by the user" + brokenNote
		return d, nil
	case AnswerOnce:
		d.Reason = "allowed once by the user" + brokenNote
		return d, nil
	case AnswerAlways, AnswerServer:
		if pol.NoUserGrants {
			d.Reason = "allowed once by the user; not saved: " + noUserGrants + brokenNote
			return d, nil
		}
	}
	switch ans {
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
	if req.Server != "" && !toolOfServer(req.Tool, req.Server) {
		d.Reason = fmt.Sprintf("allowed once by the user; not saved: %s is not a tool name of server %q", req.Tool, req.Server)
		return d, nil
	}
	if req.Definition != "" {
		return g.grantDefinition(req, d, entry), nil
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

// grantDefinition saves an "always" or "server" answer for a workspace-defined server: recorded
// in the trust store for its definition first, then written to the allowlist (where the user sees
// and revokes it). Both are needed for the grant to count.
func (g *Gate) grantDefinition(req Request, d Decision, entry string) Decision {
	if g.trust == nil {
		d.Reason = "allowed once by the user; not saved: grants for a workspace-defined server need the trust store"
		return d
	}
	if err := g.trust.AddGrant(req.Server, req.Definition, entry); err != nil {
		g.log.Error("gate: could not record the grant", "entry", entry, "server", req.Server, "err", err)
		d.Reason = fmt.Sprintf("allowed once by the user; could not record %s for this definition of server %s: %v", entry, req.Server, err)
		return d
	}
	if err := g.al.add(entry, true); err != nil {
		g.log.Error("gate: could not save the allowlist entry", "entry", entry, "file", g.al.Path(), "err", err)
		d.Reason = fmt.Sprintf("allowed once by the user; could not add %s to the allowlist: %v", entry, err)
		return d
	}
	d.Entry, d.File = entry, g.al.Path()
	d.Reason = "allowed by the user; added " + entry + " to the allowlist" + fileSuffix(g.al.Path()) +
		" for this workspace definition of server " + req.Server
	return d
}

// Allowlisted reports whether the allowlist alone lets req run without asking, exactly as Check
// decides it (for a workspace-defined server only entries granted for req.Definition count).
// Listings use it so that what they show as allowed is what the gate allows.
func (g *Gate) Allowlisted(req Request) bool {
	_, _, _, ok := g.matchAllowlist(req)
	return ok
}

// matchAllowlist finds the allowlist entry that lets req run, and what it covers. For an MCP
// tool the entry applies only if req.Tool parses to req.Server. For a workspace-defined server
// (req.Definition set) an entry counts only if the trust store records it for that definition;
// note then says which entry was ignored, for the person and the audit.
func (g *Gate) matchAllowlist(req Request) (entry, desc, note string, ok bool) {
	if req.Server != "" && !toolOfServer(req.Tool, req.Server) {
		return "", "", fmt.Sprintf("; no allowlist entry applies: %s is not a tool name of server %q", req.Tool, req.Server), false
	}
	var ignored string
	g.al.state().each(req.Tool, func(e, d string) bool {
		if req.Definition == "" || g.trust.Granted(req.Definition, e) {
			entry, desc, ok = e, d, true
			return false
		}
		if ignored == "" {
			ignored = e
		}
		return true
	})
	switch {
	case ok && req.Definition != "":
		note = " granted for this workspace definition of server " + req.Server
	case !ok && ignored != "":
		note = "; allowlist entry " + ignored + " was ignored: it was granted for another definition of server " +
			req.Server + " than this workspace's"
	}
	return entry, desc, note, ok
}

// toolOfServer reports whether tool is a tool name mcp__<server>__<tool> of server (a valid
// server name: the first "__" after "mcp__" is then the separator).
func toolOfServer(tool, server string) bool {
	s, _, ok := cutToolName(tool)
	return ok && s == server
}

// describeEntry says what an allowlist entry covers, so the audit shows why it matched.
func describeEntry(e string) string {
	pe, err := parseEntry(e)
	switch {
	case err != nil || !pe.Prefix:
		return ""
	case pe.Tool == "":
		return fmt.Sprintf(" (every tool of server %s)", pe.Server)
	}
	return fmt.Sprintf(" (tools of server %s whose names start with %q)", pe.Server, pe.Tool)
}

func fileSuffix(path string) string {
	if path == "" {
		return " (in memory)"
	}
	return " in " + path
}
