package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/lsp"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/tokenstore"
)

const inputSecret = "ghp-s3cr3t-VALUE-4242"

// inputsConfig is a user mcp.json in VS Code's format: server "a" gets its tool count from a
// pickString input and a token from a password input.
func inputsConfig() string {
	return `{
  // VS Code's inputs
  "inputs": [
    {"type": "pickString", "id": "n", "description": "How many tools", "options": ["2", "3"]},
    {"type": "promptString", "id": "tok", "description": "GitHub token", "password": true},
  ],
  "servers": {
    "a": {"command": "` + jsonEsc(mcptestBin) + `", "args": ["--tools", "${input:n}"], "env": {"TOKEN": "${input:tok}"}},
  },
}`
}

func inputRequests(s *hosttest.State) []wire.InputRequest {
	var out []wire.InputRequest
	for _, raw := range s.Params(wire.NotifyInputRequested) {
		var r wire.InputRequest
		json.Unmarshal(raw, &r)
		out = append(out, r)
	}
	return out
}

// checkDummies checks that server a got --tools 3 (the picked value): dummy_3, no dummy_4.
func checkDummies(t *testing.T, env *hosttest.Env) {
	t.Helper()
	var tools []struct {
		Name string `json:"name"`
	}
	env.MustCommand(wire.CmdTools, map[string]string{"server": "a"}, &tools)
	b, _ := json.Marshal(tools)
	if !strings.Contains(string(b), "dummy_3") || strings.Contains(string(b), "dummy_4") {
		t.Errorf("tools of a = %s, want dummy_1..dummy_3 (the picked value)", b)
	}
}

// grepTree fails when any file under root holds s.
func grepTree(t *testing.T, root, s string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), s) {
			t.Errorf("file %s holds the input's value", p)
		}
		return nil
	})
}

// TestInputAskedOnceStoredReusedAfterRestart: a server using ${input:...} is asked for each
// input once through the editor (switchboard/inputRequested, answered with switchboard.input),
// starts with the values, and after a restart of the host starts without asking. The values are
// kept in the token store (the keychain; here its in-memory stand-in) and in no file, and reach
// no frame to the editor.
func TestInputAskedOnceStoredReusedAfterRestart(t *testing.T) {
	tokens := tokenstore.NewMemory()
	dir := t.TempDir()
	userFile := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(userFile, []byte(inputsConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := func(o *lsp.Options) { o.Tokens = tokens; o.UserConfigFile = userFile }

	env := hosttest.Run(t, hosttest.Config{Inputs: true, Options: opts})
	first := inputRequests(env.Await("input n requested", func(s *hosttest.State) bool { return len(inputRequests(s)) == 1 }))[0]
	if first.Server != "a" || first.Input != "n" || first.Password || strings.Join(first.Options, ",") != "2,3" || first.File != userFile ||
		first.Message != "MCP server 'a' needs input 'n': How many tools." {
		t.Errorf("first request = %+v", first)
	}
	// A value that is not an option is refused, and the question stays open.
	if err := env.Command(wire.CmdInput, wire.InputParams{ID: first.ID, Value: "7"}, nil); err == nil || !strings.Contains(err.Error(), "pick one of its options") {
		t.Errorf("switchboard.input with a value not among the options = %v", err)
	}
	env.MustCommand(wire.CmdInput, wire.InputParams{ID: first.ID, Value: "3"}, nil)
	second := inputRequests(env.Await("input tok requested", func(s *hosttest.State) bool { return len(inputRequests(s)) == 2 }))[1]
	if second.Input != "tok" || !second.Password {
		t.Errorf("second request = %+v", second)
	}
	env.MustCommand(wire.CmdInput, wire.InputParams{ID: second.ID, Value: inputSecret}, nil)
	env.AwaitServer("a", mcpbridge.StateReady)
	checkDummies(t, env)
	if err := env.Command(wire.CmdInput, wire.InputParams{ID: second.ID, Value: "again"}, nil); err == nil || !strings.Contains(err.Error(), "no pending input") {
		t.Errorf("answering twice = %v", err)
	}
	if v, err := config.LoadInput(context.Background(), tokens, config.InputKey(userFile, "tok")); err != nil || v != inputSecret {
		t.Errorf("store holds %q, %v", v, err)
	}
	if frames := env.FramesFromHost(); strings.Contains(frames, inputSecret) {
		t.Errorf("the input's value reached a frame to the editor")
	}
	var servers []hosttest.ServerStatus
	env.MustCommand(wire.CmdServers, nil, &servers)
	if b, _ := json.Marshal(servers); strings.Contains(string(b), inputSecret) {
		t.Errorf("statuses hold the value")
	}
	env.Call("shutdown", nil, nil)
	env.Notify("exit", nil)
	if err := env.Served(); err != nil {
		t.Fatal(err)
	}
	grepTree(t, dir, inputSecret)
	grepTree(t, filepath.Dir(env.Workspace), inputSecret) // config, state (audit, trust), workspace

	// A restart: the same file, the same store. No question; the server starts.
	env2 := hosttest.Run(t, hosttest.Config{Inputs: true, Options: opts})
	env2.AwaitServer("a", mcpbridge.StateReady)
	checkDummies(t, env2)
	if n := len(inputRequests(env2.State())); n != 0 {
		t.Errorf("after a restart the editor was asked %d time(s)", n)
	}
	if frames := env2.FramesFromHost(); strings.Contains(frames, inputSecret) {
		t.Errorf("the input's value reached a frame to the editor after the restart")
	}
}

// TestInputWithoutInputBoxes: an editor that declares no input boxes is told, in a
// showMessageRequest, how to set the value from a terminal; the server stays failed and no
// notification with the question is sent.
func TestInputWithoutInputBoxes(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{
		UserFiles: map[string]string{"mcp.json": inputsConfig()},
		Options:   func(o *lsp.Options) { o.Tokens = tokenstore.NewMemory() },
	})
	raw := env.Await("the how-to prompt", func(s *hosttest.State) bool {
		return len(s.RequestParams("window/showMessageRequest")) == 1
	}).RequestParams("window/showMessageRequest")[0]
	var p hosttest.ShowMessageRequestParams
	json.Unmarshal(raw, &p)
	if !strings.Contains(p.Message, "needs input 'n'") || !strings.Contains(p.Message, "switchboard mcp input set n --file "+filepath.Join(env.ConfigDir, "mcp.json")) ||
		len(p.Actions) != 1 || p.Actions[0].Title != wire.TitleReconnect {
		t.Errorf("prompt = %+v", p)
	}
	env.AwaitServer("a", mcpbridge.StateFailed)
	if n := len(env.State().Params(wire.NotifyInputRequested)); n != 0 {
		t.Errorf("%d inputRequested sent to an editor that did not declare input boxes", n)
	}
}
