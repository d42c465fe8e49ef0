// Command switchboard is the Switchboard host: an LSP server (serve) that runs an LLM agent and a
// registry of MCP servers behind one confirm gate, plus a few command-line tools around it.
package main

import (
	"fmt"
	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
	"io"
	"os"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// A subcommand takes its arguments (without the subcommand name) and returns the exit code.
type subcommand struct {
	name, usage string
	run         func(args []string, stdout, stderr io.Writer) int
	// help prints the command's usage; args are those after the command name (a subcommand
	// may have a usage of its own). run answers -h and --help with it before the command runs.
	help func(w io.Writer, args []string)
	// subs are the command's subcommands as typed after its name ("input set" for two words).
	subs []string
}

func subcommands() []subcommand {
	text := func(s string) func(io.Writer, []string) { return func(w io.Writer, _ []string) { fmt.Fprint(w, s) } }
	// The flag-based commands print their flag set's usage: given only -h (after a verb where
	// they take one) they parse nothing else and write it to their stderr, here w.
	flags := func(run func([]string, io.Writer, io.Writer) int, args ...string) func(io.Writer, []string) {
		return func(w io.Writer, _ []string) { run(append(args, "-h"), io.Discard, w) }
	}
	return []subcommand{
		{"serve", "serve [--stdio] [--log FILE]       run the LSP server on stdin/stdout (what editors start)", runServe, flags(runServe), nil},
		{"check", "check [--config FILE]... [--workspace DIR] [--trust-workspace] [--json]   connect every configured MCP server and report", runCheck, flags(runCheck), nil},
		{"call", "call NAME [JSON-ARGS] [--mode M] [--config FILE]...   call one tool through the confirm gate", runCall, text(callUsage), nil},
		{"allow", "allow list | allow set PREFIX [ENTRY...]   show or change the tool allowlist", runAllow, text(allowUsage), []string{"list", "set"}},
		{"mcp", "mcp add|remove|list|get|import|sandbox ... manage MCP servers in config files (switchboard mcp help)", runMCP, mcpHelp,
			[]string{"add", "remove", "list", "get", "import", "sandbox", "input", "input set", "input delete"}},
		{"auth", "auth login|logout|status [SERVER]   sign in to remote MCP servers (OAuth), sign out, show sign-ins", runAuth, flags(runAuth, "status"),
			[]string{"login", "logout", "status"}},
		{"pins", "pins list [SERVER] | diff|accept SERVER [TOOL...]   show or accept tool definitions that changed since you approved them", runPins, flags(runPins, "list"),
			[]string{"list", "diff", "accept"}},
		{"policy", "policy explain NAME                 the organisation's decision chain for one tool or server", runPolicy, text(policyUsage), []string{"explain"}},
		{"resources", "resources [SERVER]                 list the MCP servers' resources and templates", runResources, text(resourcesUsage), nil},
		{"read", "read URI [--server S]              print an MCP resource", runRead, text(resourcesUsage), nil},
		{"prompts", "prompts [SERVER]                   list the MCP servers' prompts", runPrompts, text(resourcesUsage), nil},
		{"prompt", "prompt NAME [ARGS-JSON]            run an MCP prompt and print its messages", runPrompt, text(resourcesUsage), nil},
		{"daemon", "daemon status|stop|restart         show, stop or replace the shared-server daemon", runDaemon, text(daemonUsage),
			[]string{"status", "stop", "restart"}},
	}
}

func main() {
	// First: when this process is a sandboxed server's launcher, it confines itself and becomes
	// the server here (and never returns).
	sandbox.Main()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Fprintf(stdout, "switchboard %s\n", version)
		return 0
	case "--stdio": // vscode-languageclient may start the binary with only --stdio
		args = append([]string{"serve"}, args...)
	case "-h", "-help", "--help", "help":
		if len(args) == 1 || args[0] != "help" {
			usage(stdout)
			return 0
		}
		args = append(args[1:], "--help") // switchboard help COMMAND [SUBCOMMAND]
	}
	for _, c := range subcommands() {
		if c.name == args[0] {
			if helpAsked(args[1:]) {
				c.help(stdout, args[1:])
				return 0
			}
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "switchboard: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// helpAsked reports whether args ask for the usage: -h, -help or --help anywhere before a "--"
// (after it come a server's own command and arguments, as in switchboard mcp add NAME -- CMD -h).
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: switchboard COMMAND [ARGS]\n\ncommands:\n")
	for _, c := range subcommands() {
		fmt.Fprintf(w, "  %s\n", c.usage)
	}
	fmt.Fprintf(w, "  --version                          print the version\n")
	fmt.Fprintf(w, "\nswitchboard COMMAND -h (or switchboard help COMMAND) shows a command's usage.\n")
}

// namedConfigsExist reports, one stderr line each, the --config files that do not exist or cannot
// be read; false when there is any (the caller exits 2: a usage error, nothing was run).
func namedConfigsExist(cmd string, files []string, stderr io.Writer) bool {
	errs := config.CheckNamedConfigFiles(files)
	for _, err := range errs {
		fmt.Fprintf(stderr, "switchboard %s: --config: %v\n", cmd, err)
	}
	return len(errs) == 0
}
