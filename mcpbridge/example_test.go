package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// A registry over one in-process server (through the tests' dial seam): its tools get
// mcp__<server>__<tool> names and calls come back as capped Results.
func Example() {
	srv := server.NewMCPServer("demo", "1.0")
	srv.AddTool(mcp.NewTool("echo", mcp.WithString("text")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})

	r := NewRegistry(Options{})
	defer r.Close()
	r.dial = func(config.ServerConfig, []string, *slog.Logger) (transport.Interface, error) {
		return transport.NewInProcessTransport(srv), nil
	}
	r.Apply(context.Background(), []config.ServerConfig{{Name: "demo", Transport: config.TransportStdio, Command: "demo",
		StartupTimeout: config.DefaultStartupTimeout, CallTimeout: config.DefaultCallTimeout}})
	r.WaitIdle(context.Background())

	for _, t := range r.Tools() {
		fmt.Println(t.Name)
	}
	res, _ := r.Call(context.Background(), "mcp__demo__echo", json.RawMessage(`{"text":"hello"}`))
	fmt.Println(res.Text, res.IsError)
	res, _ = r.Call(context.Background(), "mcp__demo__nope", nil)
	fmt.Println(res.Text, res.IsError)
	// Output:
	// mcp__demo__echo
	// hello false
	// {"error":"Unknown tool: mcp__demo__nope"} true
}
