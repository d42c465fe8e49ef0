package lsp_test

import (
	"encoding/json"
	"github.com/switchboard-dev/switchboard/host/wire"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
)

type toolInfo struct {
	Name        string         `json:"name"`
	Server      string         `json:"server"`
	Tool        string         `json:"tool"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	Allowlisted bool           `json:"allowlisted"`
}

func TestServersAndTools(t *testing.T) {
	env := runWith(t, hosttest.Config{InitOptions: initOpts(map[string]any{"t": server(), "u": server("--tools", "2")})})
	env.AwaitServer("u", "ready")
	var servers []hosttest.ServerStatus
	env.MustCommand(wire.CmdServers, nil, &servers)
	if len(servers) != 2 || servers[0].Name != "t" || servers[0].State != "ready" || servers[0].Transport != "stdio" || servers[0].Source != "editor settings" || servers[0].Tools == 0 {
		t.Errorf("servers = %+v", servers)
	}
	var all, some []toolInfo
	env.MustCommand(wire.CmdTools, nil, &all)
	env.MustCommand(wire.CmdTools, map[string]string{"server": "u"}, &some)
	if len(all) != len(some)+servers[0].Tools {
		t.Errorf("%d tools in all, %d of u, %d of t", len(all), len(some), servers[0].Tools)
	}
	for _, ti := range some {
		if ti.Server != "u" || !strings.HasPrefix(ti.Name, "mcp__u__") || ti.InputSchema == nil || ti.Allowlisted {
			t.Errorf("tool %+v", ti)
		}
	}
	if err := env.Command(wire.CmdTools, map[string]string{"server": "nope"}, nil); hosttest.ErrorCode(err) != -32602 {
		t.Errorf("tools of an unknown server: %v, want -32602", err)
	}
	if err := env.Command(wire.CmdTools, map[string]any{"server": 5}, nil); hosttest.ErrorCode(err) != -32602 {
		t.Errorf("tools with a numeric server: %v, want -32602", err)
	}
}

func TestAllowlistCommands(t *testing.T) {
	env := runWith(t, hosttest.Config{UserFiles: map[string]string{"allow_tool": "# mine\nmcp__other__x\n"}})
	var got struct {
		Path    string   `json:"path"`
		Entries []string `json:"entries"`
	}
	env.MustCommand(wire.CmdAllowlistGet, nil, &got)
	if got.Path != filepath.Join(env.ConfigDir, "allow_tool") || !slices.Equal(got.Entries, []string{"mcp__other__x"}) {
		t.Errorf("allowlist.get = %+v", got)
	}
	var set struct {
		Entries []string `json:"entries"`
	}
	env.MustCommand(wire.CmdAllowlistSet, map[string]any{"prefix": "mcp__t__", "entries": []string{"mcp__t__echo"}}, &set)
	if !slices.Contains(set.Entries, "mcp__t__echo") || !slices.Contains(set.Entries, "mcp__other__x") {
		t.Errorf("allowlist.set = %v", set.Entries)
	}
	// The tool is now allowlisted: tools says so and callTool runs without asking.
	var tools []toolInfo
	env.MustCommand(wire.CmdTools, map[string]string{"server": "t"}, &tools)
	for _, ti := range tools {
		if ti.Allowlisted != (ti.Name == "mcp__t__echo") {
			t.Errorf("%s allowlisted = %v", ti.Name, ti.Allowlisted)
		}
	}
	var res toolResult
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__echo", "arguments": map[string]string{"text": "ok"}}, &res)
	if res.IsError || res.Text != "ok" || len(env.State().Approvals()) != 0 {
		t.Errorf("allowlisted call = %+v, approvals %d", res, len(env.State().Approvals()))
	}
	// Bad input changes nothing.
	for _, bad := range []any{
		map[string]any{"prefix": "mcp__t__", "entries": []string{"mcp__u__echo"}},
		map[string]any{"prefix": "mcp__bad__name__", "entries": []string{}},
		map[string]any{"prefix": "nope", "entries": []string{}},
		map[string]any{"prefix": "mcp__t__"},
		map[string]any{"entries": []string{}},
		map[string]any{"prefix": "mcp__t__", "entries": "mcp__t__echo"},
	} {
		if err := env.Command(wire.CmdAllowlistSet, bad, nil); hosttest.ErrorCode(err) != -32602 {
			t.Errorf("allowlist.set %v: %v, want -32602", bad, err)
		}
	}
	env.MustCommand(wire.CmdAllowlistGet, nil, &got)
	if !slices.Equal(got.Entries, set.Entries) {
		t.Errorf("entries after bad input = %v, want %v", got.Entries, set.Entries)
	}
	// An empty list revokes the prefix.
	env.MustCommand(wire.CmdAllowlistSet, map[string]any{"prefix": "mcp__t__", "entries": []string{}}, &set)
	if !slices.Equal(set.Entries, []string{"mcp__other__x"}) {
		t.Errorf("after revoke = %v", set.Entries)
	}
}

func TestCallToolModes(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	var res toolResult
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__echo", "arguments": map[string]string{"text": "a"}, "mode": "always-allow"}, &res)
	if res.IsError || res.Text != "a" || res.Name != "mcp__t__echo" || res.Bytes != 1 || len(res.Content) != 1 {
		t.Errorf("always-allow = %+v", res)
	}
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__echo", "arguments": map[string]string{"text": "a"}, "mode": "allowlist-only"}, &res)
	if !res.IsError {
		t.Errorf("allowlist-only without a grant = %+v, want denied", res)
	}
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__nope", "mode": "always-allow"}, &res)
	if !res.IsError || !strings.Contains(res.Text, "Unknown tool") {
		t.Errorf("unknown tool = %+v", res)
	}
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__fail", "mode": "always-allow"}, &res)
	if !res.IsError {
		t.Errorf("fail = %+v", res)
	}
	if n := len(env.State().Approvals()); n != 0 {
		t.Errorf("%d approvals asked, want 0", n)
	}
	for _, bad := range []any{
		map[string]any{},
		map[string]any{"name": "mcp__t__echo", "arguments": []int{1}},
		map[string]any{"name": "mcp__t__echo", "mode": "sometimes"},
		[]string{"x"},
	} {
		if err := env.Command(wire.CmdCallTool, bad, nil); hosttest.ErrorCode(err) != -32602 {
			t.Errorf("callTool %v: %v, want -32602", bad, err)
		}
	}
}

func TestReconnect(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	var servers []hosttest.ServerStatus
	env.MustCommand(wire.CmdReconnect, map[string]string{"server": "t"}, &servers)
	if len(servers) != 1 || servers[0].State != "ready" {
		t.Errorf("reconnect t = %+v", servers)
	}
	env.MustCommand(wire.CmdReconnect, nil, &servers)
	if len(servers) != 1 || servers[0].State != "ready" {
		t.Errorf("reconnect all = %+v", servers)
	}
	if err := env.Command(wire.CmdReconnect, map[string]string{"server": "nope"}, nil); hosttest.ErrorCode(err) != -32602 {
		t.Errorf("reconnect nope: %v, want -32602", err)
	}
}

func TestReconnectRereadsConfigFiles(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{
		UserFiles: map[string]string{"mcp.json": `{"mcpServers":{"a":{"command":"` + jsonEsc(mcptestBin) + `"}}}`},
	})
	env.AwaitServer("a", "ready")
	writeFile(t, filepath.Join(env.ConfigDir, "mcp.json"), `{"mcpServers":{"b":{"command":"`+jsonEsc(mcptestBin)+`"}}}`)
	var servers []hosttest.ServerStatus
	env.MustCommand(wire.CmdReconnect, nil, &servers)
	if len(servers) != 1 || servers[0].Name != "b" || servers[0].State != "ready" {
		t.Errorf("after reconnect = %+v, want only b ready", servers)
	}
}

func TestListChangedReachesEditor(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	before := env.AwaitServer("t", "ready").Tools
	var res toolResult
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__add_tool", "arguments": map[string]string{"name": "extra"}, "mode": "always-allow"}, &res)
	if res.IsError {
		t.Fatalf("add_tool = %+v", res)
	}
	env.Await("serversChanged with one more tool", func(s *hosttest.State) bool {
		st, _ := s.Server("t")
		return st.Tools == before+1
	})
	var tools []toolInfo
	env.MustCommand(wire.CmdTools, map[string]string{"server": "t"}, &tools)
	if !slices.ContainsFunc(tools, func(ti toolInfo) bool { return ti.Name == "mcp__t__extra" }) {
		t.Errorf("tools after list_changed lack mcp__t__extra")
	}
}

func TestEventsFile(t *testing.T) {
	events := eventsPath(t)
	env := runWith(t, hosttest.Config{Env: map[string]string{"SWITCHBOARD_EVENTS": events}})
	env.Editor.SetResponder(hosttest.Answer("Allow once"))
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__t__echo", "arguments": map[string]string{"text": "e"}}, nil)
	env.Call("shutdown", nil, nil)
	log := readFile(t, events)
	for _, want := range []string{`"kind":"lifecycle"`, `"event":"initialize"`, `"kind":"serverState"`, `"state":"ready"`,
		`"kind":"approvalRequested"`, `"kind":"approvalResolved"`, `"kind":"toolCallStart"`, `"kind":"toolCallEnd"`,
		`"command":"switchboard.callTool"`, `"event":"shutdown"`} {
		if !strings.Contains(log, want) {
			t.Errorf("events file lacks %s:\n%s", want, log)
		}
	}
}

// TestCallWhileServerStarts: a call that comes while its server is still starting waits for the
// start and runs (it does not fail with "unknown tool"); a call to a server that fails to start
// gets that failure at once.
func TestCallWhileServerStarts(t *testing.T) {
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(map[string]any{
		"slow": server("--startup-delay", "300ms"), "dead": server("--exit-at-start")}, "mode", "always-allow")})
	var res wire.ToolResult
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__slow__echo", "arguments": map[string]any{"text": "early"}}, &res)
	if res.IsError || res.Text != "early" {
		t.Fatalf("call during the server's start = %+v; want it to wait and run", res)
	}
	env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__dead__echo", "arguments": map[string]any{"text": "x"}}, &res)
	if !res.IsError {
		t.Fatalf("call to a server that failed to start = %+v; want an error result", res)
	}
	if st := env.AwaitServer("dead", "failed"); st.State != "failed" {
		t.Fatalf("dead = %+v", st)
	}
}

// A call that waits for its server's start is judged by the settings at the end of the wait: the
// person switched to allowlist-only meanwhile, so the waiting call is refused, not run under the
// always-allow it arrived under.
func TestCallWhileServerStartsUsesModeAfterWait(t *testing.T) {
	servers := map[string]any{"slow": server("--startup-delay", "1500ms")}
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(servers, "mode", "always-allow")})
	// The call goes first on the wire, the settings right after it, while the server starts.
	if err := env.Editor.RawCall(`"c1"`, "workspace/executeCommand", map[string]any{"command": wire.CmdCallTool,
		"arguments": []any{map[string]any{"name": "mcp__slow__echo", "arguments": map[string]any{"text": "ran"}}}}); err != nil {
		t.Fatal(err)
	}
	env.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"switchboard": initOpts(servers, "mode", "allowlist-only")}})
	r := env.AwaitResponse(`"c1"`)
	var res wire.ToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil || !res.IsError || res.Text == "ran" {
		t.Errorf("the call ran under always-allow after the person chose allowlist-only: %s (%v)", r.Result, err)
	}
}
