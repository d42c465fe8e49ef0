package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The MCP reference servers from npm, run as users run them (npx -y), sandboxed.
const (
	npmFilesystem = "@modelcontextprotocol/server-filesystem@2026.8.31"
	npmEverything = "@modelcontextprotocol/server-everything@2026.8.31"
)

// rpc is a bare MCP client over a server's stdio: enough for initialize and tools/call.
type rpc struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func (c *rpc) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("%s: write: %v", method, err)
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			c.t.Fatalf("%s: read: %v", method, err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil || *m.ID != c.id {
			continue // a notification or a request of the server's
		}
		if m.Error != nil {
			c.t.Fatalf("%s: %s", method, m.Error)
		}
		return m.Result
	}
}

func (c *rpc) notify(method string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	c.in.Write(append(b, '\n')) // ignore error: the next call reports a dead server
}

// startNPM starts an npm reference server sandboxed under p and initialises it.
func startNPM(t *testing.T, p Profile, workspace string, args ...string) *rpc {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	env := Env{
		Home:      home,
		Workspace: []string{workspace},
		StateDir:  filepath.Join(state, "sandboxes", "npm"),
		Protected: []string{filepath.Join(state, "switchboard")},
		Command:   "npx",
		Args:      args,
		Dir:       workspace,
	}
	plan, err := Resolve(p, env)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	cmd := exec.Command("npx", args...)
	cmd.Dir = workspace
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	sb, err := Wrap(cmd, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := sb.Started(); err != nil {
		t.Fatalf("Started: %v", err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		sb.Close()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	c := &rpc{t: t, in: in, out: bufio.NewReader(out)}
	c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "sandbox-test", "version": "1"}})
	c.notify("notifications/initialized")
	return c
}

func toolText(t *testing.T, res json.RawMessage) (string, bool) {
	t.Helper()
	var r struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String(), r.IsError
}

// warmNPM fetches a package into the npx cache unconfined, as a first run by the user would:
// a sandbox with no network runs what is cached.
func warmNPM(t *testing.T, pkg string, args ...string) {
	t.Helper()
	cmd := exec.Command("npx", append([]string{"-y", pkg}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader("")
	if out, err := cmd.CombinedOutput(); err != nil && !strings.Contains(string(out), "Usage") && len(out) == 0 {
		t.Fatalf("npx %s: %v\n%s", pkg, err, out)
	}
}

// TestNPMReferenceServersSandboxed: server-filesystem reads and writes its listed folder and is
// refused outside it; server-everything answers its normal calls; both with no network.
func TestNPMReferenceServersSandboxed(t *testing.T) {
	requireLandlock(t)
	if testing.Short() {
		t.Skip("downloads the npm reference servers")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	warmNPM(t, npmFilesystem, os.TempDir())
	warmNPM(t, npmEverything, "--help")

	root := t.TempDir()
	files := filepath.Join(root, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, "a.txt"), []byte("hello from a.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "README"), []byte("workspace readme"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET-CONTENT"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The server is told it may use the whole workspace and `outside`; the sandbox lets it write
	// only `files`, read the workspace, and not see `outside` at all.
	fs := startNPM(t, Profile{Write: []string{files}}, root, "-y", npmFilesystem, root, outside)
	text, isErr := toolText(t, fs.call("tools/call", map[string]any{"name": "read_text_file", "arguments": map[string]any{"path": filepath.Join(files, "a.txt")}}))
	if isErr || !strings.Contains(text, "hello from a.txt") {
		t.Errorf("read_text_file: %q (error %v)", text, isErr)
	}
	text, isErr = toolText(t, fs.call("tools/call", map[string]any{"name": "write_file", "arguments": map[string]any{"path": filepath.Join(files, "b.txt"), "content": "written sandboxed"}}))
	if b, err := os.ReadFile(filepath.Join(files, "b.txt")); isErr || err != nil || string(b) != "written sandboxed" {
		t.Errorf("write_file: %q (error %v), file %q %v", text, isErr, b, err)
	}
	text, isErr = toolText(t, fs.call("tools/call", map[string]any{"name": "read_text_file", "arguments": map[string]any{"path": filepath.Join(root, "README")}}))
	if isErr || !strings.Contains(text, "workspace readme") {
		t.Errorf("read the workspace: %q (error %v)", text, isErr)
	}
	text, isErr = toolText(t, fs.call("tools/call", map[string]any{"name": "read_text_file", "arguments": map[string]any{"path": filepath.Join(outside, "secret.txt")}}))
	if !isErr || strings.Contains(text, "SECRET-CONTENT") {
		t.Errorf("read outside the sandbox: %q (error %v)", text, isErr)
	}
	// The server allows writing anywhere in the workspace; the sandbox keeps it read-only.
	text, isErr = toolText(t, fs.call("tools/call", map[string]any{"name": "write_file", "arguments": map[string]any{"path": filepath.Join(root, "planted.txt"), "content": "x"}}))
	if _, err := os.Stat(filepath.Join(root, "planted.txt")); !isErr || err == nil {
		t.Errorf("write to the read-only workspace: %q (error %v)", text, isErr)
	}
	t.Logf("write to the read-only workspace: %s", text)

	ev := startNPM(t, Profile{}, root, "-y", npmEverything)
	text, isErr = toolText(t, ev.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "sandboxed echo"}}))
	if isErr || !strings.Contains(text, "sandboxed echo") {
		t.Errorf("echo: %q (error %v)", text, isErr)
	}
	text, isErr = toolText(t, ev.call("tools/call", map[string]any{"name": "get-sum", "arguments": map[string]any{"a": 2, "b": 3}}))
	if isErr || !strings.Contains(text, "5") {
		t.Errorf("get-sum: %q (error %v)", text, isErr)
	}
	fmt.Fprint(io.Discard, text)
}
