package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/lsp"
)

// TimeoutEnv names the environment variable with the expectation timeout (a Go duration; default
// 30s). It guards against hangs only: no test asserts on timing.
const TimeoutEnv = "SWITCHBOARD_TEST_TIMEOUT"

// Timeout returns the expectation timeout.
func Timeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(TimeoutEnv)); err == nil && d > 0 {
		return d
	}
	return 30 * time.Second
}

// Config describes one test session.
type Config struct {
	// InitOptions is initializationOptions (marshalled with encoding/json; nil = absent).
	InitOptions any
	// Files are written under the workspace folder (path → content) before the host starts.
	Files map[string]string
	// UserFiles are written under the config home (XDG_CONFIG_HOME/switchboard): "mcp.json",
	// "allow_tool", "trust.json", "config.json".
	UserFiles map[string]string
	// NoWorkspace leaves the workspace folder out of initialize.
	NoWorkspace bool
	// Workspace, when set, is the workspace folder (an existing one, say another session's)
	// instead of a new one.
	Workspace string
	// NoInitialize leaves the session uninitialized (lifecycle tests).
	NoInitialize bool
	// WorkDoneProgress advertises window.workDoneProgress.
	WorkDoneProgress bool
	// Elicitation advertises capabilities.experimental.switchboard.elicitation (forms).
	Elicitation bool
	// Inputs advertises capabilities.experimental.switchboard.inputs (input boxes for ${input:ID}).
	Inputs       bool
	TextOnce     bool // declare capabilities.experimental.switchboard.textOnce
	ViewMessages bool // declare capabilities.experimental.switchboard.viewMessages
	// TaskResults declares capabilities.experimental.switchboard.taskResults (the editor shows a
	// task's result itself on switchboard/showTaskResult).
	TaskResults bool
	// Env is the environment the host sees (besides PATH and HOME).
	Env map[string]string
	// Options adjusts lsp.Options before Serve.
	Options func(*lsp.Options)
	// Responder answers window/showMessageRequest from the start (default: null).
	Responder Responder
}

// Env is one running host and its fake editor.
type Env struct {
	T         testing.TB
	Ctx       context.Context
	Editor    *Editor
	Workspace string // the workspace folder
	ConfigDir string // XDG_CONFIG_HOME/switchboard
	Options   lsp.Options

	served chan error // Serve's result
	log    *frameLog
}

// Run starts lsp.Serve on one end of a net.Pipe and the fake editor on the other, initializes
// (unless NoInitialize) and registers cleanup: shutdown, exit, and a check that Serve returned.
func Run(t testing.TB, cfg Config) *Env {
	t.Helper()
	root := t.TempDir()
	env := &Env{
		T:         t,
		Ctx:       context.Background(),
		Workspace: filepath.Join(root, "ws"),
		ConfigDir: filepath.Join(root, "config", "switchboard"),
		served:    make(chan error, 1),
		log:       &frameLog{start: time.Now()},
	}
	if cfg.Workspace != "" {
		env.Workspace = cfg.Workspace
	}
	for _, dir := range []string{env.Workspace, env.ConfigDir, filepath.Join(root, "state")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(base string, files map[string]string) {
		for name, content := range files {
			p := filepath.Join(base, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(env.Workspace, cfg.Files)
	write(env.ConfigDir, cfg.UserFiles)

	vars := map[string]string{
		"PATH":            os.Getenv("PATH"),
		"HOME":            root,
		"XDG_CONFIG_HOME": filepath.Join(root, "config"),
		"XDG_STATE_HOME":  filepath.Join(root, "state"),
	}
	for k, v := range cfg.Env {
		vars[k] = v
	}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	env.Options = lsp.Options{
		Version: "test",
		Options: host.Options{
			LookupEnv:          lookup,
			Env:                func(k string) string { return vars[k] },
			UserConfigFile:     filepath.Join(env.ConfigDir, "mcp.json"),
			ProviderConfigFile: filepath.Join(env.ConfigDir, "config.json"),
			AllowlistPath:      filepath.Join(env.ConfigDir, "allow_tool"),
			TrustPath:          filepath.Join(env.ConfigDir, "trust.json"),
			AuditPath:          filepath.Join(root, "state", "audit.jsonl"),
			PinsPath:           filepath.Join(root, "state", "pins.json"),
			BaseEnv:            []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root},
		}}
	if cfg.Options != nil {
		cfg.Options(&env.Options)
	}

	hostEnd, editorEnd := net.Pipe()
	env.Editor = newEditor(editorEnd, env.log)
	env.Editor.SetResponder(cfg.Responder)
	go func() { env.served <- lsp.Serve(context.Background(), hostEnd, env.Options) }()

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("JSON-RPC log (editor's view):\n%s", env.log)
		}
	})
	t.Cleanup(env.close)

	if !cfg.NoInitialize {
		params := map[string]any{
			"processId": nil,
			"capabilities": map[string]any{
				"window":       map[string]any{"workDoneProgress": cfg.WorkDoneProgress},
				"experimental": map[string]any{"switchboard": map[string]any{"elicitation": cfg.Elicitation, "inputs": cfg.Inputs, "textOnce": cfg.TextOnce, "taskResults": cfg.TaskResults, "viewMessages": cfg.ViewMessages}},
			},
		}
		if !cfg.NoWorkspace {
			params["workspaceFolders"] = []map[string]string{{"uri": FileURI(env.Workspace), "name": "ws"}}
		}
		if cfg.InitOptions != nil {
			params["initializationOptions"] = cfg.InitOptions
		}
		var res json.RawMessage
		env.Call("initialize", params, &res)
		env.Notify("initialized", map[string]any{})
	}
	return env
}

// close ends the session if the test did not: shutdown, exit, wait for Serve.
func (env *Env) close() {
	select {
	case <-env.Editor.closed:
	default:
		ctx, cancel := context.WithTimeout(context.Background(), Timeout())
		env.Editor.Call(ctx, "shutdown", nil, nil) // ignore error: the test may have ended the session
		env.Editor.Notify(ctx, "exit", nil)        // ignore error
		cancel()
	}
	select {
	case <-env.served:
	case <-time.After(Timeout()):
		env.T.Errorf("lsp.Serve did not return after exit")
	}
	env.Editor.Close() // ignore error
	<-env.Editor.client.Done()
}

// Served waits for lsp.Serve to return and gives its error.
func (env *Env) Served() error {
	env.T.Helper()
	select {
	case err := <-env.served:
		env.served <- err // for close
		return err
	case <-time.After(Timeout()):
		env.T.Fatalf("lsp.Serve did not return within %v", Timeout())
		return nil
	}
}

// Call sends a request and fails the test on error.
func (env *Env) Call(method string, params, result any) {
	env.T.Helper()
	if err := env.TryCall(method, params, result); err != nil {
		env.T.Fatalf("%s: %v", method, err)
	}
}

// TryCall sends a request with the expectation timeout.
func (env *Env) TryCall(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(env.Ctx, Timeout())
	defer cancel()
	return env.Editor.Call(ctx, method, params, result)
}

// Notify sends a notification and fails the test on error.
func (env *Env) Notify(method string, params any) {
	env.T.Helper()
	if err := env.Editor.Notify(env.Ctx, method, params); err != nil {
		env.T.Fatalf("%s: %v", method, err)
	}
}

// Command runs workspace/executeCommand with arguments [arg] (none when arg is nil).
func (env *Env) Command(cmd string, arg, result any) error {
	params := map[string]any{"command": cmd}
	if arg != nil {
		params["arguments"] = []any{arg}
	}
	return env.TryCall("workspace/executeCommand", params, result)
}

// MustCommand is Command that fails the test on error.
func (env *Env) MustCommand(cmd string, arg, result any) {
	env.T.Helper()
	if err := env.Command(cmd, arg, result); err != nil {
		env.T.Fatalf("%s: %v", cmd, err)
	}
}

// Await waits until cond holds on the state, failing the test after the timeout.
func (env *Env) Await(desc string, cond func(*State) bool) *State {
	env.T.Helper()
	return env.AwaitWithin(Timeout(), desc, cond)
}

// AwaitWithin is Await with its own timeout (at least Timeout()): for what takes longer by
// design, such as a server that npx downloads first.
func (env *Env) AwaitWithin(d time.Duration, desc string, cond func(*State) bool) *State {
	env.T.Helper()
	d = max(d, Timeout())
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		st, changed := env.Editor.state.snapshot()
		if cond(st) {
			return st
		}
		select {
		case <-changed:
		case <-deadline.C:
			env.T.Fatalf("timed out after %v waiting for: %s", d, desc)
			return nil
		}
	}
}

// FramesFromHost is every frame the host sent to the editor so far, whole, one per line.
func (env *Env) FramesFromHost() string {
	env.log.mu.Lock()
	defer env.log.mu.Unlock()
	return strings.Join(env.log.fromHost, "\n")
}

// State returns the current state.
func (env *Env) State() *State {
	st, _ := env.Editor.state.snapshot()
	return st
}

// AwaitServer waits until a server reaches state.
func (env *Env) AwaitServer(name, state string) ServerStatus {
	env.T.Helper()
	return env.AwaitServerWithin(Timeout(), name, state)
}

// AwaitServerWithin is AwaitServer with its own timeout (AwaitWithin).
func (env *Env) AwaitServerWithin(d time.Duration, name, state string) ServerStatus {
	env.T.Helper()
	var got ServerStatus
	env.AwaitWithin(d, fmt.Sprintf("server %s %s", name, state), func(s *State) bool {
		st, ok := s.Server(name)
		got = st
		return ok && st.State == state
	})
	return got
}

// AwaitApproval waits for the n-th (1-based) approvalRequested and returns it.
func (env *Env) AwaitApproval(n int) Approval {
	env.T.Helper()
	st := env.Await(fmt.Sprintf("approval request #%d", n), func(s *State) bool { return len(s.Approvals()) >= n })
	return st.Approvals()[n-1]
}

// AwaitResolved waits for the resolution of approval id.
func (env *Env) AwaitResolved(id string) Resolved {
	env.T.Helper()
	var r Resolved
	env.Await("approval "+id+" resolved", func(s *State) bool {
		for _, x := range s.Resolutions() {
			if x.ID == id {
				r = x
				return true
			}
		}
		return false
	})
	return r
}

// AwaitResponse waits for the response with this raw id (see Editor.RawCall).
func (env *Env) AwaitResponse(id string) Response {
	env.T.Helper()
	st := env.Await("response "+id, func(s *State) bool { _, ok := s.Response(id); return ok })
	r, _ := st.Response(id)
	return r
}

// FileURI returns the file URI of an absolute path.
func FileURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return "file://" + p
}

// BuildBinary builds a main package (an import path) into dir and returns the executable's path.
func BuildBinary(pkg, dir string) (string, error) {
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %w", pkg, err)
	}
	return out, nil
}
