package lsp_test

import (
	"encoding/json"
	"errors"
	"github.com/switchboard-dev/switchboard/host/lsp"
	"github.com/switchboard-dev/switchboard/host/wire"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/lsptest"
)

func TestInitializeCapabilities(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{NoInitialize: true})
	var res struct {
		Capabilities struct {
			TextDocumentSync struct {
				OpenClose bool `json:"openClose"`
				Change    int  `json:"change"`
			} `json:"textDocumentSync"`
			CodeActionProvider struct {
				CodeActionKinds []string `json:"codeActionKinds"`
			} `json:"codeActionProvider"`
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
		ServerInfo struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	env.Call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}}, &res)
	c := res.Capabilities
	if !c.TextDocumentSync.OpenClose || c.TextDocumentSync.Change != 2 {
		t.Errorf("textDocumentSync = %+v, want openClose and incremental (2)", c.TextDocumentSync)
	}
	if !slices.Equal(c.CodeActionProvider.CodeActionKinds, []string{"quickfix"}) {
		t.Errorf("codeActionKinds = %v", c.CodeActionProvider.CodeActionKinds)
	}
	want := []string{"switchboard.servers", "switchboard.tools", "switchboard.reconnect", "switchboard.allowlist.get",
		"switchboard.allowlist.set", "switchboard.approvals", "switchboard.approve", "switchboard.trust",
		"switchboard.callTool", "switchboard.chat", "switchboard.cancel", "switchboard.elicitations", "switchboard.elicit",
		"switchboard.signIn", "switchboard.signOut",
		"switchboard.models",
		"switchboard.pins", "switchboard.pins.accept",
		"switchboard.resources", "switchboard.readResource", "switchboard.unsubscribe", "switchboard.prompts", "switchboard.getPrompt", "switchboard.complete", // resources.go
		"switchboard.input",
		"switchboard.tasks", "switchboard.cancelTask", // tasks.go
		"switchboard.view", "switchboard.view.callTool", "switchboard.view.openLink", "switchboard.view.openInBrowser", // views.go
		"switchboard.view.updateModelContext",
		"switchboard.view.message", "switchboard.chat.end",
	}
	if got := c.ExecuteCommandProvider.Commands; !slices.Equal(got, want) {
		t.Errorf("commands = %v, want %v", got, want)
	}
	if res.ServerInfo.Name != "switchboard" || res.ServerInfo.Version != "test" {
		t.Errorf("serverInfo = %+v", res.ServerInfo)
	}
	// A second initialize is refused.
	err := env.TryCall("initialize", map[string]any{"capabilities": map[string]any{}}, nil)
	if hosttest.ErrorCode(err) != -32600 {
		t.Errorf("second initialize: %v, want -32600", err)
	}
}

func TestInitializeDoesNotWaitForServers(t *testing.T) {
	// Servers that never answer initialize: initialize still answers, servers stay "starting".
	servers := map[string]any{}
	for _, n := range []string{"h1", "h2", "h3"} {
		servers[n] = server("--hang-initialize")
	}
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(servers)})
	env.Await("servers starting", func(s *hosttest.State) bool { return len(s.Servers()) == 3 })
	var got []hosttest.ServerStatus
	env.MustCommand(wire.CmdServers, nil, &got)
	for _, s := range got {
		if s.State != "starting" {
			t.Errorf("server %s: state %s, want starting", s.Name, s.State)
		}
	}
}

func TestRequestBeforeInitialize(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{NoInitialize: true})
	err := env.Command(wire.CmdServers, nil, nil)
	if hosttest.ErrorCode(err) != -32002 {
		t.Fatalf("servers before initialize: %v, want -32002 ServerNotInitialized", err)
	}
}

func TestShutdownExit(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	env.Call("shutdown", nil, nil)
	if err := env.Command(wire.CmdServers, nil, nil); hosttest.ErrorCode(err) != -32600 {
		t.Errorf("request after shutdown: %v, want -32600", err)
	}
	env.Notify("exit", nil)
	if err := env.Served(); err != nil {
		t.Fatalf("Serve after shutdown+exit = %v, want nil (exit code 0)", err)
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	env.Notify("exit", nil)
	if err := env.Served(); !errors.Is(err, lsp.ErrNoShutdown) {
		t.Fatalf("Serve after exit without shutdown = %v, want ErrNoShutdown (exit code 1)", err)
	}
}

func TestLostConnection(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	env.Editor.Close()
	if err := env.Served(); !errors.Is(err, lsp.ErrDisconnected) {
		t.Fatalf("Serve after the editor went away without shutdown = %v, want ErrDisconnected (exit code 1)", err)
	}
}

func TestMalformedInput(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	frame := func(body string) []byte { return lsptest.Frame([]byte(body)) }
	// Not JSON at all: -32700 with id null, and the host keeps serving.
	if err := env.Editor.WriteRaw(frame(`{"jsonrpc":"2.0","id":1,"method":`)); err != nil {
		t.Fatal(err)
	}
	r := env.AwaitResponse("null")
	if r.Code != -32700 {
		t.Errorf("malformed JSON: code %d (%s), want -32700", r.Code, r.Message)
	}
	// Valid JSON that is not a JSON-RPC message: -32600, the id echoed when it can be read.
	env.Editor.WriteRaw(frame(`{"id":"x7","hello":true}`))
	if r := env.AwaitResponse(`"x7"`); r.Code != -32600 {
		t.Errorf("not JSON-RPC: code %d, want -32600", r.Code)
	}
	env.Editor.WriteRaw(frame(`[1,2]`))
	env.Editor.WriteRaw([]byte("Content-Length: x\r\n\r\n"))
	// Unknown request, unknown and malformed notifications.
	if err := env.TryCall("switchboard/nope", map[string]any{}, nil); hosttest.ErrorCode(err) != -32601 {
		t.Errorf("unknown request: %v, want -32601", err)
	}
	env.Notify("$/myExtension/ping", nil)
	env.Notify("switchboard/whatever", map[string]any{})
	env.Notify("textDocument/didChange", map[string]any{"textDocument": 5})
	env.Notify("textDocument/didOpen", `[1]`)
	env.Notify("workspace/didChangeConfiguration", `"nope"`)
	// Bad params to a request.
	if err := env.TryCall("workspace/executeCommand", `{"command":5}`, nil); hosttest.ErrorCode(err) != -32602 || !strings.Contains(err.Error(), "command") {
		t.Errorf("executeCommand with a numeric command: %v, want -32602 naming command", err)
	}
	if err := env.Command("switchboard.nope", nil, nil); hosttest.ErrorCode(err) != -32602 {
		t.Errorf("unknown command: %v, want -32602", err)
	}
	if err := env.Command(wire.CmdCallTool, "not an object", nil); hosttest.ErrorCode(err) != -32602 {
		t.Errorf("callTool with a string argument: %v, want -32602", err)
	}
	// Still serving.
	var servers []hosttest.ServerStatus
	env.MustCommand(wire.CmdServers, nil, &servers)
	if len(servers) != 1 {
		t.Errorf("servers after bad input = %+v", servers)
	}
}

func TestProgress(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{
		WorkDoneProgress: true,
		InitOptions:      initOpts(map[string]any{"a": server(), "b": server()}),
	})
	st := env.Await("progress end", func(s *hosttest.State) bool {
		for _, p := range s.Params("$/progress") {
			if strings.Contains(string(p), `"kind":"end"`) {
				return true
			}
		}
		return false
	})
	if len(st.RequestParams("window/workDoneProgress/create")) != 1 {
		t.Errorf("workDoneProgress/create requests: %d, want 1", len(st.RequestParams("window/workDoneProgress/create")))
	}
	ps := st.Params("$/progress")
	if !strings.Contains(string(ps[0]), `"kind":"begin"`) || !strings.Contains(string(ps[0]), "Connecting MCP servers") {
		t.Errorf("first progress = %s, want begin with Connecting MCP servers", ps[0])
	}
}

func TestNoProgressWithoutClientSupport(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	if n := len(env.State().Params("$/progress")); n != 0 {
		t.Errorf("got %d $/progress notifications from a client without workDoneProgress", n)
	}
}

func TestServerFailureShownOnce(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(map[string]any{
		"ok": server(), "bad": server("--exit-at-start"),
	})})
	st := env.AwaitServer("bad", "failed")
	if st.Error == "" {
		t.Errorf("failed server has no error")
	}
	env.AwaitServer("ok", "ready")
	s := env.Await("showMessage for bad", func(s *hosttest.State) bool {
		return len(s.Messages("window/showMessage", "'bad'")) > 0
	})
	if n := len(s.Messages("window/showMessage", "'bad'")); n != 1 {
		t.Errorf("showMessage about bad: %d, want 1", n)
	}
	if len(s.Messages("window/logMessage", "bad")) == 0 {
		t.Errorf("no logMessage about the failure")
	}
}

func TestConfigErrorsReported(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{
		UserFiles: map[string]string{"mcp.json": `{"mcpServers":{"bad__name":{"command":"x"},"ok":{"command":"` + jsonEsc(mcptestBin) + `","bogus":1}}}`},
	})
	st := env.Await("config problems shown", func(s *hosttest.State) bool {
		return len(s.Messages("window/showMessage", "configuration")) > 0
	})
	if n := len(st.Messages("window/showMessage", "configuration")); n != 1 {
		t.Errorf("showMessage about configuration: %d, want 1", n)
	}
	if len(st.Messages("window/logMessage", "bad__name")) == 0 {
		t.Errorf("no logMessage naming the bad server")
	}
}

func jsonEsc(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }

func TestDidChangeConfiguration(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	env.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{
		"switchboard": initOpts(map[string]any{"t": server(), "u": server()}, "mode", "always-allow"),
	}})
	env.AwaitServer("u", "ready")
	// The new mode applies: no question for a call without a mode.
	var res toolResult
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__u__echo", "arguments": map[string]any{"text": "hi"}}, &res)
	if res.IsError || res.Text != "hi" {
		t.Errorf("callTool under always-allow = %+v", res)
	}
	env.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{
		"switchboard": initOpts(map[string]any{"u": server()}),
	}})
	env.Await("t removed", func(s *hosttest.State) bool { _, ok := s.Server("t"); return !ok && len(s.Servers()) == 1 })
}

func TestInitializeOddParams(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{NoInitialize: true})
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".mcp.json"), workspaceServer())
	// Odd shapes some clients send: an array for an empty table, a string where an object goes.
	env.Call("initialize", map[string]any{
		"processId": "x", "rootUri": hosttest.FileURI(ws), "workspaceFolders": "none",
		"capabilities":          map[string]any{"window": []any{}, "workspace": []any{}},
		"initializationOptions": []any{},
	}, nil)
	env.Notify("initialized", map[string]any{})
	env.AwaitServer("w", "untrusted") // the folder from rootUri was kept
	if n := len(env.State().Messages("window/logMessage", "initializationOptions")); n != 0 {
		t.Errorf("%d warnings about an empty initializationOptions", n)
	}
}

// TestRootsAreWorkspaceFolders: an MCP server that asks for roots gets the workspace folders, and
// after workspace/didChangeWorkspaceFolders it is told and sees the new ones.
func TestRootsAreWorkspaceFolders(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(map[string]any{"r": server("--roots")})})
	env.AwaitServer("r", "ready")
	type answer struct {
		Roots []struct {
			URI  string `json:"uri"`
			Name string `json:"name"`
		} `json:"roots"`
		ListChanged int `json:"listChanged"`
	}
	roots := func() answer {
		t.Helper()
		var res toolResult
		env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__r__roots", "mode": "always-allow"}, &res)
		var a answer
		if res.IsError || json.Unmarshal([]byte(res.Text), &a) != nil {
			t.Fatalf("roots = %+v", res)
		}
		return a
	}
	a := roots()
	if len(a.Roots) != 1 || a.Roots[0].URI != hosttest.FileURI(env.Workspace) {
		t.Fatalf("roots = %+v, want the workspace folder %s", a.Roots, env.Workspace)
	}
	other := t.TempDir()
	env.Notify(wire.MethodDidChangeFolders, map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": hosttest.FileURI(other), "name": "other"}}, "removed": []any{},
	}})
	for i := 0; a.ListChanged == 0; i++ { // the notification goes out in the background
		if i == 1000 {
			t.Fatal("notifications/roots/list_changed never reached the server")
		}
		a = roots()
	}
	if len(a.Roots) != 2 || a.Roots[1].URI != hosttest.FileURI(other) {
		t.Errorf("roots after adding a folder = %+v", a.Roots)
	}
}

// TestNothingBeforeInitializeAnswer: the application starts while initialize is being answered
// (so MCP servers start while the editor reads the answer), yet the editor hears nothing before
// that answer: what the host had to say meanwhile (here a settings warning, said while
// initialize is handled) comes after it, at the next message from the editor, whether that is
// initialized or, from an editor that never sends initialized, a request.
func TestNothingBeforeInitializeAnswer(t *testing.T) {
	for _, next := range []string{"initialized", "request"} {
		t.Run(next, func(t *testing.T) {
			env := hosttest.Run(t, hosttest.Config{NoInitialize: true})
			var res json.RawMessage
			env.Call("initialize", map[string]any{"processId": nil, "capabilities": map[string]any{},
				"initializationOptions": map[string]any{"mode": "yolo", "servers": map[string]any{"t": server()}}}, &res)
			if next == "initialized" {
				env.Notify("initialized", map[string]any{})
			} else if err := env.Command(wire.CmdServers, nil, nil); err != nil {
				t.Fatal(err)
			}
			env.Await("the settings warning", func(s *hosttest.State) bool {
				return strings.Contains(env.FramesFromHost(), "initializationOptions.mode")
			})
			env.AwaitServer("t", "ready")
			frames := strings.Split(env.FramesFromHost(), "\n")
			if !strings.Contains(frames[0], `"id":1`) || !strings.Contains(frames[0], `"capabilities"`) {
				t.Fatalf("the host's first frame is not initialize's answer:\n%s", strings.Join(frames, "\n"))
			}
		})
	}
}

// An editor that stops the host right after initialize (initialize, shutdown, exit: a quick
// restart, a window closed while loading) still gets what the host held since initialize, and
// nothing waits for a release that would never come (Serve returns).
func TestShutdownRightAfterInitialize(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{NoInitialize: true})
	var res json.RawMessage
	env.Call("initialize", map[string]any{"processId": nil, "capabilities": map[string]any{"window": map[string]any{"workDoneProgress": true}},
		"initializationOptions": map[string]any{"mode": "yolo", "servers": map[string]any{"t": server()}}}, &res)
	env.Call("shutdown", nil, nil)
	if !strings.Contains(env.FramesFromHost(), "initializationOptions.mode") {
		t.Errorf("the warning held since initialize never reached the editor:\n%s", env.FramesFromHost())
	}
	env.Notify("exit", nil)
	if err := env.Served(); err != nil {
		t.Fatalf("Serve after shutdown+exit = %v", err)
	}
}

// TestFolderEventWithoutChange: a workspace/didChangeWorkspaceFolders that changes nothing (VS
// Code sends one with nothing added or removed when folders are reordered or renamed; here it
// re-adds the folder the window has) tells no server that its roots changed. Before, every server
// heard roots/list_changed, and each one shared at workspace scope was moved to "the instance of
// its new folders", the same one, cutting its calls and tasks in flight.
func TestFolderEventWithoutChange(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(map[string]any{"r": server("--roots")})})
	env.AwaitServer("r", "ready")
	type answer struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
		ListChanged int `json:"listChanged"`
	}
	roots := func() answer {
		t.Helper()
		var res toolResult
		env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__r__roots", "mode": "always-allow"}, &res)
		var a answer
		if res.IsError || json.Unmarshal([]byte(res.Text), &a) != nil {
			t.Fatalf("roots = %+v", res)
		}
		return a
	}
	env.Notify(wire.MethodDidChangeFolders, map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": hosttest.FileURI(env.Workspace), "name": "ws"}}, "removed": []any{},
	}})
	env.Notify(wire.MethodDidChangeFolders, map[string]any{"event": map[string]any{"added": []any{}, "removed": []any{}}})
	// Then a real change, whose notification follows any the events above sent.
	other := t.TempDir()
	env.Notify(wire.MethodDidChangeFolders, map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": hosttest.FileURI(other), "name": "other"}}, "removed": []any{},
	}})
	a := roots()
	for i := 0; a.ListChanged == 0 || len(a.Roots) != 2; i++ { // the notification goes out in the background
		if i == 1000 {
			t.Fatalf("the real change never reached the server: %+v", a)
		}
		a = roots()
	}
	if a.ListChanged != 1 {
		t.Errorf("the server heard roots/list_changed %d times; want once, for the one real change", a.ListChanged)
	}
}
