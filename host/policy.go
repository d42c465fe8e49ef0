package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/mcpregistry"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// The organisation's policy (permissions/policy, design section 6): loaded from Options.Policy,
// watched while the host runs, and applied at four places: the registry's admission (a blocked
// server never starts, from any source), the gate's first step (deny, ask, managed allow,
// disabled modes), the model's tool list (a denied tool is not offered) and sampling.

// Policy is the organisation's policy as it is now (never nil; empty without policy files).
func (a *App) Policy() *policy.Policy { return a.policyW.Policy() }

// policyWatch reloads the policy when its files change and applies it at once: servers it now
// blocks stop, servers it no longer blocks start, and the tool list and gate follow.
func (a *App) policyWatch() {
	err := a.policyW.Run(a.baseCtx, func(p *policy.Policy) {
		a.log.Info("host: the organisation's policy changed", "digest", p.Digest())
		a.policyNotice(p)
		a.stopDeniedTasks() // tasks.go: a running task whose tool it now denies hands nothing on
		a.pins.gen.Add(1)   // the model's tool list is remade with the new denials
		a.reapply()         // the registry asks the policy anew: newly blocked servers stop
	})
	if err != nil {
		a.log.Warn(fmt.Sprintf("host: policy changes will not be seen until restart: %v", err))
	}
}

// policyNotice tells the person once about a broken policy (everything MCP is off until fixed).
func (a *App) policyNotice(p *policy.Policy) {
	if err := p.Broken(); err != nil {
		contact := "Ask your administrator."
		if c := p.Contact().String(); c != "" {
			contact = "Contact " + c + "."
		}
		a.ui.Notify(LevelError, "Switchboard: your organisation's policy is broken, so every MCP server is blocked: "+
			safetext.Line(err.Error())+". "+safetext.Line(contact))
	}
}

// PolicyLaunch is what a resolved config runs, for the policy: the command as found on the PATH
// (exec.Command finds it the same way) and the arguments, or the URL. A server of managed-mcp.json
// (its Source is that file) is Scope managed.
func PolicyLaunch(c config.ServerConfig, managed []policy.ManagedServer) policy.Launch {
	l := policy.Launch{Name: c.Name, Scope: policy.ScopeUser, Source: c.Source, Transport: c.Transport,
		Command: c.Command, Args: c.Args, URL: c.URL}
	if c.WorkspaceOnly {
		l.Scope = policy.ScopeWorkspace
	}
	if i := slices.IndexFunc(managed, func(m policy.ManagedServer) bool { return m.Name == c.Name }); i >= 0 &&
		managed[i].Rule.File == c.Source && !c.WorkspaceOnly {
		l.Scope, l.Managed = policy.ScopeManaged, c.Source
	}
	if c.Transport == config.TransportStdio || c.Transport == "" {
		// mcpSandbox "required" admits the entry's own sandbox only: the launcher refuses to start
		// it where the kernel cannot confine it, and the block says when this system cannot.
		l.Sandboxed = c.Sandbox != nil
		l.CodeEnv = CodeEnv(c.Env, os.LookupEnv)
		if mcpbridge.PackageRunner(c) {
			dir := mcpbridge.RunDir(c)
			if dir == "" {
				dir, _ = os.Getwd() // ignore error: an unknown folder is named "." and not admitted
				if dir == "" {
					dir = "."
				}
			}
			if dir != string(filepath.Separator) {
				l.RunnerDir = dir
			}
		}
		if err := sandboxAvailable(); err != nil {
			l.NoSandbox = strings.TrimPrefix(err.Error(), "sandbox: ")
		}
		switch {
		case filepath.IsAbs(c.Command):
			l.Path = c.Command
		case strings.ContainsRune(c.Command, filepath.Separator) || strings.ContainsRune(c.Command, '/'):
			// Relative to the folder it runs in (exec evaluates it relative to Dir): a workspace
			// file's entry runs in its own folder, not the host's (mcpbridge.RunDir).
			l.Path = filepath.Join(mcpbridge.RunDir(c), c.Command)
			if abs, err := filepath.Abs(l.Path); err == nil {
				l.Path = abs
			}
		case c.Sandbox != nil && c.Env["PATH"] != "":
			// The sandbox's launcher finds the command on the server's own PATH (mcpbridge/sandbox),
			// not the host's as exec does: match the program it runs.
			l.Path = lookPathIn(c.Command, c.Env["PATH"])
		default:
			l.Path, _ = exec.LookPath(c.Command) // ignore error: unresolved, no allow rule matches it
		}
	}
	return l
}

// quietEnv are keys that config.LoadsCode's families hold but that name no code: an entry that
// sets them still runs the command an allowlist vetted.
var quietEnv = []string{"NODE_ENV", "NODE_NO_WARNINGS", "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE", "PYTHONUTF8"}

// CodeEnv are the keys of env that make the server's program load, fetch or find other code
// (config.LoadsCode: PATH, HOME, NODE_OPTIONS, LD_PRELOAD, npm_config_*, ...), sorted. One the
// host's environment has with the same value changes nothing: the command was vetted as it runs
// with that.
func CodeEnv(env map[string]string, lookup func(string) (string, bool)) []string {
	var out []string
	for k, v := range env {
		if !config.LoadsCode(k) || slices.Contains(quietEnv, strings.ToUpper(k)) {
			continue
		}
		if hv, ok := lookup(k); ok && hv == v {
			continue
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// sandboxAvailable says why this system cannot sandbox a server (tests: a kernel without Landlock).
var sandboxAvailable = sandbox.Available

// lookPathIn finds command in the folders of path as the sandbox does (absolute entries only),
// "" when none has it.
func lookPathIn(command, path string) string {
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, command)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// admit is the registry's Admit.
func (a *App) admit(resolved config.ServerConfig) *mcpbridge.Blocked {
	b := PolicyBlock(a.Policy(), resolved)
	a.auditBlock(resolved.Name, b)
	return b
}

// auditBlock writes a server the policy blocks to the audit log (by "policy", the rule in entry,
// its file in file, tool mcp__<server> as a server-wide rule names it), once per block: the
// registry asks at every apply and again before each start, and a reconnect asks again; only a
// block that is new, or decided by another rule, is a new line.
func (a *App) auditBlock(server string, b *mcpbridge.Blocked) {
	a.blockedMu.Lock()
	prev, had := a.blockedAudit[server]
	switch {
	case b == nil:
		delete(a.blockedAudit, server)
	case !had || prev != *b:
		if a.blockedAudit == nil {
			a.blockedAudit = map[string]mcpbridge.Blocked{}
		}
		a.blockedAudit[server] = *b
	}
	a.blockedMu.Unlock()
	if b == nil || (had && prev == *b) || a.audit == nil {
		return
	}
	a.audit.Record(permissions.Request{Tool: "mcp__" + server, Server: server, Mode: a.Mode()},
		permissions.Decision{By: permissions.ByPolicy, Entry: b.Rule, File: b.Source, Reason: "server blocked: " + b.Message}, 0)
}

// registryClients are this process's clients of organisation registries, by URL: a server.json
// read for one admission is reused by the next (for mcpregistry.VerifyMaxAge), and decides
// while the registry cannot be reached. Nothing is kept on disk: a copy in the user's cache
// folder is the user's to forge (see mcpregistry.Client.Lookup).
var registryClients sync.Map // string -> *mcpregistry.Client

// RegistryClient is the process's client of the registry at url (the official one for "").
func RegistryClient(url string) (*mcpregistry.Client, error) {
	if url == "" {
		url = mcpregistry.Official
	}
	if c, ok := registryClients.Load(url); ok {
		return c.(*mcpregistry.Client), nil
	}
	c, err := mcpregistry.NewClient(url, mcpregistry.Options{})
	if err != nil {
		return nil, err
	}
	got, _ := registryClients.LoadOrStore(url, c)
	return got.(*mcpregistry.Client), nil
}

// registryTimeout bounds one check against the registry (admission runs off the registry's
// locks, before the server starts; a registry that does not answer blocks, it does not hang).
const registryTimeout = 15 * time.Second

// registryCheck is what Launch.Registry and RegistryErr say under mcpAccess registry: whether
// resolved is exactly what the organisation's registry gives for the entry's name and version.
// Fails closed: no registry and no copy read by this process, no admission.
func registryCheck(p *policy.Policy, resolved config.ServerConfig) (ok, why string) {
	url, _ := p.RegistryURL()
	c, err := RegistryClient(url)
	if err != nil {
		return "", err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	if err := mcpregistry.Verify(ctx, c, resolved); err != nil {
		return "", err.Error()
	}
	return resolved.Registry.Name + "@" + resolved.Registry.Version + " from " + c.URL(), ""
}

// AdmissionLaunch is PolicyLaunch and, under mcpAccess registry, what the organisation's
// registry says of the resolved config: the launch Admit decides on (`check` and `policy explain`
// show the same decision as the start).
func AdmissionLaunch(p *policy.Policy, resolved config.ServerConfig) policy.Launch {
	l := PolicyLaunch(resolved, p.ManagedServers())
	if p.RegistryOnly() && l.Scope != policy.ScopeManaged {
		l.Registry, l.RegistryErr = registryCheck(p, resolved)
	}
	return l
}

// PolicyBlock is the registry's Admit for a policy (`switchboard check` uses it too).
func PolicyBlock(p *policy.Policy, resolved config.ServerConfig) *mcpbridge.Blocked {
	if p.Empty() {
		return nil
	}
	d := p.Admit(AdmissionLaunch(p, resolved))
	if d.Allowed {
		return nil
	}
	b := &mcpbridge.Blocked{Message: d.Message, Rule: d.Rule.Loc()}
	if d.Rule != nil {
		b.Source = d.Rule.File
	}
	return b
}

// policyVerdict is the gate's Policy: a few map lookups on every call.
func (a *App) policyVerdict(req permissions.Request) permissions.PolicyVerdict {
	p := a.Policy()
	if p.Empty() {
		return permissions.PolicyVerdict{}
	}
	var v policy.ToolVerdict
	if t, ok := a.registryTool(req); ok {
		v = p.ToolNamed(req.Tool, req.Server, t.Tool) // a rule names the server's tool, not a made-safe name
	} else if req.Server == "" {
		v = p.Builtin(req.Tool, req.ReadOnlyBuiltin)
	} else {
		v = p.Tool(req.Tool, req.Server)
	}
	out := permissions.PolicyVerdict{Deny: v.Deny != nil, Ask: v.Ask != nil, Allow: v.Allow != nil, Reason: v.Reason}
	for _, r := range []*policy.Rule{v.Deny, v.Ask, v.Allow} {
		if r != nil {
			out.Rule, out.File = r.Loc(), r.File
			break
		}
	}
	if mv := p.Mode(req.Mode.String(), false); mv.Refused != nil {
		out.ModeOff, out.ModeRule = true, mv.Refused.Loc()
		out.Fallback, _ = permissions.ParseMode(mv.Mode) // ignore error: the policy names only known modes
	}
	out.NoUserGrants = p.ManagedRulesOnly() != nil
	if out.Allow && !out.Deny && !out.Ask {
		// A rule names the server by name only; a workspace file's server can take any name.
		if c, ok := a.configFor(req.Server); ok && c.Folder != "" {
			out.Allow, out.AllowNotHere = false, true
		}
	}
	return out
}

// toolDenied is the policy rule that denies tool of server ("" none, or no policy watched): a
// tool rule, or the rule that blocks its server altogether (deniedMcpServers and the like, as the
// registry's last Admit of it found), which no tool rule names. own is the server's own name for
// the tool when known ("": the registry's, when the server runs): a rule names that one, not a
// made-safe registered name.
func (a *App) toolDenied(tool, server, own string) string {
	if a.policyW == nil {
		return ""
	}
	if own == "" {
		if t, ok := a.registryTool(permissions.Request{Tool: tool, Server: server}); ok {
			own = t.Tool
		}
	}
	if p := a.Policy(); !p.Empty() {
		if v := p.ToolNamed(tool, server, own); v.Deny != nil {
			return v.Deny.Loc()
		}
	}
	a.blockedMu.Lock()
	b, blocked := a.blockedAudit[server]
	a.blockedMu.Unlock()
	if blocked && server != "" {
		if b.Rule == "" {
			return "its server is blocked"
		}
		return b.Rule
	}
	return ""
}

// serverTool is the server's own name for tool when it differs from the registered name ("":
// the same, or the server is not running).
func (a *App) serverTool(tool, server string) string {
	if t, ok := a.registryTool(permissions.Request{Tool: tool, Server: server}); ok && "mcp__"+server+"__"+t.Tool != tool {
		return t.Tool
	}
	return ""
}

// registryTool is the MCP tool req calls, as the registry has it (its server's own name for it).
func (a *App) registryTool(req permissions.Request) (mcpbridge.Tool, bool) {
	if req.Server == "" || a.registry == nil {
		return mcpbridge.Tool{}, false
	}
	t, ok := a.registry.Lookup(req.Tool)
	return t, ok && t.Server == req.Server
}

// policyMode is the mode a request runs in: a disabled mode asked for by name is refused (an
// *UnavailableError naming the rule: LSP RequestFailed); the configured one falls back to
// single-confirm with one warning.
func (a *App) policyMode(explicit *permissions.Mode) (permissions.Mode, error) {
	mode := a.Mode()
	if explicit != nil {
		mode = *explicit
	}
	mv := a.Policy().Mode(mode.String(), explicit != nil)
	switch {
	case mv.Refused == nil:
		return mode, nil
	case explicit != nil:
		return mode, &UnavailableError{Msg: mv.Message}
	}
	if a.policyWarned.CompareAndSwap(false, true) {
		a.ui.Notify(LevelWarning, "Switchboard: "+safetext.Line(mv.Warning))
	}
	m, _ := permissions.ParseMode(mv.Mode) // ignore error: the policy names only known modes
	return m, nil
}

// policyTools marks the tools the policy denies as Held in the model's tool set: they are not
// offered to the model (the gate refuses them anyway).
func (a *App) policyTools(snap *mcpbridge.ToolSet) *mcpbridge.ToolSet {
	p := a.Policy()
	if p.Empty() {
		return snap
	}
	var tools []mcpbridge.Tool
	for i, t := range snap.All() {
		if !t.Held && p.ToolNamed(t.Name, t.Server, t.Tool).Deny != nil {
			if tools == nil {
				tools = slices.Clone(snap.All())
			}
			tools[i].Held = true
		}
	}
	if tools == nil {
		return snap
	}
	return mcpbridge.NewToolSet(tools)
}

// policySampling refuses a server's use of the model when the policy denies sampling.
func (a *App) policySampling(ctx context.Context, server string) error {
	if r := a.Policy().SamplingDenied(); r != nil {
		a.log.Info(fmt.Sprintf("host: MCP server '%s' asked to use the model; the organisation's policy refuses it (%s)", server, r.Loc()))
		return mcpbridge.ErrSampleRejected
	}
	return nil
}

// policyPinning is the pinning in force: the person's, or the policy's when that is stricter.
func policyPinning(p *policy.Policy, person string) string {
	forced, _ := p.Pinning()
	rank := map[string]int{PinningEnforce: 0, PinningWarn: 1, PinningOff: 2}
	if forced != "" && rank[forced] < rank[person] {
		return forced
	}
	return person
}

// WithManaged adds the servers of the policy's managed-mcp.json to cfgs (design section 6.3):
// they are read from that file as the user's own (no trust question) and take the place of any
// server of the same name, which would be blocked anyway. It also narrows every server's sharing
// to the policy's sharedServers (narrowShared). Without a managed-mcp.json or sharedServers, cfgs
// is returned as is.
func WithManaged(p *policy.Policy, cfgs []config.ServerConfig, getenv func(string) (string, bool)) ([]config.ServerConfig, []error) {
	out, errs := withManaged(p, cfgs, getenv)
	return narrowShared(p, out), errs
}

// narrowShared applies the policy's sharedServers (design section 6.2): "deny" runs every server
// in its own window, "workspace-only" shares a server marked true only among windows of the same
// folders. The server still runs; only who else's windows reach its process narrows.
func narrowShared(p *policy.Policy, cfgs []config.ServerConfig) []config.ServerConfig {
	v, _ := p.SharedServers()
	if v != "deny" && v != "workspace-only" {
		return cfgs
	}
	var out []config.ServerConfig // a copy once something changes: cfgs may be the caller's
	for i, c := range cfgs {
		switch {
		case c.Shared == "":
			continue
		case v == "deny":
			c.Shared = ""
		case c.Shared == config.SharedUser:
			c.Shared = config.SharedWorkspace
		default:
			continue
		}
		if out == nil {
			out = slices.Clone(cfgs)
		}
		out[i] = c
	}
	if out == nil {
		return cfgs
	}
	return out
}

func withManaged(p *policy.Policy, cfgs []config.ServerConfig, getenv func(string) (string, bool)) ([]config.ServerConfig, []error) {
	managed := p.ManagedServers()
	if len(managed) == 0 {
		return cfgs, nil
	}
	file := managed[0].Rule.File
	mcfgs, errs := config.LoadConfig(config.ConfigSources{UserFile: file, Getenv: getenv})
	keep := map[string]bool{}
	for _, m := range managed {
		keep[m.Name] = m.Rule.File == file
	}
	out := slices.DeleteFunc(slices.Clone(cfgs), func(c config.ServerConfig) bool { return keep[c.Name] })
	for _, c := range mcfgs {
		if keep[c.Name] && c.Source == file {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b config.ServerConfig) int { return strings.Compare(a.Name, b.Name) })
	return out, errs
}
