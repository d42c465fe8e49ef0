package policy

import (
	"fmt"
	"slices"
	"strings"
)

// ExplainTool is the decision chain for one tool name (mcp__<server>__<tool> or a built-in
// name), for `switchboard policy explain`.
func (p *Policy) ExplainTool(tool string) Decision {
	server, _, isMCP := cutToolName(tool)
	if !isMCP {
		server = ""
	}
	var chain []Step
	if p.Broken() != nil {
		chain = append(chain, Step{"policy", "broken: " + p.Broken().Error(), p.brokenRule()})
	}
	v := p.Tool(tool, server)
	d := Decision{Allowed: v.Deny == nil, Reason: v.Reason, Message: v.Message}
	add := func(check string, r *Rule, hit string) {
		if r != nil {
			chain = append(chain, Step{check, hit, r})
		} else {
			chain = append(chain, Step{check, "no rule", nil})
		}
	}
	if p.Broken() == nil {
		add("permissions.deny", v.Deny, "denied: refused in every mode and not offered to the model")
		if v.Deny == nil {
			add("permissions.ask", v.Ask, "asks every time, even when allowlisted; denied in allowlist-only")
			add("permissions.allow", v.Allow, "allowed without asking (a managed grant), except from a server a workspace file defines, which is asked about")
			if r := p.ManagedRulesOnly(); r != nil {
				chain = append(chain, Step{"allowManagedPermissionRulesOnly", "the user's allowlist grants nothing", r})
			}
		}
	}
	for _, m := range knownModes {
		if r := p.DisabledModes()[m]; r != nil {
			chain = append(chain, Step{"disabledModes", "mode " + m + " is disabled", r})
		}
	}
	switch {
	case v.Deny != nil:
		d.Rule, d.Verdict = v.Deny, "policy-deny"
	case v.Ask != nil:
		d.Rule, d.Verdict = v.Ask, "policy-ask"
	case v.Allow != nil:
		d.Rule, d.Verdict = v.Allow, "policy-allow"
	default:
		d.Verdict = "no rule"
		d.Reason = "no policy rule names " + tool + ": the user's allowlist and mode decide"
	}
	d.Chain = chain
	return d
}

// ExplainServer is Admit with its chain; it also says which rules name the server, so that an
// admin sees a name-only rule that the launch did not reach.
func (p *Policy) ExplainServer(l Launch) Decision {
	d := p.Admit(l)
	if p == nil {
		return d
	}
	for _, sr := range p.denied {
		if sr.name != "" && !strings.EqualFold(sr.name, l.Name) {
			continue
		}
		if sr.name != "" && !slices.ContainsFunc(d.Chain, func(s Step) bool { return s.Rule == sr.rule }) {
			d.Chain = append(d.Chain, Step{"note", "this rule names the server", sr.rule})
		}
	}
	return d
}

// RuleInfo is one effective rule, for check's Policy section.
type RuleInfo struct {
	Effect string `json:"effect"`
	Rule   *Rule  `json:"rule"`
}

// Rules lists the effective rules, most restrictive first.
func (p *Policy) Rules() []RuleInfo {
	if p == nil {
		return nil
	}
	var out []RuleInfo
	add := func(effect string, r *Rule) {
		if r != nil {
			out = append(out, RuleInfo{effect, r})
		}
	}
	for _, d := range p.denied {
		add("server denied", d.rule)
	}
	add("MCP access "+p.mcpAccess, p.mcpAccessRule)
	for _, e := range p.exclusive {
		add(fmt.Sprintf("only managed servers (%d)", len(e.servers)), e.rule)
	}
	add("allowManagedMcpServersOnly", p.managedOnly)
	for _, al := range p.allowlists {
		for _, e := range al.entries {
			add("server allowed ("+al.from+" allowlist)", e.rule)
		}
		if len(al.entries) == 0 {
			add("no server allowed ("+al.from+" allowlist is empty)", al.key)
		}
	}
	add("workspace servers denied", p.workspaceDeny)
	add("local servers run sandboxed only", p.sandboxRule)
	add("sampling denied", p.samplingDeny)
	add("shared servers "+p.shared, p.sharedRule)
	add("pinning "+p.pinning, p.pinningRule)
	for _, m := range knownModes {
		add("mode "+m+" disabled", p.disabledModes[m])
	}
	add("the user's allowlist grants nothing", p.managedRules)
	for _, set := range []struct {
		effect string
		m      map[string][]toolRule
	}{{"tool denied", p.toolDeny}, {"tool always asks", p.toolAsk}, {"tool allowed", p.toolAllow}} {
		for _, k := range sortedKeys(set.m) {
			for _, tr := range set.m[k] {
				add(set.effect+" "+tr.pattern, tr.rule)
			}
		}
	}
	return out
}
