package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/host/lsptest"
)

// lspClient drives the real `switchboard serve` binary over stdio, the way an editor does, through
// the one LSP test client (host/lsptest).
type lspClient struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lsp   *lsptest.Client
}

// startSwitchboard starts `switchboard serve --stdio` with an isolated XDG environment rooted at
// home. onNote (may be nil) sees every notification from the host, on the reader goroutine.
// profiles ("" or a dir) gets the host's CPU profile, named after bin and home.
func startSwitchboard(bin, home, profiles string, onNote func(string, json.RawMessage)) (*lspClient, error) {
	return startSwitchboardEnv(bin, home, profiles, nil, onNote)
}

// startSwitchboardEnv is startSwitchboard with env added to the isolated environment.
func startSwitchboardEnv(bin, home, profiles string, env []string, onNote func(string, json.RawMessage)) (*lspClient, error) {
	cmd := exec.Command(bin, "serve", "--stdio")
	cmd.Env = env
	if profiles != "" {
		// Named after the binary too: with --compare two binaries' profiles share the dir.
		cmd.Args = append(cmd.Args, "--cpuprofile", filepath.Join(profiles, filepath.Base(bin)+"-"+filepath.Base(home)+".pprof"))
	}
	return startLSP(cmd, home, onNote)
}

// startLSP starts cmd, a language server over stdio, in an isolated XDG environment rooted at
// home (with cmd.Env added to it), as startSwitchboard does.
func startLSP(cmd *exec.Cmd, home string, onNote func(string, json.RawMessage)) (*lspClient, error) {
	cmd.Env = append(isolatedEnv(home), cmd.Env...)
	cmd.Stderr = io.Discard
	ownGroup(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	opts := lsptest.Options{NoRecord: true} // a long run must not grow the client's memory
	if onNote != nil {
		opts.OnMessage = func(m lsptest.Message) {
			if m.IsNotification() {
				onNote(m.Method, m.Params)
			}
		}
	}
	return &lspClient{cmd: cmd, stdin: in, lsp: lsptest.New(out, in, opts)}, nil
}

// isolatedEnv is the environment for a host under test: PATH plus XDG dirs under home, so the
// user's own config, allowlist and trust store never leak into a measurement.
func isolatedEnv(home string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + home + "/config",
		"XDG_STATE_HOME=" + home + "/state",
		"XDG_DATA_HOME=" + home + "/data",
		"XDG_CACHE_HOME=" + home + "/cache",
		"TMPDIR=" + os.TempDir(),
		"LANG=C.UTF-8",
	}
	return env
}

func (c *lspClient) pid() int { return c.cmd.Process.Pid }

// call sends a request and waits for its response, bounded by ctx.
func (c *lspClient) call(ctx context.Context, method string, params any, result any) error {
	return c.lsp.Call(ctx, method, params, result)
}

func (c *lspClient) notify(method string, params any) error {
	return c.lsp.Notify(method, params)
}

func (c *lspClient) executeCommand(ctx context.Context, command string, arg any, result any) error {
	params := map[string]any{"command": command}
	if arg != nil {
		params["arguments"] = []any{arg}
	}
	return c.call(ctx, "workspace/executeCommand", params, result)
}

// initialize runs initialize + initialized with the given servers in initializationOptions.
func (c *lspClient) initialize(ctx context.Context, initOpts map[string]any) error {
	params := map[string]any{
		"processId": os.Getpid(),
		"rootUri":   nil,
		// As both shipped editors declare (host/wire/PROTOCOL.md section 7): the result's text once.
		"capabilities":          map[string]any{"experimental": map[string]any{"switchboard": map[string]any{"textOnce": true}}},
		"initializationOptions": initOpts,
		"clientInfo":            map[string]any{"name": "sbbench"},
	}
	var res json.RawMessage
	if err := c.call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	return c.notify("initialized", map[string]any{})
}

// shutdown ends the host politely and then makes sure the whole process group is gone.
func (c *lspClient) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.call(ctx, "shutdown", nil, nil) // ignore error: best effort
	_ = c.notify("exit", nil)             // ignore error: best effort
	_ = c.stdin.Close()                   // ignore error: best effort
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }() // ignore error: best effort
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = signalGroup(c.cmd.Process.Pid, syscall.SIGKILL) // ignore error: best effort
		<-done
	}
}

type serverStatus struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	Tools  int    `json:"tools"`
	Error  string `json:"error,omitempty"`
	Shared *struct {
		DaemonPid int `json:"daemonPid"`
		Windows   int `json:"windows"`
	} `json:"shared,omitempty"`
}

type toolResult struct {
	Name      string `json:"name"`
	IsError   bool   `json:"isError"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	Bytes     int    `json:"bytes"`
	// The driver declares textOnce, so the text blocks are left out of content.
	Content     []json.RawMessage `json:"content"`
	TextOmitted bool              `json:"textOmitted"`
}
