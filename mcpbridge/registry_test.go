package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// inProc is a set of in-process mcp-go servers the registry dials by config name.
type inProc map[string]*server.MCPServer

func (p inProc) dial(cfg config.ServerConfig, env []string, log *slog.Logger) (transport.Interface, error) {
	s := p[cfg.Name]
	if s == nil {
		return nil, fmt.Errorf("no in-process server %q", cfg.Name)
	}
	return transport.NewInProcessTransport(s), nil
}

func inProcCfg(name string) config.ServerConfig {
	return config.ServerConfig{Name: name, Transport: config.TransportStdio, Command: "in-process",
		StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second, Source: "test"}
}

func textTool(s *server.MCPServer, name, text string) {
	s.AddTool(mcp.NewTool(name, mcp.WithDescription("returns "+text)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(text), nil
		})
}

func newInProcServer(name string, tools ...string) *server.MCPServer {
	s := server.NewMCPServer(name, "1", server.WithToolCapabilities(true), server.WithInstructions("use "+name))
	for _, tl := range tools {
		textTool(s, tl, name+"/"+tl)
	}
	return s
}

func newInProcRegistry(t testing.TB, servers inProc, opts Options) *Registry {
	r := newTestRegistry(t, opts)
	r.dial = servers.dial
	return r
}

func TestRegistryInProcess(t *testing.T) {
	servers := inProc{"a": newInProcServer("a", "echo", "other"), "b": newInProcServer("b", "echo")}
	r := newInProcRegistry(t, servers, Options{})
	st := applyAndWait(t, r, inProcCfg("a"), inProcCfg("b"))
	if st["a"].State != StateReady || st["b"].State != StateReady || st["a"].Tools != 2 || !st["a"].Instructions {
		t.Fatalf("statuses = %+v", st)
	}
	if diff := cmp.Diff([]string{"mcp__a__echo", "mcp__a__other", "mcp__b__echo"}, toolNames(r)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	res, err := r.Call(context.Background(), "mcp__b__echo", nil)
	if err != nil || res.IsError || res.Text != "b/echo" || res.Name != "mcp__b__echo" || len(res.Content) != 1 {
		t.Errorf("Call = %+v, %v", res, err)
	}
	tl, ok := r.Lookup("mcp__a__other")
	if !ok || tl.Server != "a" || tl.Tool != "other" || tl.Description != "returns a/other" || !strings.Contains(string(tl.InputSchema), `"object"`) {
		t.Errorf("Lookup = %+v, %v", tl, ok)
	}
	if diff := cmp.Diff(map[string]string{"a": "use a", "b": "use b"}, r.Instructions()); diff != "" {
		t.Errorf("Instructions (-want +got):\n%s", diff)
	}
}

func TestUnknownTool(t *testing.T) {
	r := newInProcRegistry(t, inProc{"a": newInProcServer("a", "echo")}, Options{})
	applyAndWait(t, r, inProcCfg("a"))
	for _, name := range []string{"mcp__a__nope", "mcp__zz__echo", "echo", ""} {
		res, err := r.Call(context.Background(), name, nil)
		want := `{"error":"Unknown tool: ` + name + `"}`
		if err != nil || !res.IsError || res.Text != want {
			t.Errorf("Call(%q) = %+v, %v; want text %s", name, res, err, want)
		}
	}
}

func TestCallErrors(t *testing.T) {
	s := newInProcServer("a")
	s.AddTool(mcp.NewTool("fail"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("it broke"), nil
	})
	s.AddTool(mcp.NewTool("rpcerr"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("handler error")
	})
	r := newInProcRegistry(t, inProc{"a": s}, Options{})
	applyAndWait(t, r, inProcCfg("a"))
	res, _ := r.Call(context.Background(), "mcp__a__fail", nil)
	if !res.IsError || res.Text != "it broke" {
		t.Errorf("fail = %+v", res)
	}
	res, _ = r.Call(context.Background(), "mcp__a__rpcerr", nil)
	if !res.IsError || !strings.Contains(res.Text, "handler error") {
		t.Errorf("rpcerr = %+v", res)
	}
	res, _ = r.Call(context.Background(), "mcp__a__fail", json.RawMessage(`[1]`))
	if !res.IsError || !strings.Contains(res.Text, "arguments must be a JSON object") {
		t.Errorf("bad args = %+v", res)
	}
}

func TestCallCancel(t *testing.T) {
	s := newInProcServer("a")
	started := make(chan struct{})
	handlerDone := make(chan error, 1)
	s.AddTool(mcp.NewTool("wait"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		handlerDone <- ctx.Err()
		return nil, ctx.Err()
	})
	r := newInProcRegistry(t, inProc{"a": s}, Options{})
	applyAndWait(t, r, inProcCfg("a"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res, err := r.Call(ctx, "mcp__a__wait", nil)
	if !errors.Is(err, context.Canceled) || !res.IsError || !strings.Contains(res.Text, "cancelled") {
		t.Errorf("Call = %+v, %v", res, err)
	}
	if err := <-handlerDone; err == nil {
		t.Error("handler ctx not cancelled")
	}
}

func TestCallTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newInProcServer("a")
		s.AddTool(mcp.NewTool("wait"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		r := newInProcRegistry(t, inProc{"a": s}, Options{})
		cfg := inProcCfg("a")
		cfg.CallTimeout = 5 * time.Second
		applyAndWait(t, r, cfg)
		res, err := r.Call(context.Background(), "mcp__a__wait", nil)
		if err != nil || !res.IsError || res.Text != `{"error":"tool call timed out after 5s"}` {
			t.Errorf("Call = %+v, %v", res, err)
		}
	})
}

func TestListChangedRelistsOneServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newInProcServer("a", "one"), newInProcServer("b", "x")
		changes := make(chan []ServerStatus, 100)
		r := newInProcRegistry(t, inProc{"a": a, "b": b}, Options{OnChange: func(s []ServerStatus) { changes <- s }})
		applyAndWait(t, r, inProcCfg("a"), inProcCfg("b"))
		textTool(a, "two", "a/two") // notifies list_changed
		textTool(a, "three", "a/three")
		time.Sleep(time.Second) // fake time: past the debounce
		synctest.Wait()
		if diff := cmp.Diff([]string{"mcp__a__one", "mcp__a__three", "mcp__a__two", "mcp__b__x"}, toolNames(r)); diff != "" {
			t.Errorf("tools after add (-want +got):\n%s", diff)
		}
		r.mu.Lock()
		ra, rb := r.servers["a"].relists, r.servers["b"].relists
		r.mu.Unlock()
		if ra != 1 || rb != 0 {
			t.Errorf("relists a=%d b=%d; want 1 and 0 (two signals in one debounce period, b untouched)", ra, rb)
		}
		a.DeleteTools("one")
		time.Sleep(time.Second)
		synctest.Wait()
		if diff := cmp.Diff([]string{"mcp__a__three", "mcp__a__two", "mcp__b__x"}, toolNames(r)); diff != "" {
			t.Errorf("tools after delete (-want +got):\n%s", diff)
		}
		if len(changes) == 0 {
			t.Error("OnChange never called")
		}
		res, _ := r.Call(context.Background(), "mcp__a__two", nil)
		if res.Text != "a/two" {
			t.Errorf("call new tool = %+v", res)
		}
	})
}

func TestListChangedStormBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newInProcServer("a", "one")
		r := newInProcRegistry(t, inProc{"a": a}, Options{})
		applyAndWait(t, r, inProcCfg("a"))
		const rate, seconds = 500, 10 // 5000 notifications over 10 s
		for range rate * seconds {
			a.SendNotificationToAllClients(string(mcp.MethodNotificationToolsListChanged), nil)
			time.Sleep(time.Second / rate)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		r.mu.Lock()
		n := r.servers["a"].relists
		r.mu.Unlock()
		if max := seconds*int(time.Second/r.debounce) + 2; n < 1 || n > max {
			t.Errorf("relists = %d; want 1..%d", n, max)
		}
	})
}

func TestDisabledAndUntrusted(t *testing.T) {
	servers := inProc{"d": newInProcServer("d", "t"), "w": newInProcServer("w", "t")}
	trust := false
	r := newInProcRegistry(t, servers, Options{Trusted: func(config.ServerConfig) bool { return trust }})
	d, w := inProcCfg("d"), inProcCfg("w")
	d.Disabled, w.WorkspaceOnly = true, true
	st := applyAndWait(t, r, d, w)
	if st["d"].State != StateDisabled || st["w"].State != StateUntrusted || len(r.Tools()) != 0 {
		t.Fatalf("statuses = %+v", st)
	}
	trust = true
	st = applyAndWait(t, r, d, w)
	if st["w"].State != StateReady {
		t.Fatalf("after trust: %+v", st["w"])
	}
	trust = false
	st = applyAndWait(t, r, d, w)
	if st["w"].State != StateUntrusted || len(r.Tools()) != 0 {
		t.Fatalf("after distrust: %+v", st["w"])
	}
	st = applyAndWait(t, r) // removed
	if len(st) != 0 {
		t.Fatalf("after removal: %+v", st)
	}
}

func TestNameCollisionBothReported(t *testing.T) {
	// Names of different servers cannot collide (see naming.go); within one server, "a.b" made
	// safe is mcp__x__a_b_<hash>, which a tool can also be called outright.
	plain := "a_b_" + shortHash("x", "a.b")
	servers := inProc{"x": newInProcServer("x", "a.b", plain, "ok")}
	r := newInProcRegistry(t, servers, Options{})
	st := applyAndWait(t, r, inProcCfg("x"))
	names := toolNames(r)
	want := []string{"mcp__x__a_b_" + shortHash("x", "a.b") + "_" + shortHash("x", plain), "mcp__x__a_b_" + shortHash("x", "a.b"), "mcp__x__ok"}
	if diff := cmp.Diff(sortedCopy(want), names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if !strings.Contains(st["x"].Error, "tool name collision: mcp__x__a_b_") || st["x"].State != StateReady {
		t.Errorf("status x = %+v", st["x"])
	}
	for _, n := range names[:2] {
		tl, _ := r.Lookup(n)
		res, _ := r.Call(context.Background(), n, nil)
		if res.Text != tl.Server+"/"+tl.Tool {
			t.Errorf("Call(%s) = %q", n, res.Text)
		}
	}
}

// A config that did not come through config.LoadConfig (a test, an embedder) with a server name ending
// in '_' fails with the rule instead of registering tools that read as another server's.
func TestRegistryRefusesAmbiguousServerName(t *testing.T) {
	servers := inProc{"github_": newInProcServer("github_", "delete_repo")}
	r := newInProcRegistry(t, servers, Options{})
	st := applyAndWait(t, r, inProcCfg("github_"))
	if st["github_"].State != StateFailed || !strings.Contains(st["github_"].Error, "must not end in '_'") {
		t.Errorf("status = %+v; want failed with the name rule", st["github_"])
	}
	if len(r.Tools()) != 0 {
		t.Errorf("tools = %v; want none", toolNames(r))
	}
}

// Tools of a workspace-only server carry their definition's fingerprint; others carry none.
func TestToolDefinition(t *testing.T) {
	servers := inProc{"w": newInProcServer("w", "t"), "u": newInProcServer("u", "t")}
	r := newInProcRegistry(t, servers, Options{Trusted: func(config.ServerConfig) bool { return true }})
	w := inProcCfg("w")
	w.WorkspaceOnly = true
	applyAndWait(t, r, w, inProcCfg("u"))
	if tl, ok := r.Lookup("mcp__w__t"); !ok || tl.Definition != w.Fingerprint() || tl.Definition == "" {
		t.Errorf("workspace tool = %+v; want Definition %q", tl, w.Fingerprint())
	}
	if tl, ok := r.Lookup("mcp__u__t"); !ok || tl.Definition != "" {
		t.Errorf("user tool = %+v; want no Definition", tl)
	}
}

func TestUnsafeToolNames(t *testing.T) {
	long := strings.Repeat("t", 80)
	servers := inProc{"s": newInProcServer("s", "a.b", long, "fine-name")}
	r := newInProcRegistry(t, servers, Options{})
	st := applyAndWait(t, r, inProcCfg("s"))
	if st["s"].Error != "" || st["s"].Tools != 3 {
		t.Fatalf("status = %+v", st["s"])
	}
	for _, tl := range r.Tools() {
		if !isSafeName(tl.Name) {
			t.Errorf("unsafe registered name %q", tl.Name)
		}
		res, _ := r.Call(context.Background(), tl.Name, nil)
		if res.Text != "s/"+tl.Tool {
			t.Errorf("Call(%s) = %q", tl.Name, res.Text)
		}
	}
	if _, ok := r.Lookup("mcp__s__fine-name"); !ok {
		t.Error("a safe name was changed")
	}
}

func TestToolFilters(t *testing.T) {
	servers := inProc{"e": newInProcServer("e", "a", "b", "c"), "d": newInProcServer("d", "a", "b", "c")}
	r := newInProcRegistry(t, servers, Options{})
	e, d := inProcCfg("e"), inProcCfg("d")
	e.EnabledTools = []string{"a", "c"}
	d.DisabledTools = []string{"a"}
	applyAndWait(t, r, e, d)
	if diff := cmp.Diff([]string{"mcp__d__b", "mcp__d__c", "mcp__e__a", "mcp__e__c"}, toolNames(r)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestReconnect(t *testing.T) {
	a := newInProcServer("a", "one")
	r := newInProcRegistry(t, inProc{"a": a}, Options{Load: func() ([]config.ServerConfig, []error) {
		return []config.ServerConfig{inProcCfg("a")}, nil
	}})
	applyAndWait(t, r, inProcCfg("a"))
	if _, err := r.ReconnectServer(context.Background(), "nope"); err == nil {
		t.Error("ReconnectServer(unknown) = nil error")
	}
	s, err := r.ReconnectServer(context.Background(), "a")
	if err != nil || s.State != StateReady {
		t.Errorf("ReconnectServer = %+v, %v", s, err)
	}
	all := r.Reconnect(context.Background())
	if len(all) != 1 || all[0].State != StateReady {
		t.Errorf("Reconnect = %+v", all)
	}
}

func TestApplyDoesNotBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := server.NewMCPServer("slow", "1", server.WithHooks(slowInitHooks(time.Hour)))
		r := newInProcRegistry(t, inProc{"slow": s, "a": newInProcServer("a", "t")}, Options{})
		slow := inProcCfg("slow")
		slow.StartupTimeout = 3 * time.Second
		r.Apply(context.Background(), []config.ServerConfig{slow, inProcCfg("a")})
		st := statusMap(r) // right after Apply, nothing has been waited for
		if st["slow"].State != StateStarting {
			t.Fatalf("slow = %+v", st["slow"])
		}
		if err := r.WaitIdle(context.Background()); err != nil {
			t.Fatal(err)
		}
		st = statusMap(r)
		if st["slow"].State != StateFailed || st["slow"].Error != "startup timed out after 3s" || st["a"].State != StateReady {
			t.Errorf("statuses = %+v", st)
		}
	})
}

// slowInitHooks delays initialize by d (a server that hangs on initialize).
func slowInitHooks(d time.Duration) *server.Hooks {
	h := &server.Hooks{}
	h.AddBeforeInitialize(func(ctx context.Context, id any, req *mcp.InitializeRequest) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	})
	return h
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// The snapshot is replaced, never changed, when a server's tools change: a caller holding the old
// one keeps a consistent view, and the new one has the added tool.
func TestSnapshotPublishedOnChange(t *testing.T) {
	changed := make(chan struct{}, 1)
	r := newTestRegistry(t, Options{OnChange: func([]ServerStatus) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	applyAndWait(t, r, stdioCfg("snap"))
	old := r.Snapshot()
	n := old.Len()
	if _, ok := old.Lookup("mcp__snap__echo"); !ok {
		t.Fatalf("echo not in the snapshot: %v", toolNames(r))
	}
	if res, _ := r.Call(context.Background(), "mcp__snap__add_tool", json.RawMessage(`{"name":"extra"}`)); res.IsError {
		t.Fatalf("add_tool: %+v", res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for r.Snapshot() == old {
		select {
		case <-ctx.Done():
			t.Fatal("no new snapshot after list_changed")
		case <-changed:
		}
	}
	if _, ok := r.Snapshot().Lookup("mcp__snap__extra"); !ok {
		t.Fatalf("extra not in the new snapshot: %v", toolNames(r))
	}
	if old.Len() != n {
		t.Fatalf("the old snapshot changed: %d tools, was %d", old.Len(), n)
	}
	if _, ok := old.Lookup("mcp__snap__extra"); ok {
		t.Fatal("the old snapshot gained the new tool")
	}
	r.Apply(context.Background(), nil)
	if r.Snapshot().Len() != 0 {
		t.Fatalf("tools after removing the server: %v", toolNames(r))
	}
}

// TestStdioCallTimeout: over stdio, calls share one deadline timer (stdio.Transport.expire). A call
// that outlives its timeout fails with the timeout's text, the server's pipe stays usable, the
// timer arms again for later calls, and calls in flight together each time out.
func TestStdioCallTimeout(t *testing.T) {
	r := newTestRegistry(t, Options{})
	cfg := stdioCfg("s")
	cfg.CallTimeout = 300 * time.Millisecond
	if st := applyAndWait(t, r, cfg); st["s"].State != StateReady {
		t.Fatalf("server: %+v", st["s"])
	}
	slow := json.RawMessage(`{"seconds":30}`)
	const want = `{"error":"tool call timed out after 300ms"}`
	for round := range 2 { // the second round finds the timer fired and disarmed
		res, err := r.Call(context.Background(), "mcp__s__slow", slow)
		if err != nil || !res.IsError || res.Text != want {
			t.Fatalf("round %d: slow call = %+v, %v; want %s", round, res, err, want)
		}
		res, err = r.Call(context.Background(), "mcp__s__echo", json.RawMessage(`{"text":"after"}`))
		if err != nil || res.IsError || !strings.Contains(res.Text, "after") {
			t.Fatalf("round %d: echo after a timeout = %+v, %v", round, res, err)
		}
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			res, err := r.Call(context.Background(), "mcp__s__slow", slow)
			if err != nil || !res.IsError || res.Text != want {
				t.Errorf("concurrent slow call %d = %+v, %v; want %s", i, res, err, want)
			}
		})
	}
	wg.Wait()
	// A call cancelled by its caller is cancelled, not timed out.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if res, err := r.Call(ctx, "mcp__s__slow", slow); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(res.Text, "cancelled") {
		t.Errorf("call whose ctx ends first = %+v, %v", res, err)
	}
}

// TestAnswersInHandSettles: stdio.AnswersInHand (the host's hint that replies are about to be
// written) counts each server answer from its hand-over to its caller until the caller takes it,
// including an answer that arrives as its caller gives up (cancelled, timed out): once every call
// has returned it is zero again, so an idle host never waits for replies that are not coming.
func TestAnswersInHandSettles(t *testing.T) {
	r := newTestRegistry(t, Options{})
	cfg := stdioCfg("s")
	cfg.CallTimeout = 300 * time.Millisecond
	if st := applyAndWait(t, r, cfg); st["s"].State != StateReady {
		t.Fatalf("server: %+v", st["s"])
	}
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			ctx := context.Background()
			if i%2 == 1 { // some give up as their answer comes
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(i%40)*10*time.Microsecond)
				defer cancel()
			}
			_, _ = r.Call(ctx, "mcp__s__echo", json.RawMessage(`{"text":"x"}`))
		})
	}
	wg.Go(func() { _, _ = r.Call(context.Background(), "mcp__s__slow", json.RawMessage(`{"seconds":30}`)) })
	wg.Wait()
	if n := stdio.AnswersInHand(); n != 0 {
		t.Errorf("AnswersInHand = %d after every call returned; want 0", n)
	}
}
