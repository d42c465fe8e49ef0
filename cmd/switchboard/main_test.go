package main

// End-to-end: the real binary over real stdio pipes, driven the way an editor drives it.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/host/lsptest"
)

// e2eBuild builds switchboard and mcptest into a temp dir once per test binary run.
func e2eBuild(t *testing.T) (switchboard, mcptest string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	dir := t.TempDir()
	switchboard, mcptest = filepath.Join(dir, "switchboard"), filepath.Join(dir, "mcptest")
	for _, b := range []struct{ out, pkg string }{{switchboard, "."}, {mcptest, "../mcptest"}} {
		if out, err := exec.Command("go", "build", "-o", b.out, b.pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return switchboard, mcptest
}

func e2eTimeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("SWITCHBOARD_TEST_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 60 * time.Second
}

type e2eMsg = lsptest.Message

// e2eEditor runs `switchboard serve --stdio` and reads its stdout strictly as LSP frames.
type e2eEditor struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr lockedBuffer
	lsp    *lsptest.Client
	done   <-chan struct{} // stdout closed
}

func startE2E(t *testing.T, bin string, env []string, args ...string) *e2eEditor {
	e := &e2eEditor{t: t}
	e.cmd = exec.Command(bin, append([]string{"serve", "--stdio"}, args...)...)
	e.cmd.Env = env
	e.cmd.Stderr = &e.stderr
	var err error
	if e.stdin, err = e.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := e.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e.lsp = lsptest.New(stdout, e.stdin, lsptest.Options{Answer: func(m lsptest.Message) (any, bool) {
		if m.Method == "window/showMessageRequest" {
			return map[string]string{"title": "Allow once"}, true
		}
		return nil, true
	}})
	e.done = e.lsp.Done()
	t.Cleanup(func() {
		e.cmd.Process.Kill() // ignore error: usually exited already
		if t.Failed() {
			t.Logf("stderr:\n%s", e.stderr.String())
			msgs, _ := e.lsp.Messages()
			for _, m := range append(msgs, e.lsp.Responses()...) {
				t.Logf("host → editor %s", m.Raw)
			}
		}
	})
	return e
}

// badOut is what stdout carried that is not an LSP frame, or nil.
func (e *e2eEditor) badOut() error { return e.lsp.Err() }

func (e *e2eEditor) send(v any) {
	e.lsp.WriteMessage(v) // ignore error: a dead host fails the awaits
}

// await waits until cond holds on the messages so far.
func (e *e2eEditor) await(desc string, cond func([]e2eMsg) bool) []e2eMsg {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout())
	defer cancel()
	msgs, err := e.lsp.Await(ctx, cond)
	if err != nil {
		e.t.Fatalf("waiting for %s: %v", desc, err)
	}
	return msgs
}

// call sends a request and waits for its response.
func (e *e2eEditor) call(method string, params any) e2eMsg {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout())
	defer cancel()
	if params == nil {
		params = json.RawMessage("null")
	}
	_, ch, err := e.lsp.Send(method, params)
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := e.lsp.Wait(ctx, method, ch)
	if err != nil {
		e.t.Fatalf("waiting for the response to %s: %v", method, err)
	}
	if resp.Error != nil {
		e.t.Fatalf("%s: error %d %s", method, resp.Error.Code, resp.Error.Message)
	}
	return resp
}

func (e *e2eEditor) wait() int {
	e.t.Helper()
	// The reader first: Wait closes the stdout pipe, and a read still in progress would then fail
	// with "file already closed" instead of ending at EOF (os/exec: Wait only after all reads).
	select {
	case <-e.done:
	case <-time.After(e2eTimeout()):
	}
	errc := make(chan error, 1)
	go func() { errc <- e.cmd.Wait() }()
	select {
	case err := <-errc:
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		e.t.Fatal(err)
	case <-time.After(e2eTimeout()):
		// The runtime's dump of every goroutine (SIGQUIT) says where it hangs; Wait returns once
		// the dump is written, or after a few seconds if the process cannot take the signal.
		e.cmd.Process.Signal(syscall.SIGQUIT) // ignore error: it may have exited just now
		select {
		case <-errc:
		case <-time.After(10 * time.Second):
		}
		e.t.Fatalf("switchboard did not exit (its goroutines at SIGQUIT are in its stderr, below)")
	}
	return -1
}

// lockedBuffer is a process's stderr as the test reads it while os/exec's copy may still write
// it (a process that did not exit when the test gave up on it).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func e2eEnv(t *testing.T, extra ...string) []string {
	root := t.TempDir()
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + root,
		"XDG_CONFIG_HOME=" + filepath.Join(root, "config"),
		"XDG_STATE_HOME=" + filepath.Join(root, "state"),
	}, extra...)
}

func TestServeEndToEnd(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	events := filepath.Join(t.TempDir(), "events.jsonl")

	t.Run("session", func(t *testing.T) {
		e := startE2E(t, bin, e2eEnv(t, "SWITCHBOARD_EVENTS="+events))
		init := e.call("initialize", map[string]any{
			"processId": os.Getpid(), "rootUri": nil,
			"capabilities":          map[string]any{"window": map[string]any{"workDoneProgress": true}},
			"initializationOptions": map[string]any{"servers": map[string]any{"t": map[string]any{"command": mcptest}}},
		})
		if !strings.Contains(string(init.Result), `"name":"switchboard"`) {
			t.Errorf("initialize result = %s", init.Result)
		}
		e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		e.await("server t ready", func(ms []e2eMsg) bool {
			for _, m := range ms {
				if m.Method == "switchboard/serversChanged" && strings.Contains(string(m.Params), `"state":"ready"`) {
					return true
				}
			}
			return false
		})
		servers := e.call("workspace/executeCommand", map[string]any{"command": "switchboard.servers"})
		if !strings.Contains(string(servers.Result), `"name":"t"`) {
			t.Errorf("servers = %s", servers.Result)
		}
		res := e.call("workspace/executeCommand", map[string]any{"command": "switchboard.callTool",
			"arguments": []any{map[string]any{"name": "mcp__t__echo", "arguments": map[string]string{"text": "over stdio"}}}})
		var tr struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		}
		json.Unmarshal(res.Result, &tr)
		if tr.IsError || tr.Text != "over stdio" {
			t.Errorf("callTool = %s", res.Result)
		}
		msgs := e.await("approval resolved", func(ms []e2eMsg) bool {
			for _, m := range ms {
				if m.Method == "switchboard/approvalResolved" {
					return true
				}
			}
			return false
		})
		prompted := false
		for _, m := range msgs {
			prompted = prompted || m.Method == "window/showMessageRequest"
		}
		if !prompted {
			t.Errorf("no showMessageRequest before the call")
		}
		e.call("shutdown", nil)
		e.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
		if code := e.wait(); code != 0 {
			t.Errorf("exit code after shutdown+exit = %d, want 0", code)
		}
		<-e.done
		if err := e.badOut(); err != nil {
			t.Error(err)
		}
		if e.stderr.Len() != 0 {
			t.Errorf("stderr not quiet: %q", e.stderr.String())
		}
		log, _ := os.ReadFile(events)
		if !strings.Contains(string(log), `"kind":"approvalResolved"`) {
			t.Errorf("events file lacks approvalResolved:\n%s", log)
		}
	})

	t.Run("exit without shutdown", func(t *testing.T) {
		e := startE2E(t, bin, e2eEnv(t))
		e.call("initialize", map[string]any{"capabilities": map[string]any{}})
		e.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
		if code := e.wait(); code != 1 {
			t.Errorf("exit code = %d, want 1", code)
		}
	})

	t.Run("stdin closed", func(t *testing.T) {
		e := startE2E(t, bin, e2eEnv(t))
		e.call("initialize", map[string]any{"capabilities": map[string]any{},
			"initializationOptions": map[string]any{"servers": map[string]any{"t": map[string]any{"command": mcptest}}}})
		e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
		e.stdin.Close()
		if code := e.wait(); code != 1 {
			t.Errorf("exit code after stdin closed without shutdown = %d, want 1 (LSP)", code)
		}
	})

	// --cpuprofile: the whole run's CPU profile, written when the host exits (pprof's format is
	// gzip-compressed protobuf); a file that cannot be created stops the host at once, saying so.
	t.Run("cpu profile", func(t *testing.T) {
		prof := filepath.Join(t.TempDir(), "host.pprof")
		e := startE2E(t, bin, e2eEnv(t), "--cpuprofile", prof)
		e.call("initialize", map[string]any{"capabilities": map[string]any{}})
		e.call("shutdown", nil)
		e.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
		if code := e.wait(); code != 0 {
			t.Fatalf("exit code = %d, want 0", code)
		}
		f, err := os.Open(prof)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("profile is not gzip data (pprof): %v", err)
		}
		if b, err := io.ReadAll(z); err != nil || len(b) == 0 {
			t.Errorf("profile: %d bytes, %v", len(b), err)
		}
	})
	// A terminal closed under the editor sends SIGHUP: the host ends as for SIGTERM, through its
	// teardown (the profile, like the audit log, is written), not killed by the signal.
	t.Run("SIGHUP", func(t *testing.T) {
		prof := filepath.Join(t.TempDir(), "host.pprof")
		e := startE2E(t, bin, e2eEnv(t), "--cpuprofile", prof)
		e.call("initialize", map[string]any{"capabilities": map[string]any{},
			"initializationOptions": map[string]any{"servers": map[string]any{"t": map[string]any{"command": mcptest}}}})
		if err := e.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		if code := e.wait(); code < 0 {
			t.Fatalf("exit code %d: killed by the signal", code)
		}
		if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
			t.Errorf("no profile after SIGHUP: %v", err)
		}
	})
	t.Run("cpu profile not writable", func(t *testing.T) {
		e := startE2E(t, bin, e2eEnv(t), "--cpuprofile", filepath.Join(t.TempDir(), "missing", "host.pprof"))
		if code := e.wait(); code != 1 {
			t.Errorf("exit code = %d, want 1", code)
		}
		<-e.done
		if got := e.stderr.String(); !strings.Contains(got, "--cpuprofile") || strings.Count(got, "\n") != 1 {
			t.Errorf("stderr = %q, want one line about --cpuprofile", got)
		}
	})

	// The editor stops reading what the host writes (closes its end of stdout): the host's next
	// write meets EPIPE and it stops as when stdin closes, exit 1, with nothing on stderr but its
	// own line. (It once died of SIGPIPE there; then, writing the warning about it to the editor,
	// of a stack overflow.) A FIFO stdout (os.File, not rawio): stdin_linux_test.go.
	t.Run("stdout closed", func(t *testing.T) {
		stdoutClosed(t, bin, func(cmd *exec.Cmd) io.ReadCloser {
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			return out
		})
	})

	t.Run("call", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "mcp.json")
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": map[string]any{"command": mcptest}}})
		os.WriteFile(cfg, b, 0o644)
		run := func(args ...string) (string, int) {
			cmd := exec.Command(bin, append([]string{"call"}, args...)...)
			cmd.Env = e2eEnv(t)
			cmd.Stdin = strings.NewReader("") // not a terminal
			out, err := cmd.Output()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
				out = append(out, ee.Stderr...) // a failure is told on stderr, for the person
			} else if err != nil {
				t.Fatal(err)
			}
			return string(out), code
		}
		if out, code := run("mcp__t__echo", `{"text":"cli"}`, "--config", cfg, "--mode", "always-allow"); out != "cli\n" || code != 0 {
			t.Errorf("call always-allow = %q, %d", out, code)
		}
		if out, code := run("mcp__t__echo", `{"text":"cli"}`, "--config", cfg); code != 1 || !strings.Contains(out, "mcp__t__echo was denied: nobody could answer") || strings.Contains(out, "Do not retry") {
			t.Errorf("call without a terminal = %q, %d; want denied, 1", out, code)
		}
		if _, code := run("mcp__t__fail", "--config", cfg, "--mode=always-allow"); code != 1 {
			t.Errorf("call of a failing tool: exit %d, want 1", code)
		}
		if _, code := run(); code != 2 {
			t.Errorf("call without a name: exit %d, want 2", code)
		}
	})
}

// A config file named on the command line must exist and be readable: check and call refuse to
// run without it (exit 2, naming the file) instead of reporting no servers.
func TestNamedConfigMustExist(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-mcp.json")
	unreadable := filepath.Join(dir, "a-directory.json")
	if err := os.Mkdir(unreadable, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		run  func([]string, io.Writer, io.Writer) int
		args []string
	}{
		{"check missing", runCheck, []string{"--config", missing, "--workspace", dir}},
		{"check unreadable", runCheck, []string{"--config=" + unreadable, "--workspace", dir}},
		{"call missing", runCall, []string{"mcp__x__y", "--config", missing, "--workspace", dir}},
		{"call unreadable", runCall, []string{"mcp__x__y", "--config", unreadable, "--workspace", dir}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := tc.run(tc.args, &stdout, &stderr)
			file := tc.args[slices.IndexFunc(tc.args, func(a string) bool { return strings.Contains(a, dir+"/") })]
			file = strings.TrimPrefix(file, "--config=")
			if code != 2 || !strings.Contains(stderr.String(), strconv.Quote(file)) {
				t.Errorf("exit %d, stderr %q; want 2 and a line naming %s", code, stderr.String(), file)
			}
			if strings.Contains(stdout.String(), "No MCP servers configured") {
				t.Errorf("reported no servers instead of the missing file: %s", stdout.String())
			}
		})
	}
}

// stdoutClosed starts the host with the stdout stdout gives it, reads the initialize result,
// closes stdout's read end and sends a request: the host must exit 1, not die of a signal, crash
// or run on.
func stdoutClosed(t *testing.T, bin string, stdout func(*exec.Cmd) io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--stdio")
	cmd.Env = e2eEnv(t)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := stdout(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // ignore error: usually exited already
	frame := func(body string) {
		fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	if _, err := out.Read(make([]byte, 64<<10)); err != nil { // the initialize result
		t.Fatal(err)
	}
	out.Close()
	frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	frame(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"switchboard.servers"}}`)
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("exit after stdout closed = %v, want exit status 1; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(e2eTimeout()):
		t.Fatalf("the host still runs %v after the editor closed its output", e2eTimeout())
	}
	if strings.Contains(stderr.String(), "fatal error") || strings.Contains(stderr.String(), "panic") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}
