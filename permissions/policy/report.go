package policy

import (
	"fmt"
	"io"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// Report is what `switchboard check` shows about the policy, and `check --json` carries as
// "policy".
type Report struct {
	Sources  []Source                `json:"sources"`
	Rules    []RuleInfo              `json:"rules"`
	Servers  map[string]ServerReport `json:"servers"`
	Tools    map[string]ToolReport   `json:"tools,omitempty"`
	Errors   []string                `json:"errors,omitempty"`
	Warnings []string                `json:"warnings,omitempty"`
}

// ServerReport is one server's admission: decision "allowed", "blocked" or "exclusive", with
// the deciding rule (file#/json/pointer) and its file.
type ServerReport struct {
	Decision string `json:"decision"`
	Rule     string `json:"rule,omitempty"`
	Line     int    `json:"line,omitempty"`
	Source   string `json:"source,omitempty"`
	Reason   string `json:"reason"`
}

// ToolReport marks a tool the policy refuses ("policy-deny") or always asks about
// ("policy-ask"), or grants ("policy-allow").
type ToolReport struct {
	Mark string `json:"mark"`
	Rule string `json:"rule"`
}

// ToolName is one tool as check lists it: its registered name, its server ("" for a built-in
// tool), the server's own name for it (which a rule names when the registered name was made
// safe; "" when the same) and whether a workspace file defines its server.
type ToolName struct {
	Name, Server, Original string
	// Workspace: the server is defined by a workspace file, which a managed allow rule does not
	// grant (the gate asks; the rule names a server by name only, and a repository can take it).
	// A user's own server that takes ${workspaceFolder} is not: a repository cannot take its name.
	Workspace bool
}

// Report judges every launch and tool and gathers the rest of check's Policy section. A tool is
// judged as the gate judges it (ToolNamed): a deny or ask rule that names the server's own name
// for a tool registered under a made-safe one marks it too.
func (p *Policy) Report(launches []Launch, tools []ToolName) Report {
	r := Report{Sources: p.Sources(), Rules: p.Rules(), Servers: map[string]ServerReport{}, Warnings: p.Warnings()}
	for _, e := range p.Errors() {
		r.Errors = append(r.Errors, e.Error())
	}
	for _, l := range launches {
		d := p.Admit(l)
		sr := ServerReport{Decision: d.Word(), Reason: d.Reason}
		if d.Rule != nil {
			sr.Rule, sr.Line, sr.Source = d.Rule.Loc(), d.Rule.Line, d.Rule.File
		}
		r.Servers[l.Name] = sr
	}
	for _, t := range tools {
		server := t.Server
		if _, _, ok := cutToolName(t.Name); !ok {
			server = ""
		}
		v := p.ToolNamed(t.Name, server, t.Original)
		switch {
		case v.Deny != nil:
			r.addTool(t.Name, "policy-deny", v.Deny)
		case v.Ask != nil:
			r.addTool(t.Name, "policy-ask", v.Ask)
		case v.Allow != nil && !t.Workspace:
			r.addTool(t.Name, "policy-allow", v.Allow)
		}
	}
	return r
}

func (r *Report) addTool(name, mark string, rule *Rule) {
	if r.Tools == nil {
		r.Tools = map[string]ToolReport{}
	}
	r.Tools[name] = ToolReport{mark, rule.Loc()}
}

// WriteText writes the Policy section for people; everything taken from a file is escaped.
func (r Report) WriteText(w io.Writer) {
	fmt.Fprintln(w, "Policy")
	for _, s := range r.Sources {
		from := s.From
		if s.Import {
			from = "restrict-only from " + s.From
		}
		digest := s.Digest
		if len(digest) > 12 {
			digest = digest[:12]
		}
		if s.OwnerSID != "" {
			fmt.Fprintf(w, "  source %s (%s), owner %s, sha256 %s\n", safetext.Line(s.Path), from, sidName(s.OwnerSID), digest)
		} else {
			fmt.Fprintf(w, "  source %s (%s), owner uid %d, mode %s, sha256 %s\n", safetext.Line(s.Path), from, s.Owner, s.Mode.Perm(), digest)
		}
		if s.Err != "" {
			fmt.Fprintf(w, "    BROKEN: %s\n", safetext.Line(s.Err))
		}
		for _, c := range s.Contributed {
			fmt.Fprintf(w, "    gives %s\n", safetext.Line(c))
		}
	}
	for _, ri := range r.Rules {
		fmt.Fprintf(w, "  rule %s: %s (line %d) %s\n", ri.Effect, safetext.Line(ri.Rule.Loc()), ri.Rule.Line, safetext.Line(ri.Rule.Text))
	}
	for _, name := range sortedKeys(r.Servers) {
		s := r.Servers[name]
		line := fmt.Sprintf("  server %s: %s", safetext.Line(name), s.Decision)
		if s.Rule != "" {
			line += fmt.Sprintf(" by %s (line %d)", safetext.Line(s.Rule), s.Line)
		}
		if s.Decision == "blocked" {
			line += ": " + safetext.Line(s.Reason)
		}
		fmt.Fprintln(w, line)
	}
	for _, name := range sortedKeys(r.Tools) {
		t := r.Tools[name]
		fmt.Fprintf(w, "  tool %s: %s by %s\n", safetext.Line(name), t.Mark, safetext.Line(t.Rule))
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "  error: %s\n", safetext.Line(e))
	}
	for _, e := range r.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", safetext.Line(e))
	}
}

// WriteExplain writes a decision chain for `switchboard policy explain`.
func (d Decision) WriteExplain(w io.Writer, name string) {
	fmt.Fprintf(w, "%s: %s\n", safetext.Line(name), d.Word())
	for i, s := range d.Chain {
		line := fmt.Sprintf("  %d. %s: %s", i+1, s.Check, safetext.Line(s.Outcome))
		if s.Rule != nil {
			line += fmt.Sprintf(" (%s, line %d: %s)", safetext.Line(s.Rule.Loc()), s.Rule.Line, safetext.Line(s.Rule.Text))
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "  reason: %s\n", safetext.Line(d.Reason))
	if d.Message != "" {
		fmt.Fprintf(w, "  people see: %s\n", d.Message)
	}
}
