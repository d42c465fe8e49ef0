package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions/policy"
)

// policyPaths is where the organisation's policy is read from: the platform's places. Tests of
// this package point it at temporary directories; there is no flag or variable for it, so a
// user cannot run Switchboard past the policy.
var policyPaths = policy.DefaultPaths

const policyUsage = `usage: switchboard policy explain NAME [--config FILE]... [--workspace DIR]

Prints the organisation's decision chain for NAME: a tool (mcp__server__tool, or a built-in tool
name) or a configured MCP server (what it runs is resolved as when it starts). Exit status 2 when
the policy is broken.
`

// runPolicy is `switchboard policy explain NAME`.
func runPolicy(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "explain" {
		fmt.Fprint(stderr, policyUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return 0
		}
		return 2
	}
	fs := flag.NewFlagSet("policy explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var configs, workspaces checkList
	fs.Var(&configs, "config", "read MCP servers from `FILE` too (repeatable)")
	fs.Var(&workspaces, "workspace", "workspace folder `DIR` (default: the current directory)")
	fs.Usage = func() { fmt.Fprint(stderr, policyUsage); fs.PrintDefaults() }
	var name string
	rest := args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return parseExit(err)
	}
	if name == "" && fs.NArg() == 1 {
		name = fs.Arg(0)
	}
	if name == "" || fs.NArg() > 1 {
		fs.Usage()
		return 2
	}
	if len(workspaces) == 0 {
		if wd, err := os.Getwd(); err == nil {
			workspaces = checkList{wd}
		}
	}
	p := policy.Load(policy.Options{Paths: policyPaths()})
	code := 0
	if err := p.Broken(); err != nil {
		fmt.Fprintf(stderr, "switchboard policy: the policy is broken, so every MCP server and call is blocked: %s\n", safetext.Line(err.Error()))
		code = 2
	}
	if p.Empty() {
		fmt.Fprintln(stdout, "No organisation policy: no policy file exists.")
	}
	cfgs, _ := config.LoadConfig(config.ConfigSources{WorkspaceFolders: workspaces, ExtraFiles: configs})
	server, _, isTool := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
	isTool = isTool && strings.HasPrefix(name, "mcp__")
	var cfg *config.ServerConfig
	for i := range cfgs {
		if (isTool && cfgs[i].Name == server) || (!isTool && cfgs[i].Name == name) {
			cfg = &cfgs[i]
		}
	}
	switch {
	case isTool:
		p.ExplainTool(name).WriteExplain(stdout, name)
		if cfg != nil {
			explainServer(stdout, p, *cfg)
		}
	case cfg != nil:
		explainServer(stdout, p, *cfg)
	default:
		// Not a configured server: a built-in tool name, or a server judged by its name alone.
		p.ExplainTool(name).WriteExplain(stdout, name)
		fmt.Fprintf(stdout, "(no configured server is named %s; a server is judged on what it runs, so configure it or pass --config)\n", safetext.Line(name))
	}
	return code
}

func explainServer(w io.Writer, p *policy.Policy, c config.ServerConfig) {
	resolved := c
	if r, err := c.Resolve(inputLookup()); err == nil {
		resolved = r
	}
	p.ExplainServer(host.AdmissionLaunch(p, resolved)).WriteExplain(w, "server "+c.Name)
}
