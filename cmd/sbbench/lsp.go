package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// lspClient is a minimal LSP client (Content-Length framed JSON-RPC 2.0) that drives the real
// `switchboard serve` binary over stdio, the way an editor does.
type lspClient struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser

	wmu sync.Mutex // serialises frames on stdin

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan rpcMsg
	onNote  func(method string, params json.RawMessage)
	closed  chan struct{}
	readErr error
}

type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// startSwitchboard starts `switchboard serve --stdio` with an isolated XDG environment rooted at
// home. onNote (may be nil) sees every notification from the host, on the reader goroutine.
func startSwitchboard(bin, home string, onNote func(string, json.RawMessage)) (*lspClient, error) {
	cmd := exec.Command(bin, "serve", "--stdio")
	cmd.Env = isolatedEnv(home)
	cmd.Stderr = io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
	c := &lspClient{cmd: cmd, stdin: in, pending: map[int64]chan rpcMsg{}, onNote: onNote, closed: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(out, 1<<16))
	return c, nil
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

func (c *lspClient) readLoop(r *bufio.Reader) {
	defer func() {
		c.mu.Lock()
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		c.mu.Unlock()
		close(c.closed)
	}()
	for {
		body, err := readFrame(r)
		if err != nil {
			c.readErr = err
			return
		}
		var m rpcMsg
		if err := json.Unmarshal(body, &m); err != nil {
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // request from the host
			c.answerHostRequest(m)
		case m.Method != "": // notification
			if c.onNote != nil {
				c.onNote(m.Method, m.Params)
			}
		default: // response
			id, err := strconv.ParseInt(string(m.ID), 10, 64)
			if err != nil {
				continue
			}
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

// answerHostRequest answers the host's requests the way a plain editor does: nothing to offer.
func (c *lspClient) answerHostRequest(m rpcMsg) {
	var result any
	if m.Method == "workspace/configuration" {
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(m.Params, &p) // ignore error: best effort
		result = make([]any, len(p.Items))
	}
	res, _ := json.Marshal(result)
	_ = c.write(rpcMsg{JSONRPC: "2.0", ID: m.ID, Result: res}) // ignore error: best effort
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("bad Content-Length %q", v)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("frame without Content-Length")
	}
	body := make([]byte, length)
	_, err := io.ReadFull(r, body)
	return body, err
}

func (c *lspClient) write(m rpcMsg) error {
	m.JSONRPC = "2.0"
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := fmt.Fprintf(c.stdin, "Content-Length: %d\r\n\r\n", len(body)); err != nil {
		return err
	}
	_, err = c.stdin.Write(body)
	return err
}

// call sends a request and waits for its response, bounded by ctx.
func (c *lspClient) call(ctx context.Context, method string, params any, result any) error {
	var p json.RawMessage
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			return err
		}
	}
	ch := make(chan rpcMsg, 1)
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.write(rpcMsg{ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: p}); err != nil {
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: host closed the connection (%v)", method, c.readErr)
		}
		if m.Error != nil {
			return m.Error
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (c *lspClient) notify(method string, params any) error {
	var p json.RawMessage
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			return err
		}
	}
	return c.write(rpcMsg{Method: method, Params: p})
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
		"processId":             os.Getpid(),
		"rootUri":               nil,
		"capabilities":          map[string]any{},
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
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL) // ignore error: best effort
		<-done
	}
}

type serverStatus struct {
	Name  string `json:"name"`
	State string `json:"state"`
	Tools int    `json:"tools"`
	Error string `json:"error,omitempty"`
}

type toolResult struct {
	Name      string `json:"name"`
	IsError   bool   `json:"isError"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	Bytes     int    `json:"bytes"`
}
