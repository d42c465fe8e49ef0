package policy

import (
	"fmt"
	"strings"
)

// ToolVerdict is what the policy says about one tool call, for the gate (design section 6.3,
// gate order): Deny refuses it in every mode (and the tool is not offered to the model); Ask
// makes the gate ask even when the user allowlisted it (and deny in allowlist-only); Allow is a
// managed grant. When Deny is set, Ask and Allow are nil: the most restrictive rule wins.
type ToolVerdict struct {
	Deny, Ask, Allow *Rule
	// Reason is one line naming the rule, for the gate's Decision and the audit.
	Reason string
	// Message is the person's sentence for a denial.
	Message string
}

// Tool returns the verdict for a call of tool (its registered name) of server ("" for a
// built-in tool). It is on every call's path: with no rules it is two map lookups.
func (p *Policy) Tool(tool, server string) ToolVerdict {
	if p == nil {
		return ToolVerdict{}
	}
	if len(p.broken) > 0 {
		if server == "" {
			return ToolVerdict{} // built-in tools keep working, so the editor can still explain
		}
		r := p.brokenRule()
		why := "the organisation's policy is broken (" + p.broken[0].Error() + "), so every MCP call is refused"
		return ToolVerdict{Deny: r, Reason: "denied: " + why, Message: p.message(r, why, "")}
	}
	if len(p.toolDeny)+len(p.toolAsk)+len(p.toolAllow) == 0 {
		return ToolVerdict{}
	}
	part := tool
	if server != "" {
		s, t, ok := cutToolName(tool)
		if !ok || !strings.EqualFold(s, server) {
			return ToolVerdict{}
		}
		part = t
	}
	key := strings.ToLower(server)
	if server != "" {
		if r := findTool(p.toolDeny["*"], part, "*", false); r != nil {
			return ToolVerdict{Deny: r, Reason: fmt.Sprintf("denied by the organisation's policy: %s %s in %s", r.Key(), r.Text, r.Loc()),
				Message: p.message(r, "", "")}
		}
	}
	if r := findTool(p.toolDeny[key], part, server, false); r != nil {
		return ToolVerdict{Deny: r, Reason: fmt.Sprintf("denied by the organisation's policy: %s %s in %s", r.Key(), r.Text, r.Loc()),
			Message: p.message(r, "", "")}
	}
	var v ToolVerdict
	r := findTool(p.toolAsk[key], part, server, false)
	if r == nil && server != "" {
		r = findTool(p.toolAsk["*"], part, "*", false)
	}
	if r != nil {
		v.Ask = r
		v.Reason = fmt.Sprintf("the organisation's policy asks every time: %s %s in %s", r.Key(), r.Text, r.Loc())
	}
	if r := findTool(p.toolAllow[key], part, server, true); r != nil && v.Ask == nil {
		v.Allow = r
		v.Reason = fmt.Sprintf("allowed by the organisation's policy: %s %s in %s", r.Key(), r.Text, r.Loc())
	}
	return v
}

// Builtin is Tool for a built-in tool, told whether the tool only reads. A broken policy refuses
// the built-ins that change something (edit_file), since the rules that might forbid them are
// unknown; the read-only ones keep working, so the editor can still explain.
func (p *Policy) Builtin(tool string, readOnly bool) ToolVerdict {
	if p != nil && len(p.broken) > 0 && !readOnly {
		r := p.brokenRule()
		why := "the organisation's policy is broken (" + p.broken[0].Error() + "), so only built-in tools that read run"
		return ToolVerdict{Deny: r, Reason: "denied: " + why, Message: p.message(r, why, "")}
	}
	return p.Tool(tool, "")
}

// ToolNamed is Tool for an MCP tool that its server calls original. Switchboard registers a
// tool whose name has characters outside [A-Za-z0-9_-], or is too long, under a made-safe name
// with a hash (mcpbridge/naming.go), which no rule written for the tool names: Claude Code, whose
// rules these are, writes such a character as '_' and never cuts. A deny or ask rule that names
// the tool that way covers it too. Allow rules match the registered name only (a grant is for
// the name the person sees).
func (p *Policy) ToolNamed(tool, server, original string) ToolVerdict {
	v := p.Tool(tool, server)
	if v.Deny != nil || server == "" || original == "" || len(p.broken) > 0 {
		return v
	}
	alt := RuleName(server, original)
	if alt == tool {
		return v
	}
	w := p.Tool(alt, server)
	switch {
	case w.Deny != nil:
		return w
	case w.Ask != nil && v.Ask == nil:
		v.Ask, v.Allow, v.Reason = w.Ask, nil, w.Reason
	}
	return v
}

// RuleName is server's tool as a rule names it (mcp__server__tool, the tool's own name with each
// character outside [A-Za-z0-9_-] as '_', never cut): what `policy explain` takes for a tool
// registered under a made-safe name.
func RuleName(server, tool string) string { return "mcp__" + server + "__" + ruleName(tool) }

// ruleName is a tool's name as a rule spells it: each character outside [A-Za-z0-9_-] as '_'.
func ruleName(tool string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 && isNameChar(byte(r)) {
			return r
		}
		return '_'
	}, tool)
}

// findTool finds the first rule covering the tool part (built-in name when server is "").
// Deny and ask rules compare the server without regard to case (the map key already did);
// allow rules compare it exactly.
func findTool(rules []toolRule, part, server string, exact bool) *Rule {
	for _, tr := range rules {
		if exact && tr.server != server {
			continue
		}
		if server == "" {
			if tr.tool == part {
				return tr.rule
			}
			continue
		}
		if tr.matches(part) {
			return tr.rule
		}
	}
	return nil
}

// Offered reports whether a tool may be offered to the model at all (a policy deny removes it
// from the tool list).
func (p *Policy) Offered(tool, server string) bool { return p.Tool(tool, server).Deny == nil }

// ModeVerdict says what a requested mode becomes. A disabled mode asked for explicitly (the
// editor or the user named it for this turn) is refused; one that came from settings falls
// back to single-confirm (or, when that is disabled too, allowlist-only) with a warning.
type ModeVerdict struct {
	Mode    string // the mode to use; "" when refused
	Refused *Rule  // the rule that disables the asked mode
	Warning string // for a fallback, once
	Message string // for a refusal, the person's sentence
}

// Mode decides the mode. explicit is true when the mode was asked for on this request.
func (p *Policy) Mode(mode string, explicit bool) ModeVerdict {
	if mode == "" {
		mode = ModeSingleConfirm
	}
	if p == nil {
		return ModeVerdict{Mode: mode}
	}
	r, off := p.disabledModes[mode]
	if len(p.broken) > 0 && mode == ModeAlwaysAllow && !off {
		// The rules are unknown, and this mode is the one a policy most often turns off: fail
		// closed.
		r, off = p.brokenRule(), true
	}
	if !off {
		return ModeVerdict{Mode: mode}
	}
	if explicit {
		return ModeVerdict{Refused: r, Message: p.message(r, "mode "+mode+" is disabled", "")}
	}
	fb := ModeSingleConfirm
	if _, x := p.disabledModes[fb]; x {
		fb = ModeAllowlistOnly
	}
	return ModeVerdict{Mode: fb, Refused: r,
		Warning: fmt.Sprintf("mode %s is disabled by the organisation's policy (%s in %s); using %s", mode, r.Key(), r.Loc(), fb)}
}

// DisabledModes lists the modes the policy turns off, with their rules.
func (p *Policy) DisabledModes() map[string]*Rule {
	if p == nil {
		return nil
	}
	out := make(map[string]*Rule, len(p.disabledModes))
	for k, v := range p.disabledModes {
		out[k] = v
	}
	return out
}

// Pinning is the forced pinning level ("enforce", "warn", "off") and its rule; "" when the
// policy does not set it and the user's choice stands. A user's stricter choice still counts.
func (p *Policy) Pinning() (string, *Rule) {
	if p == nil {
		return "", nil
	}
	return p.pinning, p.pinningRule
}

// SamplingDenied is the rule that forbids servers to use the model, or nil.
func (p *Policy) SamplingDenied() *Rule {
	if p == nil {
		return nil
	}
	if len(p.broken) > 0 {
		return p.brokenRule()
	}
	return p.samplingDeny
}

// SharedServers is the sharedServers value ("allow", "workspace-only", "deny", or "" unset).
func (p *Policy) SharedServers() (string, *Rule) {
	if p == nil {
		return "", nil
	}
	return p.shared, p.sharedRule
}

// ManagedRulesOnly is the allowManagedPermissionRulesOnly rule, or nil: when set, the user's
// allowlist grants nothing.
func (p *Policy) ManagedRulesOnly() *Rule {
	if p == nil {
		return nil
	}
	return p.managedRules
}

// Broken is the first problem that makes the policy fail closed, or nil.
func (p *Policy) Broken() error {
	if p == nil || len(p.broken) == 0 {
		return nil
	}
	return p.broken[0]
}

// Errors lists every problem found in the policy's sources.
func (p *Policy) Errors() []error {
	if p == nil {
		return nil
	}
	return append([]error(nil), p.broken...)
}

// Warnings lists what check should point out: name-only denies, unknown keys, ignored rules.
func (p *Policy) Warnings() []string {
	if p == nil {
		return nil
	}
	return append([]string(nil), p.warnings...)
}

// Sources lists the files read, in order.
func (p *Policy) Sources() []Source {
	if p == nil {
		return nil
	}
	return append([]Source(nil), p.sources...)
}

// Empty reports whether no policy source exists (check then shows no Policy section).
func (p *Policy) Empty() bool { return p == nil || len(p.sources) == 0 }

// Digest identifies the policy's content; a reload with the same digest changed nothing.
func (p *Policy) Digest() string {
	if p == nil {
		return ""
	}
	return p.digest
}

// GalleryURL is VS Code's McpGalleryServiceUrl, kept for `mcp add --from-registry`.
func (p *Policy) GalleryURL() string {
	if p == nil {
		return ""
	}
	return p.gallery
}

// RegistryURL is the organisation's MCP Registry and the rule that names it: Switchboard's
// mcpRegistryUrl, else VS Code's McpGalleryServiceUrl; "" and nil when the policy names none (the
// official registry is then the one, for mcp add and for mcpAccess registry alike).
func (p *Policy) RegistryURL() (string, *Rule) {
	switch {
	case p == nil:
		return "", nil
	case p.registryRule != nil:
		return p.registryURL, p.registryRule
	case p.galleryRule != nil:
		return p.gallery, p.galleryRule
	}
	return "", nil
}

// RegistryOnly reports whether mcpAccess is "registry" (VS Code's ChatMCP "registry"): only
// servers installed from the organisation's registry may start. Admit then needs Launch.Registry.
func (p *Policy) RegistryOnly() bool {
	return p != nil && len(p.broken) == 0 && p.mcpAccess == "registry"
}
