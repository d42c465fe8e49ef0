//go:build unix

package main

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestSharedWorkspaceFolderRemoved: a server shared at workspace scope gets exactly the window's
// folders as roots. When the person removes a folder from the window, the server must no longer
// have it: the window moves to the instance of its new folder set (design §3.1), as a server in
// the window would hear roots/list_changed and ask again. Before, the window stayed on the
// instance whose roots still held the removed folder (the daemon drops a window's
// roots/list_changed: a shared instance's roots never change).
func TestSharedWorkspaceFolderRemoved(t *testing.T) {
	bin, mcptest := e2eBuild(t)
	_, env := sharedRuntime(t, bin)
	keep, drop := t.TempDir(), t.TempDir()
	folder := func(dir, name string) map[string]any { return map[string]any{"uri": "file://" + dir, "name": name} }
	e := startE2E(t, bin, env)
	t.Cleanup(func() { e.stdin.Close(); e.wait() })
	e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil,
		"capabilities":     map[string]any{"workspace": map[string]any{"workspaceFolders": true}},
		"workspaceFolders": []any{folder(keep, "keep"), folder(drop, "drop")},
		"initializationOptions": map[string]any{"daemonIdleSeconds": 5, "servers": map[string]any{
			"r": map[string]any{"command": mcptest, "args": []string{"--roots"}, "shared": "workspace"}}}})
	e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	ready := func(ms []e2eMsg) bool {
		s, _ := lastStatus(ms, "r")
		return s.State == "ready" && s.Shared != nil
	}
	e.await("r ready, shared", ready)
	roots := func() []string {
		t.Helper()
		res := e.call("workspace/executeCommand", map[string]any{"command": "switchboard.callTool",
			"arguments": []any{map[string]any{"name": "mcp__r__roots", "mode": "always-allow"}}})
		var r struct {
			Content []struct{ Text string }
		}
		json.Unmarshal(res.Result, &r)
		var a struct {
			Roots []struct{ URI string }
		}
		if len(r.Content) == 0 || json.Unmarshal([]byte(r.Content[0].Text), &a) != nil {
			t.Fatalf("roots: %s", res.Result)
		}
		var uris []string
		for _, x := range a.Roots {
			uris = append(uris, x.URI)
		}
		slices.Sort(uris)
		return uris
	}
	both := []string{"file://" + keep, "file://" + drop}
	slices.Sort(both)
	if got := roots(); !slices.Equal(got, both) {
		t.Fatalf("roots = %v, want %v", got, both)
	}
	seen, _ := e.lsp.Messages()
	before := len(seen)
	e.send(map[string]any{"jsonrpc": "2.0", "method": "workspace/didChangeWorkspaceFolders", "params": map[string]any{
		"event": map[string]any{"added": []any{}, "removed": []any{folder(drop, "drop")}}}})
	e.await("r on the instance of the new folder set", func(ms []e2eMsg) bool {
		starting := false
		for _, m := range ms[before:] {
			if m.Method != "switchboard/serversChanged" {
				continue
			}
			s, _ := lastStatus([]e2eMsg{m}, "r")
			starting = starting || s.State == "starting"
		}
		return starting && ready(ms)
	})
	if got := roots(); !slices.Equal(got, []string{"file://" + keep}) {
		t.Errorf("roots after removing %s = %v, want only %s", drop, got, keep)
	}
}
