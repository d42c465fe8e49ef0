package lsp_test

// Benchmarks (see BENCHMARKS.md for figures):
//
//	go test ./host/lsp -run '^$' -bench . -benchtime 2000x       # all
//	SWITCHBOARD_BENCH=1 go test ./host/lsp -run TestBenchRatios -v  # the ratios, sides interleaved
//
// BenchmarkCallTool compares one switchboard.callTool round trip through the host (editor → LSP →
// gate → registry → mcptest → back) with Registry.Call on the same kind of server.
// BenchmarkInitialize compares initialize (+ the first request after initialized) with 30 MCP
// servers that never answer their initialize against none.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/host/lsp"
	"github.com/switchboard-dev/switchboard/host/lsptest"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

func BenchmarkCallTool(b *testing.B) {
	b.Run("host", benchCallToolHost)
	b.Run("direct", benchCallToolDirect)
}

// BenchmarkCallToolWorkspace is BenchmarkCallTool's host round trip for a workspace-defined
// server whose tool the user allowed ("Allow server", single-confirm mode): every call looks the
// grant up in the trust store. The trust file holds the server's definition and definitions-1
// others (a user's history of workspaces), and was written a while ago.
func BenchmarkCallToolWorkspace(b *testing.B) {
	for _, n := range []int{1, 30} {
		b.Run(fmt.Sprintf("definitions=%d", n), func(b *testing.B) { benchCallToolWorkspace(b, n) })
	}
}

func benchCallToolWorkspace(b *testing.B, definitions int) {
	others := map[string]any{}
	for i := range definitions - 1 {
		others[fmt.Sprintf("%064x", i)] = map[string]any{"server": fmt.Sprintf("ws%d", i), "trusted": true, "at": "2026-11-01T09:00:00Z",
			"definition": map[string]any{"command": "npx", "args": []string{"-y", fmt.Sprintf("@example/server-%d@1.2.3", i)},
				"env": map[string]string{"API_URL": fmt.Sprintf("https://example.com/api/v%d", i)}, "cwd": "/home/user/src/project"}}
	}
	trust, _ := json.Marshal(map[string]any{"fingerprints": others})
	env := hosttest.Run(b, hosttest.Config{
		Files:     map[string]string{".mcp.json": workspaceServer()},
		UserFiles: map[string]string{"trust.json": string(trust)},
	})
	env.AwaitServer("w", "untrusted")
	env.MustCommand(wire.CmdTrust, map[string]string{"server": "w", "decision": "trust"}, nil)
	env.AwaitServer("w", "ready")
	env.Editor.SetResponder(hosttest.Answer(wire.TitleAllowServer))
	params := json.RawMessage(`{"command":"switchboard.callTool","arguments":[{"name":"mcp__w__echo","arguments":{"text":"bench"}}]}`)
	call := func() {
		var res json.RawMessage
		if err := env.TryCall("workspace/executeCommand", params, &res); err != nil || !bytes.Contains(res, []byte(`"isError":false`)) {
			b.Fatalf("callTool = %s, %v", res, err)
		}
	}
	call() // asks, and records the grant for this definition
	env.Editor.SetResponder(hosttest.Answer(wire.TitleDeny))
	// The trust store keeps its parse of trust.json only once the file's times are 2 s old (its
	// racy window): a file's change time cannot be set back, so wait that out, as a file written
	// before the session would have. This waits for the file to age, not for an event.
	time.Sleep(2100 * time.Millisecond)
	asked := len(env.State().RequestParams("window/showMessageRequest"))
	var med medianTimer
	b.ResetTimer()
	for b.Loop() {
		med.start()
		call()
		med.stop()
	}
	b.StopTimer()
	if n := len(env.State().RequestParams("window/showMessageRequest")); n != asked {
		b.Fatalf("%d prompts during the timed calls: the grant did not hold", n-asked)
	}
	med.report(b)
}

func benchCallToolHost(b *testing.B) {
	env := hosttest.Run(b, hosttest.Config{InitOptions: initOpts(map[string]any{"t": server()}, "mode", "always-allow"),
		Options: func(o *lsp.Options) { o.NoAudit = os.Getenv("SWITCHBOARD_BENCH_NOAUDIT") != "" }})
	env.AwaitServer("t", "ready")
	// The editor sends pre-encoded params and keeps the result raw: what is measured is the host,
	// not the fake editor's JSON.
	params := json.RawMessage(`{"command":"switchboard.callTool","arguments":[{"name":"mcp__t__echo","arguments":{"text":"bench"}}]}`)
	var med medianTimer
	g0 := goroutinesCreated()
	b.ResetTimer()
	for b.Loop() {
		med.start()
		var res json.RawMessage
		if err := env.TryCall("workspace/executeCommand", params, &res); err != nil || !bytes.Contains(res, []byte(`"isError":false`)) {
			b.Fatalf("callTool = %s, %v", res, err)
		}
		med.stop()
	}
	b.ReportMetric(float64(goroutinesCreated()-g0)/float64(b.N), "goroutines/op")
	med.report(b)
}

// goroutinesCreated is the process's count of goroutines created so far (the test's own editor
// side included: compare runs, not absolute figures).
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func benchCallToolDirect(b *testing.B) {
	reg := directRegistry(b)
	args := json.RawMessage(`{"text":"bench"}`)
	var med medianTimer
	b.ResetTimer()
	for b.Loop() {
		med.start()
		res, err := reg.Call(context.Background(), "mcp__t__echo", args)
		if err != nil || res.IsError {
			b.Fatalf("Call = %+v, %v", res, err)
		}
		med.stop()
	}
	med.report(b)
}

func BenchmarkInitialize(b *testing.B) {
	b.Run("servers=0", func(b *testing.B) { benchInitialize(b, 0, false) })
	b.Run("servers=30-hanging", func(b *testing.B) { benchInitialize(b, 30, false) })
}

// BenchmarkFirstRequest times initialize, initialized and the first switchboard.servers answer:
// it includes the cost of starting the servers in the background (30 processes spawned).
func BenchmarkFirstRequest(b *testing.B) {
	b.Run("servers=0", func(b *testing.B) { benchInitialize(b, 0, true) })
	b.Run("servers=30-hanging", func(b *testing.B) { benchInitialize(b, 30, true) })
}

// benchInitialize times initialize's round trip (and, with firstRequest, initialized plus one
// switchboard.servers answer) per fresh session, with hanging servers in initializationOptions;
// setup and teardown (killing the servers) are not timed. Read median-ns/op.
func benchInitialize(b *testing.B, hanging int, firstRequest bool) {
	dir := b.TempDir()
	servers := map[string]any{}
	for i := range hanging {
		servers[fmt.Sprintf("h%02d", i)] = server("--hang-initialize")
	}
	params := initParams(servers)
	var med medianTimer
	for i := 0; i < b.N; i++ {
		med.ds = append(med.ds, hostSession(b, params, "", dir, firstRequest))
	}
	med.report(b)
}

// medianTimer records each timed operation so benchmarks can report the median, which a loaded
// shared machine disturbs much less than the mean.
type medianTimer struct {
	t0 time.Time
	ds []time.Duration
}

func (m *medianTimer) start() { m.t0 = time.Now() }
func (m *medianTimer) stop()  { m.ds = append(m.ds, time.Since(m.t0)) }

func (m *medianTimer) median() time.Duration {
	if len(m.ds) == 0 {
		return 0
	}
	ds := slices.Clone(m.ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func (m *medianTimer) report(b *testing.B) {
	b.ReportMetric(float64(m.median().Nanoseconds()), "median-ns/op")
}

// TestBenchRatios runs both comparisons in one process and logs the ratios (no assertion: the
// goals, 1.5x and 1.2x, are reported, not enforced). The two sides of each ratio alternate
// iteration by iteration, so drift on a shared machine (other jobs, GC, CPU frequency) falls on
// both equally; figures are medians.
func TestBenchRatios(t *testing.T) {
	if os.Getenv("SWITCHBOARD_BENCH") == "" {
		t.Skip("set SWITCHBOARD_BENCH=1 to run the benchmark comparison")
	}
	n := 2000
	if testing.Short() {
		n = 100
	}
	// callTool through the host vs Registry.Call, same server binary, alternating calls.
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(map[string]any{"t": server()}, "mode", "always-allow")})
	env.AwaitServer("t", "ready")
	reg := directRegistry(t)
	params := json.RawMessage(`{"command":"switchboard.callTool","arguments":[{"name":"mcp__t__echo","arguments":{"text":"bench"}}]}`)
	args := json.RawMessage(`{"text":"bench"}`)
	var viaHost, direct medianTimer
	for i := range 2 * n {
		if i%2 == 0 {
			viaHost.start()
			var res json.RawMessage
			if err := env.TryCall("workspace/executeCommand", params, &res); err != nil || !bytes.Contains(res, []byte(`"isError":false`)) {
				t.Fatalf("callTool = %s, %v", res, err)
			}
			viaHost.stop()
		} else {
			direct.start()
			if res, err := reg.Call(context.Background(), "mcp__t__echo", args); err != nil || res.IsError {
				t.Fatalf("Call = %+v, %v", res, err)
			}
			direct.stop()
		}
	}
	t.Logf("callTool round trip (n=%d each, interleaved): host median %v, Registry.Call median %v: ratio %.2fx (goal ≤ 1.5x)",
		n, viaHost.median(), direct.median(), float64(viaHost.median())/float64(direct.median()))

	// initialize with no servers vs 30 servers that hang on initialize, given in a config file
	// (the usual case: identical initialize payloads) and in initializationOptions (30 entries more
	// to carry and decode), alternating sessions.
	dir := t.TempDir()
	hanging := map[string]any{}
	for i := range 30 {
		hanging[fmt.Sprintf("h%02d", i)] = server("--hang-initialize")
	}
	file, _ := json.Marshal(map[string]any{"mcpServers": hanging})
	if err := os.WriteFile(filepath.Join(dir, "hanging.json"), file, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		params json.RawMessage
		file   string
	}{
		{"no servers", initParams(nil), ""},
		{"30 hanging servers in mcp.json", initParams(nil), filepath.Join(dir, "hanging.json")},
		{"30 hanging servers in initializationOptions", initParams(hanging), ""},
	}
	m := make([]medianTimer, len(cases))
	for i := range n * len(cases) {
		c := cases[i%len(cases)]
		m[i%len(cases)].ds = append(m[i%len(cases)].ds, hostSession(t, c.params, c.file, dir, false))
	}
	for i, c := range cases[1:] {
		t.Logf("initialize (n=%d each, interleaved): %s median %v vs %s median %v: ratio %.2fx (goal ≤ 1.2x)",
			n, c.name, m[i+1].median(), cases[0].name, m[0].median(), float64(m[i+1].median())/float64(m[0].median()))
	}
}

func directRegistry(t testing.TB) *mcpbridge.Registry {
	reg := mcpbridge.NewRegistry(mcpbridge.Options{BaseEnv: []string{"PATH=" + os.Getenv("PATH")}})
	t.Cleanup(func() { reg.Close() })
	entry, _ := json.Marshal(server())
	cfgs, errs := config.LoadConfig(config.ConfigSources{
		UserFile:      filepath.Join(t.TempDir(), "none.json"),
		EditorServers: map[string]json.RawMessage{"t": entry},
		Getenv:        func(string) (string, bool) { return "", false },
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	reg.Apply(context.Background(), cfgs)
	if err := reg.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := reg.Servers(); len(st) != 1 || st[0].State != "ready" {
		t.Fatalf("servers = %+v", st)
	}
	return reg
}

func initParams(servers map[string]any) json.RawMessage {
	opts := map[string]any{}
	if servers != nil {
		opts["servers"] = servers
	}
	p, _ := json.Marshal(map[string]any{"processId": nil, "capabilities": map[string]any{}, "initializationOptions": opts})
	return p
}

// hostSession starts a fresh host session (servers from userFile, if any), times its initialize
// round trip (with firstRequest: plus initialized and one switchboard.servers answer), and ends
// the session (untimed).
func hostSession(t testing.TB, params json.RawMessage, userFile, dir string, firstRequest bool) time.Duration {
	if userFile == "" {
		userFile = filepath.Join(dir, "none.json")
	}
	opts := lsp.Options{Options: host.Options{
		LookupEnv:          func(string) (string, bool) { return "", false },
		UserConfigFile:     userFile,
		ProviderConfigFile: filepath.Join(dir, "config.json"),
		AllowlistPath:      filepath.Join(dir, "allow_tool"),
		TrustPath:          filepath.Join(dir, "trust.json"),
		NoAudit:            true,
		BaseEnv:            []string{"PATH=" + os.Getenv("PATH")},
	}}
	ctx := context.Background()
	a, c := net.Pipe()
	served := make(chan error, 1)
	go func() { served <- lsp.Serve(ctx, a, opts) }()
	client := lsptest.New(c, c, lsptest.Options{NoRecord: true, Answer: func(lsptest.Message) (any, bool) { return nil, true }})
	runtime.GC() // the previous session's garbage is not billed to this one
	t0 := time.Now()
	if err := client.Call(ctx, "initialize", params, nil); err != nil {
		t.Fatal(err)
	}
	if firstRequest {
		client.Notify("initialized", json.RawMessage("{}")) // ignore error: the call below fails too
		var res json.RawMessage
		if err := client.Call(ctx, "workspace/executeCommand", json.RawMessage(`{"command":"switchboard.servers"}`), &res); err != nil {
			t.Fatal(err)
		}
	}
	d := time.Since(t0)
	client.Call(ctx, "shutdown", nil, nil) // ignore error
	client.Notify("exit", nil)             // ignore error
	<-served
	c.Close()
	<-client.Done()
	return d
}
