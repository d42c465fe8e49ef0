package lsp_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/lsp"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// TestSamplingConsentBoundToDefinition: "Allow this server" holds for the definition of the
// server the person answered about (its fingerprint), not for every server of that name. After
// the window's folders switch to another repository whose .mcp.json defines a server of the same
// name (with other arguments, or the very same ones: a workspace file's entry belongs to its
// folder), and after the definition is edited in place, that server asks again before it uses the
// model, although the person trusted it (the trust question says nothing about sampling). Back in
// the first repository, the definition the person allowed uses the model without asking.
func TestSamplingConsentBoundToDefinition(t *testing.T) {
	script := filepath.Join(t.TempDir(), "llm.script")
	writeFile(t, script, strings.Repeat("reply text \"A summary.\"\n\n", 12))
	var mu sync.Mutex
	var sampling, trust []string // the questions asked, in order
	responder := func(ctx context.Context, p hosttest.ShowMessageRequestParams) string {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.HasPrefix(p.Message, "MCP server 'w' asks to use your model"):
			sampling = append(sampling, p.Message)
			return lsp.TitleSampleServer
		case strings.Contains(p.Message, "defines MCP server 'w'"):
			trust = append(trust, p.Message)
			return "Trust"
		}
		t.Errorf("unexpected question: %q", p.Message)
		return ""
	}
	asked := func() (samplingN, trustN int) {
		mu.Lock()
		defer mu.Unlock()
		return len(sampling), len(trust)
	}
	env := runWith(t, hosttest.Config{
		InitOptions: initOpts(map[string]any{"t": server()}, "provider", map[string]any{"type": "script", "script": script}),
		Files:       map[string]string{".mcp.json": workspaceServer("--sample")},
		Responder:   responder,
	})
	repoA := env.Workspace
	// awaitW waits (asking the host itself, not its notifications) until w runs the definition of
	// the .mcp.json in dir and trust has been asked at least trustN times.
	awaitW := func(dir string, trustN int) {
		t.Helper()
		deadline := time.Now().Add(hosttest.Timeout())
		for {
			var servers []hosttest.ServerStatus
			env.MustCommand(wire.CmdServers, nil, &servers)
			_, n := asked()
			for _, st := range servers {
				if st.Name == "w" && st.State == "ready" && st.Source == filepath.Join(dir, ".mcp.json") && n >= trustN {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("w never ran the definition in %s (trust asked %d times, want %d): %+v", dir, n, trustN, servers)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	summarize := func(step string, wantSampling int) {
		t.Helper()
		var res toolResult
		env.MustCommand(wire.CmdCallTool, map[string]any{"name": "mcp__w__summarize", "arguments": map[string]any{"text": step}, "mode": "always-allow"}, &res)
		var m map[string]any
		if res.IsError || json.Unmarshal([]byte(res.Text), &m) != nil || m["text"] != "A summary." {
			t.Fatalf("%s: summarize = %+v", step, res)
		}
		if n, _ := asked(); n != wantSampling {
			t.Errorf("%s: the person was asked %d times about sampling, want %d", step, n, wantSampling)
		}
	}
	switchTo := func(from, to string) {
		env.Notify(wire.MethodDidChangeFolders, map[string]any{"event": map[string]any{
			"added":   []any{map[string]any{"uri": hosttest.FileURI(to), "name": filepath.Base(to)}},
			"removed": []any{map[string]any{"uri": hosttest.FileURI(from), "name": filepath.Base(from)}},
		}})
	}

	awaitW(repoA, 1)
	summarize("repoA's w, asked", 1)
	summarize("repoA's w, allowed", 1)

	// Another repository whose w has other arguments: trusted on its own, asked again.
	repoB := filepath.Join(t.TempDir(), "repoB")
	writeFile(t, filepath.Join(repoB, ".mcp.json"), workspaceServer("--sample", "--name", "other"))
	switchTo(repoA, repoB)
	awaitW(repoB, 2)
	summarize("repoB's w (other arguments)", 2)
	summarize("repoB's w, allowed", 2)

	// A repository whose w is written exactly as repoA's: still another folder's server.
	repoC := filepath.Join(t.TempDir(), "repoC")
	writeFile(t, filepath.Join(repoC, ".mcp.json"), workspaceServer("--sample"))
	switchTo(repoB, repoC)
	awaitW(repoC, 3)
	summarize("repoC's w (repoA's definition, another folder)", 3)

	// The definition edited in place: trusted again, asked again.
	writeFile(t, filepath.Join(repoC, ".mcp.json"), workspaceServer("--sample", "--tools", "1"))
	env.MustCommand(wire.CmdReconnect, nil, nil)
	awaitW(repoC, 4)
	summarize("repoC's w edited", 4)
	summarize("repoC's w edited, allowed", 4)

	// Back in repoA: the definition the person allowed (still trusted, so no trust question).
	switchTo(repoC, repoA)
	awaitW(repoA, 4)
	summarize("repoA's w again", 4)
	if _, n := asked(); n != 4 {
		t.Errorf("trust asked %d times, want 4", n)
	}
}
