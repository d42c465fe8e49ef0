package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/switchboard-dev/switchboard/session/sessiontest/agentbench"
)

// runAgent prints the scripted-model benchmark of tool search (issue 18): request and schema
// bytes per step of one turn, with tool search and with every tool sent.
func runAgent(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sbbench agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	servers := fs.Int("servers", 10, "MCP servers")
	per := fs.Int("tools", 30, "tools per server")
	steps := fs.Int("steps", 5, "model calls in the turn (the last answers in text)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *steps < 2 {
		fmt.Fprintln(stderr, "sbbench agent: -steps must be at least 2")
		return 2
	}
	res, err := agentbench.Run(context.Background(), *servers, *per, *steps, 0)
	if err != nil {
		fmt.Fprintln(stderr, "sbbench agent:", err)
		return 1
	}
	fmt.Fprintf(stdout, "\nTool search, scripted model: %d tools from %d servers, a %d-step turn (OpenAI wire format; reached %d of %d tools)\n",
		res.Total, res.Servers, len(res.Steps), res.Reached, res.Total)
	fmt.Fprintf(stdout, "%-6s %21s %21s %9s %21s %9s\n", "step", "tools (search / all)", "schema B search", "ratio", "request B search", "ratio")
	row := func(name string, s agentbench.Step) {
		fmt.Fprintf(stdout, "%-6s %9d / %-9d %10d / %-10d %8.1fx %10d / %-10d %8.1fx\n", name, s.Tools, s.AllTools,
			s.ToolBytes, s.AllToolByte, byteRatio(s.AllToolByte, s.ToolBytes), s.BodyBytes, s.AllBody, byteRatio(s.AllBody, s.BodyBytes))
	}
	for i, s := range res.Steps {
		row(fmt.Sprint(i+1), s)
	}
	row("total", res.Sum())
	if res.Reached != res.Total {
		fmt.Fprintf(stderr, "sbbench agent: only %d of %d tools were reached\n", res.Reached, res.Total)
		return 1
	}
	return 0
}

func byteRatio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
