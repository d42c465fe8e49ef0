package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// hubProc is a running mcp-hub (the hub behind mcphub.nvim) driven through its REST API:
// GET /api/health (state + per-server status) and POST /api/servers/tools
// {server_name, tool, arguments} -> {result: CallToolResult}. Both read from the
// mcp-hub 4.2.1 source (dist/cli.js).
type hubProc struct {
	cmd  *exec.Cmd
	base string
	http *http.Client
	done chan struct{}
}

// startHub starts node cli.js --port P --config cfg with isolated XDG dirs under home.
func startHub(node, cliJS, home string, servers map[string]serverSpec) (*hubProc, error) {
	cfg := map[string]any{}
	for name, s := range servers {
		cfg[name] = map[string]any{"command": s.Command, "args": s.Args}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": cfg})
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(home, "mcp-hub.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(node, cliJS, "--port", strconv.Itoa(port), "--config", cfgPath)
	cmd.Env = isolatedEnv(home)
	cmd.Dir = home
	cmd.Stdout = io.Discard
	cmd.Stderr = io.Discard
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &hubProc{
		cmd:  cmd,
		base: fmt.Sprintf("http://127.0.0.1:%d/api", port),
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}},
		done: make(chan struct{}),
	}
	go func() { _ = cmd.Wait(); close(h.done) }() // ignore error: best effort
	return h, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (h *hubProc) pid() int { return h.cmd.Process.Pid }

type hubHealth struct {
	State   string `json:"state"`
	Servers []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Error  any    `json:"error"`
	} `json:"servers"`
}

// ready reports whether the hub says "ready" and n servers are "connected".
func (h *hubProc) ready(ctx context.Context, n int) (bool, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.base+"/health", nil)
	resp, err := h.http.Do(req)
	if err != nil {
		return false, nil // not listening yet
	}
	defer resp.Body.Close()
	var hh hubHealth
	if err := json.NewDecoder(resp.Body).Decode(&hh); err != nil {
		return false, nil
	}
	if hh.State != "ready" {
		return false, nil
	}
	connected := 0
	for _, s := range hh.Servers {
		switch s.Status {
		case "connected":
			connected++
		case "disconnected", "unauthorized", "disabled":
			if hh.State == "ready" {
				return false, fmt.Errorf("mcp-hub: server %s is %s (%v)", s.Name, s.Status, s.Error)
			}
		}
	}
	return connected == n, nil
}

// waitReady polls /api/health every poll until n servers are connected.
func (h *hubProc) waitReady(ctx context.Context, n int, poll time.Duration) error {
	for {
		ok, err := h.ready(ctx, n)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mcp-hub not ready with %d servers: %w", n, ctx.Err())
		case <-h.done:
			return fmt.Errorf("mcp-hub exited before it was ready")
		case <-time.After(poll):
		}
	}
}

type hubCallResult struct {
	Result struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error any `json:"error"`
}

// callTool calls one tool through POST /api/servers/tools and returns the text of the result.
func (h *hubProc) callTool(ctx context.Context, server, tool string, args any) (string, error) {
	body, _ := json.Marshal(map[string]any{"server_name": server, "tool": tool, "arguments": args})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.base+"/servers/tools", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("mcp-hub: %s: %.300s", resp.Status, raw)
	}
	var r hubCallResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", err
	}
	var text bytes.Buffer
	for _, c := range r.Result.Content {
		text.WriteString(c.Text)
	}
	if r.Result.IsError {
		return text.String(), fmt.Errorf("mcp-hub: tool error: %.300s", text.String())
	}
	return text.String(), nil
}

func (h *hubProc) stop() {
	_ = signalGroup(h.cmd.Process.Pid, syscall.SIGTERM) // ignore error: best effort
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		_ = signalGroup(h.cmd.Process.Pid, syscall.SIGKILL) // ignore error: best effort
		<-h.done
	}
	// mcp-hub kills its own children on SIGTERM; make sure nothing survives in the group.
	_ = signalGroup(h.cmd.Process.Pid, syscall.SIGKILL) // ignore error: best effort
	h.http.CloseIdleConnections()
}
