package lsp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
)

// mcptestBin is cmd/mcptest, built once by TestMain.
var mcptestBin string

func TestMain(m *testing.M) {
	sandbox.Main() // this test binary is the launcher of the sandboxed servers the host starts
	// A test run never writes into the person's own state folder (eras.json, the audit log,
	// tasks.json): a test that wants a state folder sets its own, the others get this one.
	state, err := os.MkdirTemp("", "host-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", state) // ignore error: a valid name
	os.Exit(runMain(m, state))
}

// runMain is TestMain's run; it removes the state folder before it returns.
func runMain(m *testing.M, state string) int {
	defer os.RemoveAll(state) // ignore error: temp dir
	// Fuzz workers run only the fuzz target, which starts no MCP server: skip the build there.
	if slices.ContainsFunc(os.Args, func(a string) bool { return strings.HasPrefix(a, "-test.fuzzworker") }) {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "host-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mcptestBin, err = hosttest.BuildBinary("github.com/switchboard-dev/switchboard/cmd/mcptest", dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		return 1
	}
	code := m.Run()
	os.RemoveAll(dir)
	return code
}

// server is one initializationOptions.servers entry running cmd/mcptest with args.
func server(args ...string) map[string]any {
	if args == nil {
		args = []string{}
	}
	return map[string]any{"command": mcptestBin, "args": args}
}

// servers is initializationOptions with these servers (name → entry) and extra fields.
func initOpts(servers map[string]any, extra ...any) map[string]any {
	o := map[string]any{"servers": servers}
	for i := 0; i+1 < len(extra); i += 2 {
		o[extra[i].(string)] = extra[i+1]
	}
	return o
}

// runWith starts a session with one ready mcptest server "t" and options.
func runWith(t *testing.T, cfg hosttest.Config) *hosttest.Env {
	t.Helper()
	if cfg.InitOptions == nil {
		cfg.InitOptions = initOpts(map[string]any{"t": server()})
	}
	env := hosttest.Run(t, cfg)
	env.AwaitServer("t", "ready")
	return env
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// toolResult is the wire ToolResult.
type toolResult struct {
	Name      string            `json:"name"`
	IsError   bool              `json:"isError"`
	Text      string            `json:"text"`
	Content   []json.RawMessage `json:"content"`
	Truncated bool              `json:"truncated"`
	Bytes     int               `json:"bytes"`
}

func eventsPath(t *testing.T) string { return filepath.Join(t.TempDir(), "events.jsonl") }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
