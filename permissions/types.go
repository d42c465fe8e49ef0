package permissions

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Mode is the permission mode a request carries (PROTOCOL.md section 4).
type Mode int

const (
	// SingleConfirm runs allowlisted tools and asks the user about the rest. The default.
	SingleConfirm Mode = iota
	// AlwaysAllow runs every tool without asking.
	AlwaysAllow
	// AllowlistOnly runs allowlisted tools and denies the rest without asking.
	AllowlistOnly
)

var modeNames = [...]string{SingleConfirm: "single-confirm", AlwaysAllow: "always-allow", AllowlistOnly: "allowlist-only"}

func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return modeNames[m]
}

// ParseMode parses a wire mode name. The empty string is SingleConfirm.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return SingleConfirm, nil
	}
	for i, n := range modeNames {
		if n == s {
			return Mode(i), nil
		}
	}
	return SingleConfirm, fmt.Errorf("permissions: unknown mode %q (want single-confirm, always-allow or allowlist-only)", s)
}

func (m Mode) MarshalJSON() ([]byte, error) { return json.Marshal(m.String()) }

func (m *Mode) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("permissions: mode must be a string: %w", err)
	}
	v, err := ParseMode(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Request is one tool call asking to pass the gate.
type Request struct {
	// Tool is the full registered name: "mcp__<server>__<tool>" or a built-in name such as "read_file".
	Tool string
	// Server is the MCP server name, or "" for a built-in tool.
	Server string
	// Definition is the fingerprint of a workspace-defined server's definition, empty for
	// servers the user defined. An allowlist entry counts for such a server only if it was
	// granted for this definition (recorded in the trust store).
	Definition string
	// Arguments are the call's JSON arguments (shown to the user, hashed in the audit log).
	Arguments json.RawMessage
	Mode      Mode
	// Turn is the agent turn the call belongs to, "" for a direct call.
	Turn string
	// ReadOnlyBuiltin marks a built-in tool that only reads the workspace (read_file, list_files,
	// search_files). Such calls run without asking in single-confirm and in allowlist-only (see the
	// package doc). MCP tools never set it: third-party annotations grant nothing, and the gate
	// ignores it when Server is set.
	ReadOnlyBuiltin bool
	// Deadline is when the gate stops waiting for the user's answer; set by the gate before it
	// asks the Prompter (Confirm's ctx ends then too).
	Deadline time.Time
	// Via names what asked for a direct call besides the person, for the question to say so: the
	// tool whose MCP Apps view made the call; "" for the person's own calls and the model's.
	Via string
	// ViewID is that view's id: the Prompter bounds the questions of one view (a view that calls
	// in a loop must not flood the person), refusing with [ErrNotAsked].
	ViewID string
}

// Answer is the user's answer to a confirm prompt.
type Answer int

const (
	AnswerDeny   Answer = iota
	AnswerOnce          // allow this call
	AnswerAlways        // allow this tool from now on (adds the tool to the allowlist)
	AnswerServer        // allow every tool of this server (adds mcp__<server>__*)
)

var answerNames = [...]string{AnswerDeny: "deny", AnswerOnce: "once", AnswerAlways: "always", AnswerServer: "server"}

func (a Answer) String() string {
	if a < 0 || int(a) >= len(answerNames) {
		return fmt.Sprintf("Answer(%d)", int(a))
	}
	return answerNames[a]
}

// ParseAnswer parses a wire decision ("once", "always", "server", "deny").
func ParseAnswer(s string) (Answer, error) {
	for i, n := range answerNames {
		if n == s {
			return Answer(i), nil
		}
	}
	return AnswerDeny, fmt.Errorf("permissions: unknown decision %q (want once, always, server or deny)", s)
}

// A Prompter asks the user whether a tool call may run. It is implemented by the host
// application, which hands the question to its front end (the editor, or the terminal for
// `switchboard call`).
//
// The prompter owns the order of an answer and the timeout: ctx ends at req.Deadline (or earlier,
// when the turn is cancelled), and Confirm returns an answer with a nil error only if it took that
// answer before ctx ended, whenever it returns. The gate trusts it: what the prompter told the user
// (say, "approved") is what the gate decides. When the deadline came first, Confirm returns
// ctx.Err() or ErrNoAnswer{By: ByTimeout}; when the turn was cancelled, ctx.Err().
type Prompter interface {
	Confirm(ctx context.Context, req Request) (Answer, error)
}

// Who or what decided a call.
const (
	ByMode      = "mode"      // always-allow, or allowlist-only with no match
	ByAllowlist = "allowlist" // an allowlist entry matched
	ByBuiltin   = "builtin"   // a read-only built-in tool
	ByUser      = "user"
	ByTimeout   = "timeout"
	ByCancel    = "cancelled"
	ByError     = "error" // no prompter, a prompter error, a broken allowlist file
	// ByDisconnect: the editor (or the terminal) went away while the question was open.
	ByDisconnect = "disconnect"
	// ByShutdown: the host shut down while the question was open.
	ByShutdown = "shutdown"
	// ByPin: the tool's definition changed since the user approved it (held back), or the user
	// accepted a definition (GateOptions.Pins).
	ByPin = "pin"
	// ByPolicy: the organisation's policy decided (a permissions.deny, ask or allow rule, a
	// disabled mode, or a broken policy); Decision.Entry is the rule as file#/json/pointer.
	ByPolicy = "policy"
	// ByLimit: the Prompter refused to ask ([ErrNotAsked]): the MCP Apps view that made the call
	// already has a question open, or the person has stopped its questions.
	ByLimit = "limit"
)

// PolicyVerdict is what the organisation's policy (GateOptions.Policy) says about one call.
// The host builds it from permissions/policy; this package does not import that one.
type PolicyVerdict struct {
	// Deny refuses the call in every mode, always-allow included.
	Deny bool
	// Ask makes the gate ask even when the allowlist or the mode would let the call run; in
	// allowlist-only it is refused.
	Ask bool
	// Allow is a managed grant: the call runs without asking (after pins and Ask).
	Allow bool
	// AllowNotHere: a managed allow rule names the tool, but its server is one a workspace file
	// defines, which a rule that names servers by name cannot vouch for (a repository can give
	// its server any name): the rule (Rule) grants nothing and the call is decided as without it.
	AllowNotHere bool
	// Rule is the deciding rule as file#/json/pointer, File its file; Reason one line naming it.
	Rule, File, Reason string
	// ModeOff: the request's mode is disabled by the policy; the gate decides in Fallback
	// instead (the host refuses a disabled mode asked for explicitly before it gets here).
	ModeOff  bool
	Fallback Mode
	ModeRule string
	// NoUserGrants (allowManagedPermissionRulesOnly): the user's allowlist grants nothing, and
	// "always" answers are taken as "once".
	NoUserGrants bool
}

// PinVerdict is what the host's pin check (GateOptions.Pins) says about one MCP tool call.
type PinVerdict struct {
	// Hold refuses the call whatever the mode or the allowlist says: its definition changed
	// since the user approved it. Reason says so and how to review it.
	Hold bool
	// Ask is for a tool the user never saw (new since the server was pinned): a whole-server
	// allowlist entry or the always-allow mode does not let it run; the user is asked (in
	// allowlist-only mode it is refused). Approved is then called when the user allows it.
	Ask      bool
	Approved func()
	Reason   string
	// Note is added to the reason of the decision (pinning "warn": a changed tool still runs).
	Note string
}

// ErrNoAnswer is the error a Prompter returns when nobody can answer any more: the editor went away
// (By == ByDisconnect), the host is shutting down (By == ByShutdown) or the deadline came first
// (By == ByTimeout). The gate denies the call and records that By, never ByUser.
type ErrNoAnswer struct{ By string }

func (e ErrNoAnswer) Error() string {
	switch e.By {
	case ByShutdown:
		return "no answer: Switchboard is shutting down"
	case ByDisconnect:
		return "no answer: the editor or terminal went away"
	case ByTimeout:
		return "no answer in time"
	}
	return "no answer (" + e.By + ")"
}

// ErrNotAsked is a Prompter's error when it refuses to put the question to the person at all
// (the gate decides ByLimit): Why says why, in a sentence for the caller.
type ErrNotAsked struct{ Why string }

func (e ErrNotAsked) Error() string { return "not asked: " + e.Why }

// Decision is the gate's verdict on one Request.
type Decision struct {
	Allowed bool
	// Answer is the user's answer when By == ByUser.
	Answer Answer
	// By says what decided (one of the By* constants).
	By string
	// Entry and File name the allowlist entry that matched, when By == ByAllowlist. When By ==
	// ByUser and the answer was "always" or "server", they name the entry that was saved (empty if
	// saving failed; Reason then says why).
	Entry string
	File  string
	// Reason is a short human sentence, e.g. "denied by the user" or "allowlist file has an error: ...".
	Reason string
}
