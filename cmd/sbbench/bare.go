package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// serverSpec is how to start one MCP server (the same for every subject).
type serverSpec struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// bareClient is the baseline: a bare mcp-go stdio client talking straight to the server, no host.
type bareClient struct {
	c   *client.Client
	cmd *exec.Cmd
}

func dialBare(ctx context.Context, s serverSpec, home string) (*bareClient, error) {
	b := &bareClient{}
	c, err := client.NewStdioMCPClientWithOptions(s.Command, nil, s.Args,
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.Command(command, args...)
			cmd.Env = append(isolatedEnv(home), env...)
			ownGroup(cmd)
			b.cmd = cmd
			return cmd, nil
		}))
	if err != nil {
		return nil, err
	}
	b.c = c
	var req mcp.InitializeRequest
	req.Params.ClientInfo = mcp.Implementation{Name: "sbbench-bare", Version: "0"}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, req); err != nil {
		b.close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if _, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
		b.close()
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	return b, nil
}

func (b *bareClient) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	var r mcp.CallToolRequest
	r.Params.Name = tool
	r.Params.Arguments = args
	res, err := b.c.CallTool(ctx, r)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			sb.WriteString(t.Text)
		}
	}
	if res.IsError {
		return sb.String(), errors.New("tool error: " + truncate(sb.String(), 300))
	}
	return sb.String(), nil
}

func (b *bareClient) close() {
	if b.c != nil {
		_ = b.c.Close() // ignore error: best effort
	}
	if b.cmd != nil && b.cmd.Process != nil {
		_ = signalGroup(b.cmd.Process.Pid, syscall.SIGKILL) // ignore error: best effort
	}
}

// dialBareN connects n servers in parallel (what a host does at startup).
func dialBareN(ctx context.Context, specs []serverSpec, home string) ([]*bareClient, error) {
	out := make([]*bareClient, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Go(func() { out[i], errs[i] = dialBare(ctx, s, home) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range out {
			if c != nil {
				c.close()
			}
		}
		return nil, err
	}
	return out, nil
}

// The baseline's memory must be measured in a process of its own (sbbench itself holds
// benchmark state), so sbbench re-executes itself with one of these hidden subcommands.

// childHold connects n servers, prints "ready" and waits for stdin to close.
func childHold(args []string) int {
	var specs []serverSpec
	if err := json.Unmarshal([]byte(args[0]), &specs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	home := args[1]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := dialBareN(ctx, specs, home)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, c := range cs {
		if _, err := c.call(ctx, echoTool, echoArgs("warm")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Println("ready")
	buf := make([]byte, 1)
	_, _ = os.Stdin.Read(buf) // ignore error: best effort
	for _, c := range cs {
		c.close()
	}
	return 0
}

// childBig connects one server, receives one big result, caps it like the host does, and
// prints {"ns":..., "hwmKB":..., "bytes":...}.
func childBig(args []string) int {
	var spec serverSpec
	if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	home := args[1]
	var size int
	fmt.Sscan(args[2], &size)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c, err := dialBare(ctx, spec, home)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.close()
	t0 := time.Now()
	text, err := c.call(ctx, bigTool, bigArgs(size))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n := len(text)
	capped := capText(text, 1<<20)
	d := time.Since(t0)
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{ // ignore error: the parent sees no output
		"ns": d.Nanoseconds(), "hwmKB": statusKB(os.Getpid(), "VmHWM"), "bytes": n, "kept": len(capped),
	})
	return 0
}

// capText applies the PROTOCOL section 5 cap (cut at a UTF-8 boundary, marker appended).
func capText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n\n[mcp output truncated: %d bytes total, %d kept]", len(s), cut)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
