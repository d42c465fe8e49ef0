// Command sbconformance is the client the official MCP conformance suite
// (@modelcontextprotocol/conformance, client mode) runs against Switchboard: `make
// test-conformance` (run.sh) starts the suite, and the suite starts this program once per
// scenario with the scenario's server URL as the last argument and MCP_CONFORMANCE_SCENARIO,
// MCP_CONFORMANCE_PROTOCOL_VERSION and, for some, MCP_CONFORMANCE_CONTEXT in the environment.
//
// It drives Switchboard's own code the way a user's setup does: it writes an mcp.json in a
// private $XDG_CONFIG_HOME, loads it with config.LoadConfig, opens an mcpbridge.Registry with
// the file token store in a private $XDG_STATE_HOME, signs in with Registry.SignIn when a server
// needs it (the browser step replaced by following the authorization server's redirect to the
// loopback callback), and sends every tool call through a permissions.Gate in always-allow mode.
// Elicitations are answered with the form's defaults and sampling with a fixed text.
//
// Exit status: 0 when the scenario's steps ran, 1 otherwise (the suite's checks decide the rest).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"
)

// scenarioTimeout is below the suite's own 30 s, so a stuck step ends here with a reason.
const scenarioTimeout = 25 * time.Second

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if len(args) == 0 || scenario == "" {
		fmt.Fprintln(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=NAME sbconformance [--] SERVER-URL (the conformance suite runs it)")
		return 2
	}
	serverURL := args[len(args)-1]
	h, ok := handlerFor(scenario)
	if !ok {
		names := make([]string, 0, len(scenarios))
		for n := range scenarios {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "sbconformance: scenario %q is not one this client does (it does: %s)\n", scenario, strings.Join(names, ", "))
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, scenarioTimeout)
	defer cancel()

	env, err := newEnv(ctx, log, scenario, serverURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sbconformance: %s: %v\n", scenario, err)
		return 1
	}
	defer env.close()
	if err := h(ctx, env); err != nil {
		fmt.Fprintf(os.Stderr, "sbconformance: %s: %v\n", scenario, err)
		return 1
	}
	log.Info("scenario done", "scenario", scenario)
	return 0
}
