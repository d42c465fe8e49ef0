package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/mcpregistry"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// registryEnv is the person's choice of registry when no flag gives one (the organisation's
// policy, when it names one, decides instead).
const registryEnv = "SWITCHBOARD_MCP_REGISTRY"

// mcpStdin is where mcp add --from-registry reads its yes/no (tests replace it).
var mcpStdin io.Reader = os.Stdin

// mcpStdinTerminal says whether mcpStdin is a person at a terminal.
var mcpStdinTerminal = func() bool { return isTerminal(os.Stdin) }

// mcpAddFromRegistry implements `switchboard mcp add [NAME] --from-registry SERVER[@VERSION]`: it
// reads the server.json, shows what will run and what it asks for, and writes the entry pinned to
// the exact version (with ${input:...} for its secrets), unless the organisation's policy would
// block it.
func mcpAddFromRegistry(f mcpFlags, file string, stdout io.Writer, fail func(int, string, ...any) int) int {
	if len(f.pos) > 1 || len(f.command) > 0 || f.url != "" || len(f.env) > 0 || len(f.headers) > 0 {
		return fail(2, "add --from-registry takes at most a NAME for the server, and no command, --url, --env or --header (the registry says what runs)")
	}
	regName, version, _ := strings.Cut(f.fromRegistry, "@")
	if err := mcpregistry.CheckName(regName); err != nil {
		return fail(2, "%v", err)
	}
	if version == "" {
		version = "latest"
	} else if err := mcpregistry.CheckVersion(version); err != nil {
		return fail(2, "%v", err)
	}
	pol := policy.Load(policy.Options{Paths: policyPaths()})
	base, err := registryURL(pol, f.registry)
	if err != nil {
		return fail(2, "%v", err)
	}
	client, err := host.RegistryClient(base)
	if err != nil {
		return fail(2, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := client.Get(ctx, regName, version)
	if err != nil {
		if errors.Is(err, mcpregistry.ErrNotFound) {
			return fail(1, "%s@%s is not in the registry %s", regName, version, client.URL())
		}
		return fail(1, "%v", err)
	}
	srv := &resp.Server
	if err := mcpregistry.CheckVersion(srv.Version); err != nil {
		return fail(1, "the registry's %s: %v", regName, err)
	}
	switch resp.Status() {
	case "deleted":
		return fail(1, "%s@%s was deleted from the registry %s: not installed", regName, srv.Version, client.URL())
	case "deprecated":
		fmt.Fprintf(stdout, "Note: the registry marks %s %s deprecated.\n", safetext.Line(regName), safetext.Line(srv.Version))
	}
	name := ""
	if len(f.pos) == 1 {
		name = f.pos[0]
	} else {
		_, name, _ = strings.Cut(regName, "/")
	}
	if err := config.ValidServerName(name); err != nil {
		return fail(2, "%v; give the server a name: switchboard mcp add NAME --from-registry %s", err, regName)
	}
	ref := config.RegistryRef{URL: client.URL(), Name: regName, Version: srv.Version}
	plan, err := mcpregistry.Derive(srv, ref, name)
	if err != nil {
		return fail(1, "%s@%s: %v", regName, srv.Version, err)
	}
	if err := ownInputs(file, plan); err != nil {
		return fail(1, "%v", err)
	}
	showPlan(stdout, client.URL(), srv, name, plan)
	b, err := checkPlan(pol, name, plan)
	if err != nil {
		return fail(1, "%s@%s: %v", regName, srv.Version, err)
	}
	if b != "" {
		return fail(1, "not added: %s", b)
	}
	if f.dryRun {
		fmt.Fprintf(stdout, "Dry run: %s would be added to %s.\n", safetext.Line(name), safetext.Line(file))
		return 0
	}
	if !f.yes {
		if !mcpStdinTerminal() {
			return fail(2, "not added: confirm with --yes (what it runs is shown above)")
		}
		fmt.Fprintf(stdout, "Add %s to %s? [y/N] ", safetext.Line(name), safetext.Line(file))
		line, _ := bufio.NewReader(mcpStdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Not added.")
			return 1
		}
	}
	if err := config.AddServerInputs(file, name, plan.Entry, plan.Inputs); err != nil {
		if errors.Is(err, config.ErrServerExists) {
			return fail(1, "%s is already defined in %s: remove it first (switchboard mcp remove %s)", name, file, name)
		}
		return fail(1, "%v", err)
	}
	fmt.Fprintf(stdout, "Added %s to %s, pinned to %s %s.\n", safetext.Line(name), safetext.Line(file), safetext.Line(regName), safetext.Line(srv.Version))
	return 0
}

// ownInputs gives the plan's inputs ids the file does not declare yet. `mcp remove` keeps a
// file's inputs and their values in the keychain: a server of the same name from another
// publisher, declaring the same secret, would otherwise be given the earlier server's value at
// its first start, without the question the person is told comes.
func ownInputs(file string, plan *mcpregistry.Plan) error {
	declared, err := config.FileInputs(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	taken := func(id string) bool {
		_, ok := declared[id]
		return ok
	}
	for i, in := range plan.Inputs {
		if !taken(in.ID) {
			continue
		}
		id := in.ID
		for n := 2; taken(id); n++ {
			id = fmt.Sprintf("%s-%d", in.ID, n)
		}
		for _, m := range []map[string]string{plan.Entry.Env, plan.Entry.Headers} {
			for k, v := range m {
				if v == "${input:"+in.ID+"}" {
					m[k] = "${input:" + id + "}"
				}
			}
		}
		plan.Inputs[i].ID = id
		if declared == nil {
			declared = map[string]config.Input{}
		}
		declared[id] = plan.Inputs[i]
	}
	return nil
}

// registryURL is the registry to read: the organisation's when its policy names one (another
// one asked for is refused), else --registry, else $SWITCHBOARD_MCP_REGISTRY, else the official.
func registryURL(pol *policy.Policy, flag string) (string, error) {
	user := flag
	if user == "" {
		user = os.Getenv(registryEnv)
	}
	org, rule := pol.RegistryURL()
	if org == "" {
		if user == "" {
			return mcpregistry.Official, nil
		}
		return user, nil
	}
	orgN, err := mcpregistry.NormalizeURL(org)
	if err != nil {
		return "", fmt.Errorf("your organisation's registry (%s): %v", rule.Loc(), err)
	}
	if user != "" {
		if u, err := mcpregistry.NormalizeURL(user); err != nil || u != orgN {
			return "", fmt.Errorf("your organisation's policy names the registry %s (%s): another one cannot be used", orgN, rule.Loc())
		}
	}
	return orgN, nil
}

// showPlan prints what the entry will run and what it asks for; everything from the document is
// escaped (a description may hold terminal escapes or bidi controls).
func showPlan(w io.Writer, registry string, srv *mcpregistry.Server, name string, plan *mcpregistry.Plan) {
	desc := srv.Description
	if srv.Title != "" {
		desc = srv.Title + ": " + desc
	}
	fmt.Fprintf(w, "From the MCP Registry %s:\n  %s %s: %s\n", safetext.Line(registry), safetext.Line(srv.Name), safetext.Line(srv.Version),
		safetext.Bounded(safetext.Line(desc), 300))
	e := plan.Entry
	if e.Command != "" {
		fmt.Fprintf(w, "It will run: %s\n", safetext.Line(config.ServerConfig{Transport: config.TransportStdio, Command: e.Command, Args: e.Args}.Summary()))
	} else {
		fmt.Fprintf(w, "It will connect to: %s (%s)\n", safetext.Line(e.URL), e.Type)
	}
	vars, what := e.Env, "environment variable"
	if e.Command == "" {
		vars, what = e.Headers, "header"
	}
	for _, k := range keys(vars) {
		v := vars[k]
		id, isInput := strings.CutPrefix(v, "${input:")
		if !isInput {
			fmt.Fprintf(w, "  %s %s = %s (set by the publisher)\n", what, safetext.Line(k), safetext.Line(v))
			continue
		}
		id = strings.TrimSuffix(id, "}")
		for _, in := range plan.Inputs {
			if in.ID != id {
				continue
			}
			kind := "asked for"
			if in.Password {
				kind = "a secret, asked for"
			}
			fmt.Fprintf(w, "  %s %s: %s, %s when it first starts (or: switchboard mcp input set %s); kept in your keychain, never in the file\n",
				what, safetext.Line(k), safetext.Bounded(safetext.Line(in.Description), 200), kind, safetext.Line(id))
		}
	}
	for _, o := range plan.Optional {
		fmt.Fprintf(w, "  optional %s %s, not set: %s\n", what, safetext.Line(o.Name), safetext.Bounded(safetext.Line(o.Description), 200))
	}
}

// checkPlan reads the entry as a file holding it (with its inputs) would be read, and asks the
// organisation's policy about it before anything is written: the person's sentence when the policy
// would block it, "" when not.
func checkPlan(pol *policy.Policy, name string, plan *mcpregistry.Plan) (string, error) {
	dir, err := os.MkdirTemp("", "switchboard-add-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "mcp.json")
	if err := config.AddServerInputs(tmp, name, plan.Entry, plan.Inputs); err != nil {
		return "", err
	}
	cfgs, errs := config.LoadConfig(config.ConfigSources{UserFile: tmp, Getenv: func(string) (string, bool) { return "", true }})
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	for _, c := range cfgs {
		if c.Name != name || pol.Empty() {
			continue
		}
		if r, err := c.Resolve(nil); err == nil {
			c = r
		}
		if b := host.PolicyBlock(pol, c); b != nil {
			return b.Message, nil
		}
	}
	return "", nil
}
