package policy

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// Scope says who defined a server.
type Scope string

const (
	ScopeUser      Scope = "user"      // the user's file, editor settings, --config, mcp add
	ScopeWorkspace Scope = "workspace" // a workspace file, or a user definition that runs what the open folder holds
	ScopeManaged   Scope = "managed"   // a managed-mcp.json
)

// A Launch is what a server would run, after every ${...} is resolved: policy matches what
// runs, never the template, so ${env:X} cannot dodge a rule.
type Launch struct {
	Name  string
	Scope Scope
	// Source is where the definition came from (a file, "editor settings"), for messages.
	Source string
	// Transport is "stdio", "http" or "sse".
	Transport string
	// Command and Args are the stdio launch as resolved (variables expanded).
	Command string
	Args    []string
	// Path is Command found on the server's PATH: the program that would run. "" when it cannot
	// be found (an allowlist serverCommand then never matches).
	Path string
	// URL is the resolved URL of an HTTP or SSE server.
	URL string
	// Managed is the managed-mcp.json file the server came from (Scope ScopeManaged).
	Managed string
	// Registry, under mcpAccess registry, is what the host found when it checked the server
	// against the organisation's registry (mcpbridge/mcpregistry.Verify): "name@version from
	// URL" when the launch is exactly the registry's, else "" with RegistryErr saying why. The
	// policy package does not fetch; it decides on what it is told.
	Registry    string
	RegistryErr string
	// Sandboxed: a stdio server whose entry confines it ("sandbox": true or a profile).
	Sandboxed bool
	// NoSandbox says why this system cannot run a sandboxed server ("" when it can), for the
	// message of a server that mcpSandbox "required" blocks.
	NoSandbox string
	// CodeEnv are the env keys the entry sets that make its program load, fetch or find other
	// code (PATH to another interpreter, NODE_OPTIONS, LD_PRELOAD, npm_config_registry, ...), as
	// the host judges them. An allowedMcpServers serverCommand does not admit such a launch: what
	// runs is no longer the program the administrator vetted.
	CodeEnv []string
	// RunnerDir is the folder a package runner (npx, uvx, pnpm dlx, ...) runs in, when that is not
	// the root: the folder's node_modules, .npmrc or project files, and those of the folders above
	// it, choose what the runner runs. An allowedMcpServers serverCommand does not admit it either.
	RunnerDir string
}

func (l Launch) stdio() bool { return l.Transport == "" || l.Transport == "stdio" }

// Decision is the policy's answer for one server or one tool call.
type Decision struct {
	Allowed bool `json:"allowed"`
	// Exclusive: the server was admitted as one of a managed-mcp.json's servers.
	Exclusive bool `json:"exclusive,omitempty"`
	// Rule is the rule that decided; nil when no rule applied (allowed because nothing restricts).
	Rule *Rule `json:"rule,omitempty"`
	// Reason says what decided in one line, for logs, the audit and the model.
	Reason string `json:"reason"`
	// Message is the one sentence for a person (escaped), set when something was blocked.
	Message string `json:"message,omitempty"`
	// Chain lists each check that was made, in order, for `policy explain`.
	Chain []Step `json:"chain"`
	// Verdict, for a tool (ExplainTool): "policy-deny", "policy-ask", "policy-allow" or "no rule".
	Verdict string `json:"verdict,omitempty"`
}

// A Step is one check of a decision chain.
type Step struct {
	Check   string `json:"check"`
	Outcome string `json:"outcome"`
	Rule    *Rule  `json:"rule,omitempty"`
}

// Decision values of check's "decision" column.
func (d Decision) Word() string {
	switch {
	case d.Verdict != "":
		return d.Verdict
	case !d.Allowed:
		return "blocked"
	case d.Exclusive:
		return "exclusive"
	}
	return "allowed"
}

// Admit decides whether a server may start (design section 6.3, server admission): the deny
// lists of every source; managed-mcp.json (exclusive); mcpAccess; every policy allowlist; then
// workspaceServers. A nil or empty Policy admits everything. A broken Policy blocks everything.
func (p *Policy) Admit(l Launch) Decision {
	var chain []Step
	step := func(check, outcome string, r *Rule) { chain = append(chain, Step{check, outcome, r}) }
	blocked := func(r *Rule, why string) Decision {
		step("result", "blocked", r)
		return Decision{Rule: r, Reason: why, Message: p.message(r, why, ""), Chain: chain}
	}
	if p == nil {
		return Decision{Allowed: true, Reason: "no policy", Chain: []Step{{"policy", "none", nil}}}
	}
	if len(p.broken) > 0 {
		r := p.brokenRule()
		step("policy", "broken: "+p.broken[0].Error(), r)
		return blocked(r, "the organisation's policy is broken ("+p.broken[0].Error()+"), so every MCP server is blocked")
	}
	for _, d := range p.denied {
		if p.serverRuleMatches(d, l, false) {
			step("deniedMcpServers", "matches", d.rule)
			if d.url != "" && !asciiHost(l.URL) {
				why := fmt.Sprintf("its address's host name is not plain ASCII, so %s %s cannot be checked against the name it connects to", d.rule.Key(), d.rule.Text)
				step("result", "blocked", d.rule)
				return Decision{Rule: d.rule, Reason: why, Message: p.message(d.rule, why, "write the host as its ASCII (xn--) name"), Chain: chain}
			}
			return blocked(d.rule, fmt.Sprintf("denied by %s %s", d.rule.Key(), d.rule.Text))
		}
	}
	step("deniedMcpServers", fmt.Sprintf("no match in %d entries", len(p.denied)), nil)
	if p.mcpAccess == "none" {
		step("mcpAccess", "none", p.mcpAccessRule)
		return blocked(p.mcpAccessRule, "MCP is turned off (mcpAccess none)")
	}
	exclusive := false
	var managedRule *Rule
	if len(p.exclusive) > 0 {
		r := p.exclusive[0].rule
		i := slices.IndexFunc(p.managed, func(m ManagedServer) bool { return m.Name == l.Name })
		if l.Scope != ScopeManaged || l.Managed == "" || i < 0 || p.managed[i].Rule.File != l.Managed {
			step("managed-mcp.json", "not one of its servers", r)
			return blocked(r, fmt.Sprintf("only the servers of %s may start", r.File))
		}
		managedRule = p.managed[i].Rule
		step("managed-mcp.json", "one of its servers", managedRule)
		exclusive = true
	}
	if !exclusive {
		if p.managedOnly != nil && len(p.allowlists) == 0 {
			step("allowManagedMcpServersOnly", "no managed allowlist: nothing is allowed", p.managedOnly)
			return blocked(p.managedOnly, "only servers on the organisation's allowlist may start, and it lists none")
		}
		if p.mcpAccess == "registry" {
			// Only what was installed from the registry and still is exactly its server.json; the
			// allowlists below narrow it further, if there are any.
			if l.Registry == "" {
				why := l.RegistryErr
				if why == "" {
					why = "it was not checked against the organisation's registry"
				}
				step("mcpAccess", "registry: "+why, p.mcpAccessRule)
				d := blocked(p.mcpAccessRule, "only servers installed from the organisation's registry may start (mcpAccess registry): "+why)
				d.Message = p.messageWhy(p.mcpAccessRule, "only servers installed from the organisation's registry may start, and "+why)
				return d
			}
			step("mcpAccess", "registry: "+l.Registry, p.mcpAccessRule)
		}
		for _, al := range p.allowlists {
			m, how := p.allowMatch(al, l)
			if m == nil && how == howRunnerDir {
				how = fmt.Sprintf("a serverCommand entry matches, but %s runs in %s, where that folder's packages and settings can choose what it runs", l.Command, l.RunnerDir)
				step("allowedMcpServers ("+al.from+")", how, al.key)
				d := blocked(al.key, fmt.Sprintf("not in %s (%s)", al.key.Key(), how))
				d.Message = p.messageDetail(al.key, d.Reason, how, `run it from the root folder ("cwd": "/")`)
				return d
			}
			if m == nil && how == howCodeEnv {
				how = fmt.Sprintf("a serverCommand entry matches, but the server's env sets %s, which can make the command run other code", strings.Join(l.CodeEnv, ", "))
				step("allowedMcpServers ("+al.from+")", how, al.key)
				d := blocked(al.key, fmt.Sprintf("not in %s (%s)", al.key.Key(), how))
				d.Message = p.messageDetail(al.key, d.Reason, how, "remove "+strings.Join(l.CodeEnv, ", ")+" from the server's env")
				return d
			}
			if m == nil {
				step("allowedMcpServers ("+al.from+")", how, al.key)
				return blocked(al.key, fmt.Sprintf("not in %s (%s)", al.key.Key(), how))
			}
			step("allowedMcpServers ("+al.from+")", "matches", m)
		}
	}
	if l.Scope == ScopeWorkspace && p.workspaceDeny != nil {
		step("workspaceServers", "deny", p.workspaceDeny)
		return blocked(p.workspaceDeny, "servers defined by a workspace may not start (workspaceServers deny)")
	}
	if r := p.sandboxRule; r != nil && l.stdio() {
		if !l.Sandboxed {
			// Blocked, not confined by a default profile the person never saw: what runs is what
			// the entry says, and the entry (its trust, its fingerprint) is the person's to change.
			step("mcpSandbox", "required, and the entry has no sandbox", r)
			why, hint := "local servers must run sandboxed (mcpSandbox required)", `add "sandbox": true to the server's entry`
			if l.NoSandbox != "" {
				why += "; this system cannot sandbox one: " + l.NoSandbox
				hint = "this system cannot run a sandboxed server (" + l.NoSandbox + ")"
			}
			step("result", "blocked", r)
			return Decision{Rule: r, Reason: why, Message: p.message(r, why, hint), Chain: chain}
		}
		step("mcpSandbox", "required: the entry is sandboxed", r)
	}
	step("result", "allowed", nil)
	return Decision{Allowed: true, Exclusive: exclusive, Rule: managedRule, Reason: "allowed by the organisation's policy", Chain: chain}
}

// brokenRule names the first broken file as a rule, so that status and audit can carry it.
func (p *Policy) brokenRule() *Rule {
	r := &Rule{Text: "broken policy file", From: FromSwitchboard}
	if fe, ok := p.broken[0].(*FileError); ok {
		r.File, r.Line, r.Col = fe.File, fe.Line, fe.Col
	}
	for _, s := range p.sources {
		if s.Path == r.File {
			r.From = s.From
		}
	}
	return r
}

// message is the person's sentence: what blocked it, where, what the person can do (hint, when
// there is something), and whom to ask. Everything from a file is escaped (a policy file is
// admin-written, but the server name and paths are not).
func (p *Policy) message(r *Rule, why, hint string) string { return p.messageDetail(r, why, "", hint) }

// messageDetail is message with a detail in brackets after the rule's place (what the registry
// check found).
func (p *Policy) messageDetail(r *Rule, why, detail, hint string) string {
	where := ""
	if r != nil && r.File != "" {
		where = " in " + r.File
		if r.Line > 0 {
			where += fmt.Sprintf(":%d:%d", r.Line, r.Col)
		}
	}
	what := why
	if r != nil && r.Pointer != "" {
		what = r.Key() + " " + r.Text
	}
	if r != nil && r.File != "" && strings.Contains(what, r.File) {
		where = "" // the reason names the place already (a broken file's error)
	}
	contact := "Ask your administrator."
	if c := p.contact.String(); c != "" {
		contact = "Contact " + c + "."
	}
	if detail != "" {
		where += " (" + detail + ")"
	}
	if hint != "" {
		where += ": " + hint
	}
	return safetext.Line("Blocked by your organisation: " + what + where + ". " + contact)
}

// messageWhy is message with the reason spelled out after the rule (the rule alone does not say
// what the person can change).
func (p *Policy) messageWhy(r *Rule, why string) string { return p.messageDetail(r, why, why, "") }

// Contact is whom the policy names to ask.
func (p *Policy) Contact() Contact {
	if p == nil {
		return Contact{}
	}
	return p.contact
}

// serverRuleMatches reports whether one allowedMcpServers/deniedMcpServers entry matches l. A
// deny entry matches in every way the launch could be said to be it (name without regard to
// case, the command by its name or by the program it resolves to, started through env or sh -c,
// a package runner's package with or without -y and a version); an allow entry matches only
// what it names exactly.
func (p *Policy) serverRuleMatches(r serverRule, l Launch, allow bool) bool {
	switch {
	case r.name != "":
		if allow {
			return l.Name == r.name
		}
		return strings.EqualFold(l.Name, r.name)
	case r.command != nil && allow:
		return l.stdio() && slices.Equal(l.Args, r.command[1:]) && p.commandMatches(r.command[0], l, true)
	case r.command != nil:
		if !l.stdio() {
			return false
		}
		// The launch, and what a wrapper in it starts (env, sh -c), compared as the program
		// understands its arguments (command.go).
		program := filepath.Base(r.command[0])
		launches, cut := unwrapped(l, p.lookPath)
		for _, f := range launches {
			if denyArgsMatch(program, r.command[1:], f.Args) && p.commandMatches(r.command[0], f, false) {
				return true
			}
		}
		return cut // wrappers past any real launch's depth: what runs in the end was not seen
	case r.url != "":
		return !l.stdio() && urlMatches(r.url, l.URL, allow)
	}
	return false
}

// commandMatches compares a rule's command with what l runs. An allow rule names a program:
// a bare name is found on the host's PATH, and it matches when l runs that same file. A deny
// rule matches that too, and also any program of the same name (a copy of npx elsewhere is
// still npx), and a written command equal to the rule's.
func (p *Policy) commandMatches(rc string, l Launch, allow bool) bool {
	want := rc
	if !strings.ContainsRune(rc, '/') && !strings.ContainsRune(rc, filepath.Separator) {
		if found, err := p.lookPath(rc); err == nil {
			want = found
		} else {
			want = ""
		}
	}
	if l.Path != "" && want != "" && sameFile(l.Path, want) {
		return true
	}
	if allow {
		return false
	}
	if l.Command == rc {
		return true
	}
	if strings.ContainsRune(rc, '/') {
		return l.Path != "" && filepath.Clean(l.Path) == filepath.Clean(rc)
	}
	names := []string{l.Command, l.Path}
	if l.Path != "" {
		if real, err := filepath.EvalSymlinks(l.Path); err == nil {
			names = append(names, real)
		}
	}
	for _, n := range names {
		if n != "" && sameProgramName(filepath.Base(n), rc) {
			return true
		}
	}
	return false
}

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

func sameProgramName(base, rule string) bool {
	if runtime.GOOS == "windows" {
		trim := func(s string) string {
			s = strings.ToLower(s)
			for _, ext := range []string{".exe", ".cmd", ".bat", ".com"} {
				s = strings.TrimSuffix(s, ext)
			}
			return s
		}
		return trim(base) == trim(rule)
	}
	return base == rule
}

// howCodeEnv is allowMatch's how when a serverCommand entry matched a launch whose env loads
// other code (Launch.CodeEnv).
const howCodeEnv = "code env"

// howRunnerDir is allowMatch's how when a serverCommand entry matched a package runner that runs
// in a folder (Launch.RunnerDir).
const howRunnerDir = "runner dir"

// allowMatch finds the entry of al that admits l, following Claude Code: a stdio server must
// match a serverCommand entry when al has any, an HTTP server a serverUrl entry when al has
// any; otherwise a serverName entry. how says why nothing matched.
func (p *Policy) allowMatch(al allowlist, l Launch) (*Rule, string) {
	kind := "serverName"
	switch {
	case l.stdio() && al.hasCmd:
		kind = "serverCommand"
	case !l.stdio() && al.hasURL:
		kind = "serverUrl"
	}
	codeEnv, runnerDir := false, false
	for _, e := range al.entries {
		ok := false
		switch kind {
		case "serverCommand":
			ok = e.command != nil && p.serverRuleMatches(e, l, true)
			if ok && len(l.CodeEnv) > 0 {
				ok, codeEnv = false, true
			}
			if ok && l.RunnerDir != "" {
				ok, runnerDir = false, true
			}
		case "serverUrl":
			ok = e.url != "" && p.serverRuleMatches(e, l, true)
		default:
			ok = e.name != "" && p.serverRuleMatches(e, l, true)
		}
		if ok {
			return e.rule, ""
		}
	}
	if codeEnv {
		return nil, howCodeEnv
	}
	if runnerDir {
		return nil, howRunnerDir
	}
	if len(al.entries) == 0 {
		return nil, "the allowlist is empty"
	}
	return nil, "no " + kind + " entry matches"
}

// urlMatches matches a serverUrl pattern (* matches any run of characters) against a URL. Both
// are normalised first (scheme and host lower case, no user info, no default port, no
// fragment, an empty path is "/"), so a deny cannot be dodged by spelling the same address
// another way. A "*" in the host part never matches past the host, so https://*.example.com/*
// does not admit https://evil.test/x.example.com/. A deny matches when any form of the URL
// (normForms: as sent, decoded, cleaned) matches, and also the URL as written; an allow only
// when every form does.
//
// A host name that is not plain ASCII is not what the HTTP transport dials: it maps it first
// (IDNA: width, case, dots; "ｅｖｉｌ｡example" is evil.example on the wire). A deny matches such a
// URL whatever it names and an allow never does, so a rule is only ever decided on an ASCII name,
// which the transport dials as written.
func urlMatches(pattern, raw string, allow bool) bool {
	if !asciiHost(raw) {
		return !allow
	}
	pat := normURL(pattern, true)
	// The rule's path is read decoded too: a decoded spelling of a path the rule writes with
	// %-escapes (/a%20b/) is the same path.
	pats := []string{pat}
	if host, p, ok := strings.Cut(pat, "\x00"); ok && strings.IndexByte(p, '%') >= 0 {
		if dec, err := url.PathUnescape(p); err == nil && strings.Count(dec, "*") == strings.Count(p, "*") {
			pats = append(pats, host+"\x00"+dec)
		}
	}
	forms := normForms(raw, false)
	if allow {
		// Every spelling must be inside what the rule allows: /public/../admin is /admin to a
		// server that cleans its paths.
		for _, u := range forms {
			if !slices.ContainsFunc(pats, func(pat string) bool { return globURL(pat, u) }) {
				return false
			}
		}
		return len(forms) > 0
	}
	for _, u := range forms {
		if slices.ContainsFunc(pats, func(pat string) bool { return globURL(pat, u) }) {
			return true
		}
	}
	return raw != "" && globURL(pattern, raw)
}

// asciiHost reports whether the host of a URL (or pattern) is plain ASCII, as the URL parser
// reads it.
func asciiHost(s string) bool {
	_, rest, _ := strings.Cut(s, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	// Go's URL parser decodes a host's %-escapes of non-ASCII bytes (%EF%BD%85 is the fullwidth
	// e); one it cannot decode is not taken as plain either.
	if strings.IndexByte(rest, '%') >= 0 {
		dec, err := url.PathUnescape(rest)
		if err != nil {
			return false
		}
		rest = dec
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] >= 0x80 {
			return false
		}
	}
	return true
}

func normURL(s string, pattern bool) string {
	if forms := normForms(s, pattern); len(forms) > 0 {
		return forms[0]
	}
	return ""
}

// normForms normalises a URL or a pattern: scheme and host lower case, no user info, no
// default port and no leading zeros in a port, an IP address as the dialer reads it, no
// fragment, an empty path is "/"; a \x00 marks where the host ends. A URL has
// a second form with its path decoded, so that a deny is not dodged by writing /admin as
// /%61dmin, and a third with it cleaned (/x/../admin, //admin).
func normForms(s string, pattern bool) []string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return nil
	}
	auth, path := rest, "/"
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		auth, path = rest[:i], rest[i:]
		if path[0] != '/' {
			path = "/" + path
		}
	}
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	scheme, auth = strings.ToLower(scheme), trimPortZeros(strings.ToLower(auth))
	switch {
	case scheme == "https" && strings.HasSuffix(auth, ":443"), scheme == "http" && strings.HasSuffix(auth, ":80"):
		auth = auth[:strings.LastIndexByte(auth, ':')]
	}
	auth = canonicalIP(trimHostDot(auth))
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path = path[:i]
	}
	head := scheme + "://" + auth + "\x00"
	forms := []string{head + path}
	if pattern {
		return forms
	}
	if u, err := url.Parse(scheme + "://" + auth + path); err == nil && u.Host != "" {
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		q := ""
		if u.RawQuery != "" {
			q = "?" + u.RawQuery
		}
		forms[0] = head + p + q
		if u.Path != p {
			forms = append(forms, head+u.Path+q)
		}
		if c := cleanURLPath(u.Path); c != u.Path && c != p {
			forms = append(forms, head+c+q)
		}
	}
	return forms
}

// cleanURLPath is a decoded URL path with dot segments and doubled slashes taken out (a trailing
// slash kept): the client sends /x/../admin as written, and a server that cleans its paths (Go's
// ServeMux, most routers) serves /admin.
func cleanURLPath(p string) string {
	c := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// trimHostDot drops the trailing dot of a fully qualified host name ("evil.example." is
// evil.example to DNS and to TLS), keeping the port, so a deny cannot be dodged by it.
func trimHostDot(auth string) string {
	host, port := auth, ""
	if i := strings.LastIndexByte(auth, ':'); i >= 0 && !strings.HasSuffix(auth, "]") {
		host, port = auth[:i], auth[i:]
	}
	return strings.TrimSuffix(host, ".") + port
}

// trimPortZeros drops the leading zeros of a port (":0443" is dialled as 443), keeping one digit.
func trimPortZeros(auth string) string {
	i := strings.LastIndexByte(auth, ':')
	if i < 0 || strings.HasSuffix(auth, "]") {
		return auth
	}
	port := auth[i+1:]
	if port == "" || strings.Trim(port, "0123456789") != "" {
		return auth // not a port (part of a bracketless IPv6 address, or a pattern's *)
	}
	if t := strings.TrimLeft(port, "0"); t != port {
		if t == "" {
			t = "0"
		}
		return auth[:i+1] + t
	}
	return auth
}

// canonicalIP writes a host that is an IP address the one way Go's dialer reads it, keeping the
// port: [0:0::1] is [::1], and an IPv4-mapped IPv6 address ([::ffff:10.0.0.1], [::ffff:a00:1])
// is the IPv4 address it is dialled as. A name is left as it is.
func canonicalIP(auth string) string {
	host, port := auth, ""
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return auth
		}
		host, port = auth[1:end], auth[end+1:]
	} else if i := strings.LastIndexByte(auth, ':'); i >= 0 {
		host, port = auth[:i], auth[i:]
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return auth
	case ip.To4() != nil:
		return ip.To4().String() + port
	}
	return "[" + ip.String() + "]" + port
}

// globURL matches pattern against s with "*" as any run of characters, except that a "*"
// before the host's end (the \x00 normURL puts there) does not match across it.
func globURL(pattern, s string) bool {
	pa, pp, _ := strings.Cut(pattern, "\x00")
	sa, sp, _ := strings.Cut(s, "\x00")
	if !strings.Contains(pattern, "\x00") {
		return glob(pattern, s)
	}
	return glob(pa, sa) && glob(pp, sp)
}

// glob matches with "*" = any run of characters (iterative, no backtracking blow-up).
func glob(p, s string) bool {
	px, sx, nextPx, nextSx := 0, 0, -1, -1
	for px < len(p) || sx < len(s) {
		if px < len(p) {
			if p[px] == '*' {
				nextPx, nextSx = px, sx+1
				px++
				continue
			}
			if sx < len(s) && p[px] == s[sx] {
				px++
				sx++
				continue
			}
		}
		if nextPx >= 0 && nextSx <= len(s) {
			px, sx = nextPx+1, nextSx
			nextSx++
			continue
		}
		return false
	}
	return true
}

// ManagedServers are the servers of managed-mcp.json that the host starts (as user-defined,
// Scope ScopeManaged, Managed set to the file); nil when there is no managed-mcp.json.
func (p *Policy) ManagedServers() []ManagedServer {
	if p == nil {
		return nil
	}
	return slices.Clone(p.managed)
}

// Exclusive reports whether a managed-mcp.json decides which servers exist.
func (p *Policy) Exclusive() bool { return p != nil && len(p.exclusive) > 0 }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
