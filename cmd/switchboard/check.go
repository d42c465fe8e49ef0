package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/broker"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// checkToolInfo is the wire ToolInfo of PROTOCOL.md section 3.
type checkToolInfo struct {
	Name        string          `json:"name"`
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Allowlisted bool            `json:"allowlisted"`
	// Pin is "changed" or "new" when the tool differs from the definition the user approved.
	Pin string `json:"pin,omitempty"`
	// Policy is "policy-deny", "policy-ask" or "policy-allow" when the organisation's policy has
	// a rule for the tool.
	Policy string `json:"policy,omitempty"`
	// explain is the name `policy explain` takes for the tool when it is not Name: the rule's
	// spelling of the server's own name for a tool registered under a made-safe one.
	explain string
}

type checkReport struct {
	Servers []mcpbridge.ServerStatus `json:"servers"`
	Tools   []checkToolInfo          `json:"tools"`
	// Policy is the organisation's policy, when any policy file exists.
	Policy *policy.Report `json:"policy,omitempty"`
}

type checkList []string

func (l *checkList) String() string     { return strings.Join(*l, ",") }
func (l *checkList) Set(s string) error { *l = append(*l, s); return nil }

// runCheck connects every configured MCP server, reports states and tools, and exits 1 when an
// enabled server failed (or a config entry was rejected).
func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var configs, workspaces checkList
	fs.Var(&configs, "config", "read MCP servers from `FILE` too (repeatable)")
	fs.Var(&workspaces, "workspace", "workspace folder `DIR` whose .vscode/mcp.json, .mcp.json, .switchboard/mcp.json are read (repeatable; default: the current directory)")
	trust := fs.Bool("trust-workspace", false, "start servers defined only in workspace files")
	asJSON := fs.Bool("json", false, `print {"servers": ServerStatus[], "tools": ToolInfo[]}`)
	timeout := fs.Duration("timeout", 2*time.Minute, "give up waiting for servers after `D`")
	verbose := fs.Bool("v", false, "log connection details to stderr")
	pinsPath := fs.String("pins", permissions.DefaultPinsPath(), "the pin `FILE` changed tools are marked against")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: switchboard check [--config FILE]... [--workspace DIR] [--trust-workspace] [--json] [--timeout D]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "switchboard check: unexpected argument %q\n", fs.Arg(0)) // %q escapes
		fs.Usage()
		return 2
	}
	if len(workspaces) == 0 {
		if wd, err := os.Getwd(); err == nil {
			workspaces = checkList{wd}
		}
	}

	if !namedConfigsExist("check", configs, stderr) {
		return 2
	}
	cfgs, errs := config.LoadConfig(config.ConfigSources{WorkspaceFolders: workspaces, ExtraFiles: configs})
	pol := policy.Load(policy.Options{Paths: policyPaths()})
	if err := pol.Broken(); err != nil {
		fmt.Fprintf(stderr, "switchboard check: the organisation's policy is broken, so every MCP server and call is blocked: %s\n", safetext.Line(err.Error()))
	}
	cfgs, merrs := host.WithManaged(pol, cfgs, nil) // the servers of managed-mcp.json
	errs = append(errs, merrs...)
	for _, err := range errs {
		fmt.Fprintf(stderr, "switchboard check: config: %s\n", safetext.Line(err.Error())) // it quotes key and file names
	}
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	// A workspace server runs when the person trusted this very definition (trust.json, as the
	// editors record it) or with --trust-workspace.
	var store *permissions.TrustStore
	if ts, err := permissions.OpenTrustStore(permissions.DefaultTrustPath()); err != nil {
		fmt.Fprintf(stderr, "switchboard check: trust store: %s (workspace servers count as untrusted)\n", safetext.Line(err.Error()))
	} else {
		store = ts
	}
	trusted := func(c config.ServerConfig) bool {
		return *trust || store != nil && store.Get(c.Name, c.Fingerprint()) == permissions.Trusted
	}

	// Sign-ins (switchboard auth login, or the editor's) and input values share one store.
	secrets := &lazyStore{}
	reg := mcpbridge.NewRegistry(mcpbridge.Options{
		Logger:  logger,
		Trusted: trusted,
		Admit:   func(c config.ServerConfig) *mcpbridge.Blocked { return host.PolicyBlock(pol, c) },
		Roots:   func() []string { return absPaths(workspaces) },
		Getenv:  inputLookupIn(secrets), // mcp_input.go: ${input:ID} values from the store
		Tokens:  secrets,                // a server signed in to sends its token; one not signed in needs-auth
		Eras:    mcpbridge.OpenEraStore(filepath.Join(filepath.Dir(*pinsPath), mcpbridge.DefaultErasFile)),
		// A shared server a window runs is checked in the daemon (warm); check never starts a
		// daemon or an instance there.
		Broker: &broker.Config{Build: version, Existing: true},
	})
	defer reg.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	reg.Apply(ctx, cfgs)
	if err := reg.WaitIdle(ctx); err != nil {
		fmt.Fprintf(stderr, "switchboard check: stopped waiting: %v\n", err)
	}

	rep := checkReport{Servers: reg.Servers(), Tools: []checkToolInfo{}}
	// An entry the configuration rejected is listed with the servers (failed, with its file and
	// key), as the editors list it, not only in the lines on stderr.
	listed := map[string]bool{}
	for _, st := range rep.Servers {
		listed[st.Name] = true
	}
	for _, err := range errs {
		var ce *config.ConfigError
		if errors.As(err, &ce) && ce.Server != "" && !listed[ce.Server] {
			msg := ce.Msg
			if ce.Key != "" {
				msg = ce.Key + ": " + msg
			}
			rep.Servers = append(rep.Servers, mcpbridge.ServerStatus{Name: ce.Server, State: mcpbridge.StateFailed, Source: ce.File, Error: "configuration: " + msg})
			listed[ce.Server] = true
		}
	}
	// A workspace server is described as its trust prompt does (what runs, what it reads from
	// the environment, by name only), trusted or not.
	defs := map[string][]string{}
	for _, c := range cfgs {
		if c.WorkspaceOnly {
			defs[c.Name] = config.TrustSentences(c, nil)
		}
	}
	for i, st := range rep.Servers {
		if st.State == mcpbridge.StateUntrusted && defs[st.Name] != nil {
			rep.Servers[i].TrustPrompt = strings.Join(defs[st.Name], " ")
		}
	}
	marks := pinMarks(stderr, *pinsPath, reg, cfgs)
	fromFile := map[string]bool{} // servers a workspace file defines
	for _, c := range cfgs {
		fromFile[c.Name] = c.Folder != ""
	}
	var names []policy.ToolName
	for _, t := range reg.Tools() {
		n := policy.ToolName{Name: t.Name, Server: t.Server, Workspace: fromFile[t.Server]}
		if t.Server != "" {
			n.Original = t.Tool // the server's own name: a rule names it so
		}
		names = append(names, n)
	}
	if !pol.Empty() {
		var launches []policy.Launch
		for _, c := range cfgs {
			if r, err := c.Resolve(inputLookup()); err == nil {
				c = r
			}
			launches = append(launches, host.AdmissionLaunch(pol, c))
		}
		r := pol.Report(launches, names)
		rep.Policy = &r
	}
	for _, t := range reg.Tools() {
		info := checkToolInfo{Name: t.Name, Server: t.Server, Tool: t.Tool, Description: t.Description, InputSchema: t.InputSchema, Pin: marks[t.Name]}
		if rep.Policy != nil {
			info.Policy = rep.Policy.Tools[t.Name].Mark
			info.explain = explainName(pol, t, info.Policy)
		}
		rep.Tools = append(rep.Tools, info)
	}
	if *asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "switchboard check: %v\n", err)
			return 1
		}
		stdout.Write(append(jsonForTerminal(b), '\n')) // ignore error: as Fprint
	} else {
		shared := map[string]string{}
		for _, c := range cfgs {
			if c.Shared != "" {
				shared[c.Name] = c.Shared
			}
		}
		printCheckReport(stdout, rep, defs, shared, len(cfgs) == 0 && len(errs) == 0)
		if rep.Policy != nil {
			fmt.Fprintln(stdout)
			rep.Policy.WriteText(stdout)
		}
	}

	code := 0
	if len(errs) > 0 {
		code = 1
	}
	if pol.Broken() != nil {
		return 2 // a broken policy is an error to fix; a blocked server is only a state
	}
	for _, s := range rep.Servers {
		if s.State == mcpbridge.StateFailed || s.State == mcpbridge.StateStarting || s.State == mcpbridge.StateNeedsAuth {
			code = 1
		}
	}
	return code
}

// sharedLine is the Shared line of a server's check report (""; none): where a server marked
// "shared" ran, and the daemon's build when it is not this one.
func sharedLine(s mcpbridge.ServerStatus, want string) string {
	if s.Shared == nil {
		if want == "" || s.State != mcpbridge.StateReady {
			return ""
		}
		return want + " scope; no window runs it in the shared-server daemon now, so check ran it itself"
	}
	others := "no other window"
	switch n := s.Shared.Windows - 1; {
	case n == 1:
		others = "1 other window"
	case n > 1:
		others = fmt.Sprintf("%d other windows", n)
	}
	line := fmt.Sprintf("%s scope, in the shared-server daemon (pid %d, Switchboard %s), used by %s", s.Shared.Scope, s.Shared.DaemonPid, safetext.Line(s.Shared.DaemonBuild), others)
	if s.Shared.Warning != "" {
		line += "; warning: " + safetext.Line(s.Shared.Warning)
	}
	return line
}

func printCheckReport(w io.Writer, rep checkReport, defs map[string][]string, shared map[string]string, empty bool) {
	if empty {
		fmt.Fprintf(w, "No MCP servers configured. Looked in %s, the workspace files and --config files.\n",
			config.DefaultUserFile(nil))
		return
	}
	states := map[string]int{}
	for _, s := range rep.Servers {
		states[s.State]++
	}
	var summary []string
	for _, st := range []string{mcpbridge.StateReady, mcpbridge.StateFailed, mcpbridge.StateStarting,
		mcpbridge.StateNeedsAuth, mcpbridge.StateUntrusted, mcpbridge.StateBlocked, mcpbridge.StateDisabled, mcpbridge.StateStopped} {
		if states[st] > 0 {
			summary = append(summary, fmt.Sprintf("%d %s", states[st], st))
		}
	}
	fmt.Fprintf(w, "%s: %s; %s\n", count(len(rep.Servers), "MCP server", "MCP servers"), strings.Join(summary, ", "), count(len(rep.Tools), "tool", "tools"))
	for _, s := range rep.Servers {
		fmt.Fprintf(w, "\n%s  %s  %s  %s\n", safetext.Line(s.Name), strings.ToUpper(s.State), s.Transport, count(s.Tools, "tool", "tools"))
		fmt.Fprintf(w, "  source:  %s\n", safetext.Line(s.Source))
		if s.Command != "" {
			fmt.Fprintf(w, "  runs:    %s\n", safetext.Line(s.Command))
		}
		if s.ProtocolVersion != "" {
			fmt.Fprintf(w, "  speaks:  MCP %s\n", s.ProtocolVersion)
		}
		if line := sharedLine(s, shared[s.Name]); line != "" {
			fmt.Fprintf(w, "  shared:  %s\n", line)
		}
		switch {
		case s.Sandbox != "":
			fmt.Fprintf(w, "  sandbox: %s\n", safetext.Line(s.Sandbox))
		case s.Transport == "stdio":
			fmt.Fprintf(w, "  sandbox: none (runs with your full rights)\n")
		}
		for _, b := range s.Blocked {
			fmt.Fprintf(w, "  %s\n", safetext.Line(b))
		}
		for i, line := range defs[s.Name] {
			label := "         "
			if i == 0 {
				label = "  trust: "
			}
			fmt.Fprintf(w, "%s%s\n", label, safetext.Line(line))
		}
		switch s.State {
		case mcpbridge.StateUntrusted:
			fmt.Fprintf(w, "  note:    defined only in a workspace file; not started (use --trust-workspace)\n")
		case mcpbridge.StateDisabled:
			fmt.Fprintf(w, "  note:    disabled in its config\n")
		case mcpbridge.StateNeedsAuth:
			fmt.Fprintf(w, "  note:    needs you to sign in: switchboard auth login %s\n", safetext.Line(s.Name))
		case mcpbridge.StateBlocked:
			fmt.Fprintf(w, "  blocked: %s\n", safetext.Line(s.Error))
			if s.Policy != nil {
				fmt.Fprintf(w, "  rule:    %s\n", safetext.Line(s.Policy.Rule))
			}
			continue
		}
		if s.Error != "" {
			fmt.Fprintf(w, "  error:   %s\n", safetext.Line(s.Error))
		}
		if s.StderrTail != "" {
			fmt.Fprintf(w, "  stderr:\n")
			for _, line := range strings.Split(s.StderrTail, "\n") {
				fmt.Fprintf(w, "    | %s\n", safetext.Line(line))
			}
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, t := range rep.Tools {
			if t.Server == s.Name {
				mark := ""
				if t.Pin != "" {
					mark = "  [" + t.Pin + " since you approved it: switchboard pins diff " + safetext.Line(t.Server) + "]"
				}
				if t.Policy != "" {
					explain := t.Name
					if t.explain != "" {
						explain = t.explain
					}
					mark += "  [" + t.Policy + ": switchboard policy explain " + safetext.Line(explain) + "]"
				}
				fmt.Fprintf(tw, "    %s\t%s%s\n", safetext.Line(t.Name), checkOneLine(t.Description, 90), mark)
			}
		}
		tw.Flush()
	}
}

// count is "1 tool", "2 tools".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// parseExit is the exit code of a flag parse error: 0 for -h/--help (the usage was asked for and
// shown), else 2.
func parseExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

// explainName is the name `policy explain` takes for t, marked mark ("" none) by check, when it
// is not t.Name: the rule's spelling of the server's own name, for a tool registered under a
// made-safe one that a rule of that spelling marks. The registered name may have another mark of
// its own (a server-wide allow, where a rule on the tool's own name denies it), which explain of
// it would show instead of the mark check gave.
func explainName(pol *policy.Policy, t mcpbridge.Tool, mark string) string {
	if mark == "" || t.Server == "" || toolMark(pol.Tool(t.Name, t.Server)) == mark {
		return ""
	}
	return policy.RuleName(t.Server, t.Tool)
}

// toolMark is the mark of a verdict, as policy.Report gives it ("" no rule).
func toolMark(v policy.ToolVerdict) string {
	switch {
	case v.Deny != nil:
		return "policy-deny"
	case v.Ask != nil:
		return "policy-ask"
	case v.Allow != nil:
		return "policy-allow"
	}
	return ""
}

// jsonForTerminal is encoded JSON with the bidi, zero-width and other invisible characters of
// its strings written as \u escapes, as encoding/json writes control characters: the same JSON
// to a program, and nothing a server wrote can reorder or hide text on the terminal of a person
// reading it. Such a character is never part of JSON's syntax, so it is always inside a string.
func jsonForTerminal(b []byte) []byte {
	var out []byte
	prev := rune(0)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		was := prev
		prev = r
		if r < utf8.RuneSelf || !safetext.NeedsAfter(was, r) {
			if out != nil {
				out = append(out, b[i:i+size]...)
			}
			i += size
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(b)+16), b[:i]...)
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
	}
	if out == nil {
		return b
	}
	return out
}

// checkOneLine is the first line of s, escaped, at most n characters of s (then "...").
func checkOneLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	head, cut := safetext.Cut(s, n-3)
	if cut > 3 {
		return head + "..."
	}
	return safetext.Line(s)
}

// absPaths makes each path absolute (MCP roots are absolute); one that cannot be is left out.
func absPaths(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// pinMarks compares the tools with the pin file (read only): registered name -> "changed" or
// "new". A broken pin file marks every tool changed (it pins nothing).
func pinMarks(stderr io.Writer, path string, reg *mcpbridge.Registry, cfgs []config.ServerConfig) map[string]string {
	marks := map[string]string{}
	store, err := permissions.OpenPinStore(path)
	if err != nil {
		return marks
	}
	pins, err := store.Load()
	if err != nil {
		fmt.Fprintf(stderr, "switchboard check: %s (it pins nothing while broken)\n", safetext.Line(err.Error()))
		for _, t := range reg.Tools() {
			marks[t.Name] = host.PinChanged
		}
		return marks
	}
	ready := map[string]config.ServerConfig{}
	for _, st := range reg.Servers() {
		for _, c := range cfgs {
			if st.State == mcpbridge.StateReady && c.Name == st.Name {
				ready[c.Name] = c
			}
		}
	}
	for key, sp := range host.LegacyPins(ready, pins) {
		pins[key] = sp
	}
	changes, _ := host.ComparePins(reg.Tools(), ready, pins)
	for _, sc := range changes {
		for _, c := range sc.Changes {
			if c.Name != "" {
				marks[c.Name] = c.Kind
			}
		}
	}
	return marks
}
