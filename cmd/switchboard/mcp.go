package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

const mcpUsage = `usage:
  switchboard mcp add NAME [--scope user|workspace] [--env K=V]... [--protocol P] -- COMMAND [ARGS...]
  switchboard mcp add NAME --url URL [--transport http|sse] [--header K:V]... [--protocol P] [--scope user|workspace]
  switchboard mcp add [NAME] --from-registry SERVER[@VERSION] [--registry URL] [--dry-run] [--yes] [--scope user|workspace]
  switchboard mcp remove NAME [--scope user|workspace]
  switchboard mcp list
  switchboard mcp get NAME
  switchboard mcp import --from claude-code|claude-desktop|cursor|codex|zed|vscode [--dry-run] [--scope user|workspace]
  switchboard mcp sandbox NAME --allow-read PATH... --allow-write PATH... [--scope user|workspace]
  switchboard mcp input set|delete ID [--file F]   (the value of a file's ${input:ID}; see switchboard mcp input help)

--scope user (default) edits $XDG_CONFIG_HOME/switchboard/mcp.json (~/.config/switchboard/mcp.json);
--scope workspace edits .switchboard/mcp.json in the workspace folder (--workspace DIR, default:
the current directory). --file F edits F instead. Values may reference the environment with
${env:NAME}: prefer that to writing a secret into the file. Edits keep the file's comments,
order and formatting. import never overwrites: a server already defined is skipped. import writes
a server read from the workspace's own file (its .cursor, .codex or .zed) to the workspace's
.switchboard/mcp.json, where it asks for your trust, never to yours (--scope user, or --file
without --scope workspace, refuses it).
sandbox widens a sandboxed server's profile, knowingly (after "blocked: read of PATH"); a relative
PATH is taken from the current directory. A workspace server so widened asks for trust again.
--protocol auto (default: found per server), 2025-11-25 or 2026-07-28 fixes the MCP revision.
--from-registry reads SERVER's server.json from the MCP Registry (the official one, --registry URL,
$SWITCHBOARD_MCP_REGISTRY, or the one your organisation's policy names, which then decides) and
writes an entry pinned to that exact version (the newest without @VERSION): npm packages run as
npx -y PACKAGE@VERSION, PyPI ones as uvx PACKAGE==VERSION, images as docker run; secrets become
${input:ID}, asked once and kept in the keychain. It shows what will run and asks (--yes: no
question). NAME defaults to the part of SERVER after the slash.
Exit status: 0 ok, 1 a file cannot be read or written, 2 invalid input.
`

type mcpFlags struct {
	scope, workspace, file, url, transport, from string
	protocol, fromRegistry, registry             string
	dryRun, yes                                  bool
	scopeSet                                     bool // --scope was given (import: else per source)
	env, headers                                 []string
	allowRead, allowWrite                        []string
	pos, command                                 []string
}

func parseMCPFlags(args []string) (mcpFlags, error) {
	f := mcpFlags{scope: "user"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if a == "--" {
			f.command = args[i+1:]
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			f.pos = append(f.pos, a)
			continue
		}
		if name == "dry-run" {
			f.dryRun = true
			continue
		}
		if name == "yes" || name == "y" {
			f.yes = true
			continue
		}
		dst := map[string]*string{"scope": &f.scope, "workspace": &f.workspace, "file": &f.file,
			"url": &f.url, "transport": &f.transport, "from": &f.from, "protocol": &f.protocol,
			"from-registry": &f.fromRegistry, "registry": &f.registry}[name]
		var list *[]string
		switch name {
		case "env", "e":
			list = &f.env
		case "header", "H":
			list = &f.headers
		case "allow-read":
			list = &f.allowRead
		case "allow-write":
			list = &f.allowWrite
		}
		if dst == nil && list == nil {
			return f, fmt.Errorf("unknown flag %s", a)
		}
		if !hasVal {
			if i+1 >= len(args) {
				return f, fmt.Errorf("%s needs a value", a)
			}
			i++
			val = args[i]
		}
		if dst != nil {
			*dst = val
			f.scopeSet = f.scopeSet || name == "scope"
		} else {
			*list = append(*list, val)
		}
	}
	if f.scope != "user" && f.scope != "workspace" {
		return f, fmt.Errorf("--scope must be user or workspace, not %q", f.scope)
	}
	if f.workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return f, err
		}
		f.workspace = wd
	}
	abs, err := filepath.Abs(f.workspace)
	if err != nil {
		return f, err
	}
	f.workspace = abs
	return f, nil
}

// target is the file an edit goes to, and the workspace folder it belongs to ("" for user scope).
func (f mcpFlags) target() (file, workspace string) {
	if f.scope == "workspace" {
		workspace = f.workspace
	}
	switch {
	case f.file != "":
		return f.file, workspace
	case f.scope == "workspace":
		return filepath.Join(f.workspace, ".switchboard", "mcp.json"), workspace
	}
	return config.DefaultUserFile(nil), ""
}

// mcpHelp prints the usage of switchboard mcp, or of switchboard mcp input.
func mcpHelp(w io.Writer, args []string) {
	if len(args) > 0 && args[0] == "input" {
		fmt.Fprint(w, mcpInputUsage)
		return
	}
	fmt.Fprint(w, mcpUsage)
}

// runMCP implements `switchboard mcp`.
func runMCP(args []string, stdout, stderr io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "switchboard mcp: %s\n", safetext.Line(fmt.Sprintf(format, a...)))
		return code
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, mcpUsage)
		return 2
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "help" {
		fmt.Fprint(stdout, mcpUsage)
		return 0
	}
	if sub == "input" {
		return runMCPInput(args[1:], os.Stdin, stdout, stderr) // mcp_input.go
	}
	f, err := parseMCPFlags(args[1:])
	if err != nil {
		return fail(2, "%v (see switchboard mcp help)", err)
	}
	file, ws := f.target()
	if f.scope == "workspace" && f.file == "" && (sub == "add" || sub == "remove" || sub == "sandbox") {
		// A repository can make its .switchboard a link to a folder of the user's: the edit would
		// then land in the user's own file (a server that asks nobody) or in another program's.
		if l := symlinkOn(file); l != "" {
			return fail(1, "not editing %s: %s is a symbolic link, so the edit would land outside this workspace; remove the link first", file, l)
		}
	}
	switch sub {
	case "add":
		if f.fromRegistry != "" {
			return mcpAddFromRegistry(f, file, stdout, fail) // mcp_registry.go
		}
		if f.registry != "" {
			return fail(2, "--registry goes with --from-registry")
		}
		return mcpAdd(f, file, ws, stdout, fail)
	case "remove":
		if len(f.pos) != 1 {
			return fail(2, "remove takes one NAME")
		}
		if err := config.RemoveServer(file, f.pos[0]); err != nil {
			if errors.Is(err, config.ErrServerNotFound) {
				return fail(1, "%s is not defined in %s", f.pos[0], file)
			}
			return fail(1, "%v", err)
		}
		fmt.Fprintf(stdout, "Removed %s from %s.\n", safetext.Line(f.pos[0]), safetext.Line(file))
		return 0
	case "list", "get":
		cfgs, errs := config.LoadConfig(config.ConfigSources{WorkspaceFolders: []string{f.workspace}})
		// An entry the configuration rejects is still defined: it is listed (as check lists it),
		// and get names its problem, not "no server named" (say, a ${env:X} not set here). get
		// tells only of its own server (a workspace entry refused under its name, say) and of
		// whole files.
		var rejected []*config.ConfigError
		for _, e := range errs {
			var ce *config.ConfigError
			if errors.As(e, &ce) && ce.Server != "" {
				if !slices.ContainsFunc(rejected, func(r *config.ConfigError) bool { return r.Server == ce.Server }) {
					rejected = append(rejected, ce)
				}
				if sub == "get" && (len(f.pos) != 1 || ce.Server != f.pos[0] || !slices.ContainsFunc(cfgs, func(c config.ServerConfig) bool { return c.Name == ce.Server })) {
					continue // another server's, or the error below says it
				}
			}
			fmt.Fprintf(stderr, "switchboard mcp: config: %s\n", safetext.Line(e.Error()))
		}
		problem := func(ce *config.ConfigError) string {
			if ce.Key != "" {
				return ce.Key + ": " + ce.Msg
			}
			return ce.Msg
		}
		if sub == "list" {
			for _, c := range cfgs {
				fmt.Fprintf(stdout, "%s\t%s\t%s\t(%s)\n", safetext.Line(c.Name), c.Transport, safetext.Line(c.Summary()), safetext.Line(c.Source))
			}
			for _, ce := range rejected {
				fmt.Fprintf(stdout, "%s\terror\t%s\t(%s)\n", safetext.Line(ce.Server), safetext.Line(problem(ce)), safetext.Line(ce.File))
			}
			if len(cfgs) == 0 && len(rejected) == 0 {
				fmt.Fprintln(stdout, "No MCP servers configured. Add one with: switchboard mcp add NAME -- COMMAND [ARGS...]")
			}
			return 0
		}
		if len(f.pos) != 1 {
			return fail(2, "get takes one NAME")
		}
		for _, c := range cfgs {
			if c.Name == f.pos[0] {
				printServer(stdout, c)
				return 0
			}
		}
		for _, ce := range rejected {
			if ce.Server == f.pos[0] {
				return fail(1, "%s in %s cannot be used: %s", ce.Server, ce.File, problem(ce))
			}
		}
		return fail(1, "no server named %s (see switchboard mcp list)", f.pos[0])
	case "import":
		return mcpImport(f, file, ws, stdout, fail)
	case "sandbox":
		return mcpSandbox(f, file, stdout, fail)
	}
	return fail(2, "unknown subcommand %q (want add, remove, list, get, import or sandbox)", sub)
}

func mcpAdd(f mcpFlags, file, ws string, stdout io.Writer, fail func(int, string, ...any) int) int {
	if len(f.pos) != 1 {
		return fail(2, "add takes one NAME, then -- COMMAND [ARGS...] or --url URL")
	}
	name := f.pos[0]
	var e config.Entry
	switch {
	case f.url != "" && len(f.command) > 0:
		return fail(2, "give either --url or -- COMMAND, not both")
	case f.url != "":
		e.URL, e.Type = f.url, f.transport
		if e.Type == "" {
			e.Type = "http"
		}
		if e.Type != "http" && e.Type != "sse" {
			return fail(2, "--transport must be http or sse")
		}
		if len(f.env) > 0 {
			return fail(2, "--env is for a command; a URL server takes --header")
		}
	case len(f.command) > 0:
		if f.transport != "" && f.transport != "stdio" {
			return fail(2, "--transport %s needs --url", f.transport)
		}
		if len(f.headers) > 0 {
			return fail(2, "--header is for a --url server")
		}
		e.Command, e.Args = f.command[0], f.command[1:]
	default:
		return fail(2, "add %s needs -- COMMAND [ARGS...] or --url URL", name)
	}
	for _, kv := range f.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fail(2, "--env wants KEY=VALUE, not %q", kv)
		}
		if e.Env == nil {
			e.Env = map[string]string{}
		}
		e.Env[k] = v
	}
	for _, kv := range f.headers {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return fail(2, "--header wants NAME:VALUE, not %q", kv)
		}
		if e.Headers == nil {
			e.Headers = map[string]string{}
		}
		e.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if f.protocol != mcpbridge.ProtocolAuto {
		e.Protocol = f.protocol // auto is the default: not written
	}
	if err := config.CheckEntry(file, ws, name, e); err != nil {
		return fail(2, "%v", err)
	}
	if err := config.AddServer(file, name, e); err != nil {
		if errors.Is(err, config.ErrServerExists) {
			return fail(1, "%s is already defined in %s: remove it first (switchboard mcp remove %s)", name, file, name)
		}
		return fail(1, "%v", err)
	}
	fmt.Fprintf(stdout, "Added %s to %s.\n", safetext.Line(name), safetext.Line(file))
	policyNote(stdout, file, name)
	return 0
}

// policyNote says, after an add, when the organisation's policy will keep the server from
// starting (it is still written: the file is the person's).
func policyNote(w io.Writer, file, name string) {
	p := policy.Load(policy.Options{Paths: policyPaths()})
	if p.Empty() {
		return
	}
	cfgs, _ := config.LoadConfig(config.ConfigSources{UserFile: file})
	for _, c := range cfgs {
		if c.Name != name {
			continue
		}
		if r, err := c.Resolve(nil); err == nil {
			c = r
		}
		if b := host.PolicyBlock(p, c); b != nil {
			fmt.Fprintf(w, "It will not start: %s\n", b.Message)
		}
	}
}

// mcpImport implements `switchboard mcp import`. A server read from the workspace's own file (a
// repository's: config.ImportSource.Workspace) is written only to a workspace's file, where it asks
// for the user's trust before it starts; the user's own go to the user's file. --scope or --file
// sends all of them to that one file, and a repository's server that would so become the user's
// own (user scope, a --file without --scope workspace, or the user's file itself) is refused
// before anything is written.
func mcpImport(f mcpFlags, file, ws string, stdout io.Writer, fail func(int, string, ...any) int) int {
	if f.from == "" {
		return fail(2, "import needs --from (%s)", strings.Join(config.ImportHosts, ", "))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return fail(1, "%v", err)
	}
	srcs, err := config.ImportSources(f.from, home, f.workspace)
	if err != nil {
		return fail(2, "%v", err)
	}
	userFile := config.DefaultUserFile(nil)
	wsFile := filepath.Join(f.workspace, ".switchboard", "mcp.json")
	// dest is the file a server read from src goes to, and the workspace folder it then belongs
	// to ("" for user scope).
	dest := func(src config.ImportSource) (string, string) {
		switch {
		case f.scopeSet || f.file != "":
			if isUserFile(file, userFile) {
				return file, "" // the user's own file is user scope, whatever --scope says
			}
			return file, ws
		case src.Workspace:
			return wsFile, f.workspace
		}
		return userFile, ""
	}
	// Names already defined: in the files written to, or by any source Switchboard reads here.
	defined := map[string]string{}
	cfgs, _ := config.LoadConfig(config.ConfigSources{WorkspaceFolders: []string{f.workspace}})
	for _, c := range cfgs {
		defined[c.Name] = c.Source
	}
	for _, src := range srcs {
		to, _ := dest(src)
		names, err := config.FileServers(to)
		if err != nil {
			return fail(1, "%v", err)
		}
		for _, n := range names {
			defined[n] = to
		}
	}
	// The plan first: nothing is written when a repository's server is refused.
	type step struct {
		im       config.Imported
		src      config.ImportSource
		to, toWS string
	}
	var plan []step
	var refused, refusedFrom []string
	refusedTo := ""
	for _, src := range srcs {
		ims, err := config.ImportServers(f.from, src.Path, f.workspace)
		if err != nil {
			return fail(1, "%v", err)
		}
		to, toWS := dest(src)
		for _, im := range ims {
			if im.Skip == "" {
				if at, ok := defined[im.Name]; ok {
					im.Skip = "already defined in " + at
				} else if err := config.CheckEntry(to, toWS, im.Name, im.Entry); err != nil {
					im.Skip = err.Error()
				}
			}
			if im.Skip == "" {
				defined[im.Name] = to
				if src.Workspace && toWS != "" {
					// A repository can make its .switchboard a link to a folder of the user's
					// (~/.config/switchboard, ~/.cursor): the write would land there.
					if l := symlinkOn(to); l != "" {
						return fail(1, "not importing %s (from %s) into %s: %s is a symbolic link, which could make it a file of your own; remove the link, or read the server and add it by hand with switchboard mcp add",
							im.Name, src.Path, to, l)
					}
				}
				if src.Workspace && toWS == "" {
					refused = append(refused, im.Name)
					if !slices.Contains(refusedFrom, src.Path) {
						refusedFrom = append(refusedFrom, src.Path)
					}
					refusedTo = to
				}
			}
			plan = append(plan, step{im, src, to, toWS})
		}
	}
	if len(refused) > 0 {
		return fail(2, "not importing %s (from %s) into %s: a repository's servers must not become your own, which start without asking in every folder; run it without --scope and --file to put them in %s, where they ask for your trust, or read them and add the ones you want with switchboard mcp add",
			strings.Join(refused, ", "), strings.Join(refusedFrom, ", "), refusedTo, wsFile)
	}

	verb, added, toWorkspace := "Added", 0, false
	if f.dryRun {
		verb = "Would add"
	}
	var files []string         // the files added to, in order
	counts := map[string]int{} // servers added, per file
	for _, s := range plan {
		n, from := safetext.Line(s.im.Name), safetext.Line(s.src.Path)
		if s.im.Skip != "" {
			fmt.Fprintf(stdout, "Skipped %s (from %s): %s\n", n, from, safetext.Line(s.im.Skip))
			continue
		}
		if !f.dryRun {
			if err := config.AddServer(s.to, s.im.Name, s.im.Entry); err != nil {
				return fail(1, "%v", err)
			}
		}
		added++
		if counts[s.to] == 0 {
			files = append(files, s.to)
		}
		counts[s.to]++
		toWorkspace = toWorkspace || s.toWS != ""
		line := fmt.Sprintf("%s %s (from %s) to %s: %s", verb, n, from, safetext.Line(s.to), safetext.Line(entrySummary(s.im.Entry)))
		if len(s.im.Dropped) > 0 {
			line += "; ignored keys " + safetext.Line(strings.Join(s.im.Dropped, ", "))
		}
		fmt.Fprintln(stdout, line)
	}
	if len(plan) == 0 {
		paths := make([]string, len(srcs))
		for i, s := range srcs {
			paths[i] = s.Path
		}
		fmt.Fprintf(stdout, "No %s servers found in %s.\n", f.from, safetext.Line(strings.Join(paths, ", ")))
		return 0
	}
	where := "" // " to F", or ": 2 to F, 1 to G"
	switch len(files) {
	case 0:
	case 1:
		where = " to " + safetext.Line(files[0])
	default:
		parts := make([]string, len(files))
		for i, p := range files {
			parts[i] = fmt.Sprintf("%d to %s", counts[p], safetext.Line(p))
		}
		where = ": " + strings.Join(parts, ", ")
	}
	if f.dryRun {
		fmt.Fprintf(stdout, "Dry run: %d of %d would be added%s.\n", added, len(plan), where)
	} else {
		fmt.Fprintf(stdout, "%d of %d added%s.\n", added, len(plan), where)
	}
	if toWorkspace {
		fmt.Fprintln(stdout, "A server in a workspace's file is that folder's alone: it will ask for your trust before it starts there.")
	}
	return 0
}

// symlinkOn returns file, or its folder, when it is a symbolic link ("" when neither is).
func symlinkOn(file string) string {
	for _, p := range []string{file, filepath.Dir(file)} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return p
		}
	}
	return ""
}

// isUserFile reports whether file is the user's own mcp.json (userFile), however it is named.
func isUserFile(file, userFile string) bool {
	if a, err := filepath.Abs(file); err == nil {
		file = a
	}
	return config.SameFile(file, userFile)
}

// entrySummary is what an entry runs, with env and header names but never their values.
func entrySummary(e config.Entry) string {
	s := e.URL
	if e.Command != "" {
		s = config.ServerConfig{Transport: config.TransportStdio, Command: e.Command, Args: e.Args}.Summary()
	}
	if len(e.Env) > 0 {
		s += "; env " + strings.Join(keys(e.Env), ", ")
	}
	if e.EnvFile != "" {
		s += "; envFile " + e.EnvFile
	}
	if len(e.Headers) > 0 {
		s += "; headers " + strings.Join(keys(e.Headers), ", ")
	}
	return s
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// printServer prints one server's definition as written. Env and header values are shown only
// when they are references (${env:X}); values written in the file are secrets and are hidden.
func printServer(w io.Writer, c config.ServerConfig) {
	shown := func(v string) string {
		if strings.Contains(v, "${") {
			return safetext.Line(v)
		}
		return "(value hidden)"
	}
	fmt.Fprintf(w, "%s\n  type: %s\n  source: %s\n", safetext.Line(c.Name), c.Transport, safetext.Line(c.Source))
	if c.Transport == config.TransportStdio {
		fmt.Fprintf(w, "  command: %s\n", safetext.Line(c.Summary()))
		if c.Cwd != "" {
			fmt.Fprintf(w, "  cwd: %s\n", safetext.Line(c.Cwd))
		}
	} else {
		fmt.Fprintf(w, "  url: %s\n", safetext.Line(c.URL))
	}
	for _, k := range keys(c.Env) {
		fmt.Fprintf(w, "  env %s=%s\n", safetext.Line(k), shown(c.Env[k]))
	}
	if c.EnvFile != "" {
		fmt.Fprintf(w, "  envFile: %s (sets %s)\n", safetext.Line(c.EnvFile), safetext.Line(strings.Join(c.EnvFileKeys, ", ")))
	}
	for _, k := range keys(c.Headers) {
		fmt.Fprintf(w, "  header %s: %s\n", safetext.Line(k), shown(c.Headers[k]))
	}
	if c.Disabled {
		fmt.Fprintln(w, "  disabled")
	}
}

// mcpSandbox adds --allow-read and --allow-write paths to a sandboxed server's entry.
func mcpSandbox(f mcpFlags, file string, stdout io.Writer, fail func(int, string, ...any) int) int {
	if len(f.pos) != 1 {
		return fail(2, "sandbox takes one NAME, then --allow-read PATH or --allow-write PATH")
	}
	if len(f.allowRead)+len(f.allowWrite) == 0 {
		return fail(2, "sandbox needs --allow-read PATH or --allow-write PATH")
	}
	// A path typed in a shell is relative to where it was typed, not to the workspace folder the
	// entry's own relative paths are anchored at.
	abs := func(l []string) ([]string, error) {
		out := make([]string, len(l))
		for i, p := range l {
			if p == "~" || strings.HasPrefix(p, "~/") || filepath.IsAbs(p) {
				out[i] = p
				continue
			}
			a, err := filepath.Abs(p)
			if err != nil {
				return nil, err
			}
			out[i] = a
		}
		return out, nil
	}
	read, err := abs(f.allowRead)
	if err != nil {
		return fail(2, "%v", err)
	}
	write, err := abs(f.allowWrite)
	if err != nil {
		return fail(2, "%v", err)
	}
	p, err := config.AllowSandbox(file, f.pos[0], read, write)
	if err != nil {
		if errors.Is(err, config.ErrServerNotFound) {
			return fail(1, "%s is not defined in %s", f.pos[0], file)
		}
		return fail(1, "%v", err)
	}
	fmt.Fprintf(stdout, "%s in %s: %s.\n", safetext.Line(f.pos[0]), safetext.Line(file), p.Describe())
	return 0
}
