package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// runPins is `switchboard pins list|diff|accept SERVER [TOOL...]`: it connects the configured
// servers (workspace servers only when trusted), compares their tools with the pin file and
// shows or accepts the differences.
func runPins(args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintln(stderr, "usage: switchboard pins list [SERVER] | diff SERVER [TOOL...] | accept SERVER [TOOL...]  [--config FILE]... [--workspace DIR] [--pins FILE]")
	}
	if len(args) == 0 {
		usage()
		return 2
	}
	verb := args[0]
	fs := flag.NewFlagSet("pins", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var configs, workspaces checkList
	fs.Var(&configs, "config", "read MCP servers from `FILE` too (repeatable)")
	fs.Var(&workspaces, "workspace", "workspace folder `DIR` (repeatable; default: the current directory)")
	pinsPath := fs.String("pins", permissions.DefaultPinsPath(), "the pin `FILE`")
	trustPath := fs.String("trust", permissions.DefaultTrustPath(), "the workspace trust `FILE`")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up waiting for servers after `D`")
	fs.Usage = func() {
		usage()
		fs.PrintDefaults()
	}
	var rest []string // positional arguments; flags may come before, between or after them
	for left := args[1:]; ; {
		if err := fs.Parse(left); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		rest, left = append(rest, fs.Arg(0)), fs.Args()[1:]
	}
	switch {
	case verb != "list" && verb != "diff" && verb != "accept":
		fmt.Fprintf(stderr, "switchboard pins: unknown subcommand %q\n", verb)
		usage()
		return 2
	case verb != "list" && len(rest) == 0:
		fmt.Fprintf(stderr, "switchboard pins %s: SERVER is required\n", verb)
		usage()
		return 2
	case verb == "list" && len(rest) > 1:
		usage()
		return 2
	}
	server := ""
	if len(rest) > 0 {
		server = rest[0]
	}
	tools := rest[min(1, len(rest)):]
	if len(workspaces) == 0 {
		if wd, err := os.Getwd(); err == nil {
			workspaces = checkList{wd}
		}
	}
	if !namedConfigsExist("pins", configs, stderr) {
		return 2
	}
	store, err := permissions.OpenPinStore(*pinsPath)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard pins: %v\n", err)
		return 1
	}
	pins, err := store.Load()
	if err != nil {
		fmt.Fprintf(stderr, "switchboard pins: %s: fix or remove the file (it pins nothing while broken)\n", safetext.Line(err.Error()))
		return 1
	}
	cfgs, errs := config.LoadConfig(config.ConfigSources{WorkspaceFolders: workspaces, ExtraFiles: configs})
	for _, err := range errs {
		fmt.Fprintf(stderr, "switchboard pins: config: %s\n", safetext.Line(err.Error()))
	}
	if server != "" && !slices.ContainsFunc(cfgs, func(c config.ServerConfig) bool { return c.Name == server }) {
		fmt.Fprintf(stderr, "switchboard pins: unknown server %q\n", server)
		return 2
	}
	trust, err := permissions.OpenTrustStore(*trustPath)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard pins: %v\n", err)
		return 1
	}
	var only []config.ServerConfig
	for _, c := range cfgs {
		if server == "" || c.Name == server {
			only = append(only, c)
		}
	}
	pol := policy.Load(policy.Options{Paths: policyPaths()})
	secrets := &lazyStore{} // sign-ins and input values, as check starts servers (mcp_input.go)
	reg := mcpbridge.NewRegistry(mcpbridge.Options{
		Logger:  slog.New(slog.DiscardHandler),
		Trusted: func(c config.ServerConfig) bool { return trust.Get(c.Name, c.Fingerprint()) == permissions.Trusted },
		Admit:   func(c config.ServerConfig) *mcpbridge.Blocked { return host.PolicyBlock(pol, c) },
		Roots:   func() []string { return absPaths(workspaces) },
		Getenv:  inputLookupIn(secrets),
		Tokens:  secrets,
	})
	defer reg.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	reg.Apply(ctx, only)
	if err := reg.WaitIdle(ctx); err != nil {
		fmt.Fprintf(stderr, "switchboard pins: stopped waiting: %v\n", err)
	}
	ready := map[string]config.ServerConfig{}
	for _, st := range reg.Servers() {
		if st.State != mcpbridge.StateReady {
			fmt.Fprintf(stderr, "switchboard pins: server %s is %s; its tools are not compared\n", safetext.Line(st.Name), st.State)
			continue
		}
		for _, c := range only {
			if c.Name == st.Name {
				ready[st.Name] = c
			}
		}
	}
	legacy := host.LegacyPins(ready, pins)
	for key, sp := range legacy {
		pins[key] = sp
	}
	changes, first := host.ComparePins(reg.Tools(), ready, pins)
	switch verb {
	case "list":
		printPinList(stdout, changes, first)
		return 0
	case "diff":
		return printPinDiff(stdout, stderr, server, tools, changes, first)
	}
	cfg, isReady := ready[server]
	if !isReady { // not compared (said above): nothing of it to accept
		fmt.Fprintf(stderr, "switchboard pins: nothing of %s was accepted: it is not running (start it, or trust it if it is a workspace server)\n", safetext.Line(server))
		return 1
	}
	if sp, ok := legacy[cfg.StateKey()]; ok { // what was compared: the pins from before they were kept per folder
		if err := store.PinFirst(cfg.StateKey(), sp.Identity, sp.Tools); err != nil {
			fmt.Fprintf(stderr, "switchboard pins: %v\n", err)
			return 1
		}
	}
	code := acceptPins(stdout, stderr, store, cfg, tools, changes, first)
	if code == 0 {
		auditAccept(stderr, server)
	}
	return code
}

// auditAccept records the acceptance in the audit log (by "pin"), as the host does.
func auditAccept(stderr io.Writer, server string) {
	a, err := permissions.OpenAuditLog(permissions.DefaultAuditPath(), 0)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard pins: audit log: %v\n", err)
		return
	}
	a.Record(permissions.Request{Tool: mcpbridge.ToolName(server, "*"), Server: server},
		permissions.Decision{Allowed: true, By: permissions.ByPin, Reason: "definitions accepted by the user: switchboard pins accept"}, 0)
	a.Close() // ignore error: Close flushes; a failure was reported by Err
}

func printPinList(w io.Writer, changes []host.ServerPinChanges, first map[string][]mcpbridge.Tool) {
	if len(changes) == 0 && len(first) == 0 {
		fmt.Fprintln(w, "Every tool matches the definition you approved.")
		return
	}
	for _, sc := range changes {
		fmt.Fprintf(w, "%s\n", safetext.Line(sc.Server))
		for _, k := range []string{host.PinChanged, host.PinNew, host.PinRemoved} {
			if ts := sc.Tools(k); len(ts) > 0 {
				for i := range ts {
					ts[i] = safetext.Line(ts[i])
				}
				fmt.Fprintf(w, "  %-8s %s\n", k+":", strings.Join(ts, ", "))
			}
		}
	}
	for server, tools := range first {
		fmt.Fprintf(w, "%s\n  not pinned yet: %d tool(s), pinned when Switchboard first runs it (or by `switchboard pins accept %s`)\n",
			safetext.Line(server), len(tools), safetext.Line(server))
	}
}

// selectChanges picks the changes of server named by tools (none = all).
func selectChanges(stderr io.Writer, server string, tools []string, changes []host.ServerPinChanges) (host.ServerPinChanges, bool) {
	sc := host.ServerPinChanges{Server: server}
	for _, c := range changes {
		if c.Server == server {
			sc = c
		}
	}
	if len(tools) == 0 {
		return sc, true
	}
	var keep []host.PinChange
	for _, t := range tools {
		i := slices.IndexFunc(sc.Changes, func(c host.PinChange) bool { return c.Tool == t || c.Name == t })
		if i < 0 {
			fmt.Fprintf(stderr, "switchboard pins: tool %q of server %q has no change\n", t, server)
			return sc, false
		}
		keep = append(keep, sc.Changes[i])
	}
	sc.Changes = keep
	return sc, true
}

func printPinDiff(w, stderr io.Writer, server string, tools []string, changes []host.ServerPinChanges, first map[string][]mcpbridge.Tool) int {
	if _, ok := first[server]; ok {
		fmt.Fprintf(w, "Server %s has no pins yet.\n", safetext.Line(server))
		return 0
	}
	sc, ok := selectChanges(stderr, server, tools, changes)
	if !ok {
		return 2
	}
	if len(sc.Changes) == 0 {
		fmt.Fprintf(w, "Every tool of %s matches the definition you approved.\n", safetext.Line(server))
	}
	for _, c := range sc.Changes {
		fmt.Fprintf(w, "%s (%s)\n%s\n", safetext.Line(c.Tool), c.Kind, c.Diff())
	}
	return 0
}

func acceptPins(w, stderr io.Writer, store *permissions.PinStore, cfg config.ServerConfig, tools []string, changes []host.ServerPinChanges, first map[string][]mcpbridge.Tool) int {
	server := cfg.Name
	if ft, ok := first[server]; ok {
		m := map[string]permissions.PinnedTool{}
		for _, t := range ft {
			m[t.Tool] = permissions.PinnedTool{Hash: t.Hash, Definition: t.Canonical}
		}
		if err := store.Pin(cfg.StateKey(), mcpbridge.ServerIdentity(cfg), m); err != nil {
			fmt.Fprintf(stderr, "switchboard pins: %v\n", err)
			return 1
		}
		fmt.Fprintf(w, "Pinned %d tool(s) of %s.\n", len(m), safetext.Line(server))
		return 0
	}
	sc, ok := selectChanges(stderr, server, tools, changes)
	if !ok {
		return 2
	}
	pin := map[string]permissions.PinnedTool{}
	var removed []string
	for _, c := range sc.Changes {
		if c.Kind == host.PinRemoved {
			removed = append(removed, c.Tool)
		} else {
			pin[c.Tool] = permissions.PinnedTool{Hash: c.Hash, Definition: c.New}
		}
	}
	if len(pin) > 0 {
		if err := store.Pin(sc.Key, sc.Identity, pin); err != nil {
			fmt.Fprintf(stderr, "switchboard pins: %v\n", err)
			return 1
		}
	}
	if len(removed) > 0 {
		if err := store.Unpin(sc.Key, removed...); err != nil {
			fmt.Fprintf(stderr, "switchboard pins: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(w, "Accepted %d change(s) of %s.\n", len(sc.Changes), safetext.Line(server))
	return 0
}
