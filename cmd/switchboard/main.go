// Command switchboard is the Switchboard host: an LSP server (serve) that runs an LLM agent and a
// registry of MCP servers behind one confirm gate, plus a few command-line tools around it.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// A subcommand takes its arguments (without the subcommand name) and returns the exit code.
type subcommand struct {
	name, usage string
	run         func(args []string, stdout, stderr io.Writer) int
}

func subcommands() []subcommand {
	return []subcommand{
		{"serve", "serve [--stdio] [--log FILE]       run the LSP server on stdin/stdout (what editors start)", runServe},
		{"check", "check [--config FILE]... [--workspace DIR] [--trust-workspace] [--json]   connect every configured MCP server and report", runCheck},
		{"call", "call NAME [JSON-ARGS] [--mode M]  call one tool through the confirm gate", runCall},
		{"allow", "allow list | allow set PREFIX [ENTRY...]   show or change the tool allowlist", runAllow},
		{"mcp", "mcp add|remove|list|get|import ...       manage MCP servers in config files (switchboard mcp help)", runMCP},
		{"auth", "auth login|logout|status [SERVER]   sign in to remote MCP servers (OAuth), sign out, show sign-ins", runAuth},
		{"pins", "pins list [SERVER] | diff|accept SERVER [TOOL...]   show or accept tool definitions that changed since you approved them", runPins},
		{"resources", "resources [SERVER]                 list the MCP servers' resources and templates", runResources},
		{"read", "read URI [--server S]              print an MCP resource", runRead},
		{"prompts", "prompts [SERVER]                   list the MCP servers' prompts", runPrompts},
		{"prompt", "prompt NAME [ARGS-JSON]            run an MCP prompt and print its messages", runPrompt},
	}
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

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
		return runServe(args, stdout, stderr)
	case "-h", "--help", "help":
		usage(stdout)
		return 0
	}
	for _, c := range subcommands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "switchboard: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: switchboard COMMAND [ARGS]\n\ncommands:\n")
	for _, c := range subcommands() {
		fmt.Fprintf(w, "  %s\n", c.usage)
	}
	fmt.Fprintf(w, "  --version                          print the version\n")
}

// namedConfigsExist reports, one stderr line each, the --config files that do not exist or cannot
// be read; false when there is any (the caller exits 2: a usage error, nothing was run).
func namedConfigsExist(cmd string, files []string, stderr io.Writer) bool {
	errs := mcpbridge.CheckNamedConfigFiles(files)
	for _, err := range errs {
		fmt.Fprintf(stderr, "switchboard %s: --config: %v\n", cmd, err)
	}
	return len(errs) == 0
}
