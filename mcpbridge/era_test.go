package mcpbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// recorded is what an mcptest --record FILE read ("> ") and wrote ("< "), by direction.
func recorded(t *testing.T, path string) (in, out []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "> "):
			in = append(in, l[2:])
		case strings.HasPrefix(l, "< "):
			out = append(out, l[2:])
		}
	}
	return in, out
}

func methodsOf(lines []string) []string {
	var ms []string
	for _, l := range lines {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Method != "" {
			ms = append(ms, m.Method)
		}
	}
	return ms
}

func countMethod(lines []string, method string) int {
	n := 0
	for _, m := range methodsOf(lines) {
		if m == method {
			n++
		}
	}
	return n
}

// modernCfg is an mcptest that serves only 2026-07-28 over stdio, recording its messages.
func modernCfg(t *testing.T, name string, args ...string) (config.ServerConfig, string) {
	rec := filepath.Join(t.TempDir(), "rec")
	return stdioCfg(name, append([]string{"--protocol", "2026-07-28", "--record", rec}, args...)...), rec
}

// TestModernStdioServer: in auto, a modern-only stdio server (initialize answered with -32022) is
// ready in 2026-07-28, its tools listed and called with the per-request _meta; the era is
// remembered, and the next start sends it no initialize at all.
func TestModernStdioServer(t *testing.T) {
	eras := OpenEraStore(filepath.Join(t.TempDir(), "eras.json"))
	cfg, rec := modernCfg(t, "m")
	r := newTestRegistry(t, Options{Eras: eras})
	st := applyAndWait(t, r, cfg)
	if st["m"].State != StateReady || st["m"].ProtocolVersion != ProtocolModern {
		t.Fatalf("status = %+v", st["m"])
	}
	res, err := r.Call(context.Background(), "mcp__m__echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || res.IsError || res.Text != "hi" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	in, _ := recorded(t, rec)
	if got := countMethod(in, "initialize"); got != 1 {
		t.Errorf("initialize sent %d times at the first start, want 1 (then discover)", got)
	}
	if countMethod(in, "notifications/initialized") != 0 || countMethod(in, "ping") != 0 {
		t.Errorf("legacy messages sent to a modern server: %v", methodsOf(in))
	}
	for _, l := range in {
		if strings.Contains(l, `"method":"tools/`) && !strings.Contains(l, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`) {
			t.Errorf("a modern request without the protocol version in _meta: %s", l)
		}
	}
	if got := eras.Get(cfg.Fingerprint()); got != ProtocolModern {
		t.Fatalf("remembered era = %q", got)
	}
	r.Close()
	os.Remove(rec)

	r2 := newTestRegistry(t, Options{Eras: OpenEraStore(filepath.Join(filepath.Dir(eras.path), "eras.json"))})
	if st := applyAndWait(t, r2, cfg); st["m"].State != StateReady {
		t.Fatalf("second start: %+v", st["m"])
	}
	in, _ = recorded(t, rec)
	if got := countMethod(in, "initialize"); got != 0 {
		t.Errorf("the second start sent initialize %d times to a server remembered modern: %v", got, methodsOf(in))
	}
}

// TestLegacyStdioNoProbe: a legacy stdio server that ignores unknown methods is ready in
// 2025-11-25 without ever being sent server/discover (auto: initialize first).
func TestLegacyStdioNoProbe(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec")
	r := newTestRegistry(t, Options{Eras: OpenEraStore(filepath.Join(t.TempDir(), "eras.json"))})
	st := applyAndWait(t, r, stdioCfg("l", "--ignore-discover", "--record", rec))
	if st["l"].State != StateReady || st["l"].ProtocolVersion != ProtocolLegacy {
		t.Fatalf("status = %+v", st["l"])
	}
	in, _ := recorded(t, rec)
	if n := countMethod(in, "server/discover"); n != 0 {
		t.Errorf("server/discover sent %d times to a legacy stdio server: %v", n, methodsOf(in))
	}
}

// TestProtocolFixed: an entry's protocol is used alone: 2025-11-25 against a modern-only server
// fails with the server's own reason, and is not remembered.
func TestProtocolFixed(t *testing.T) {
	eras := OpenEraStore(filepath.Join(t.TempDir(), "eras.json"))
	cfg, rec := modernCfg(t, "f")
	cfg.Protocol = ProtocolLegacy
	r := newTestRegistry(t, Options{Eras: eras})
	st := applyAndWait(t, r, cfg)
	if st["f"].State != StateFailed || !strings.Contains(st["f"].Error, "2026-07-28") {
		t.Fatalf("status = %+v", st["f"])
	}
	in, _ := recorded(t, rec)
	if n := countMethod(in, "server/discover"); n != 0 {
		t.Errorf("discover sent with protocol fixed to 2025-11-25")
	}
	if eras.Get(cfg.Fingerprint()) != "" {
		t.Errorf("a fixed era was remembered")
	}
}

// TestMRTRForm: a modern server's input_required form reaches Options.Elicit like a legacy
// server's elicitation (fields in the server's order), and the retry carries the answer with a
// new id and the requestState exactly as the server wrote it; the model never sees the state.
func TestMRTRForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(t *testing.T) (config.ServerConfig, string)
	}{
		{"stdio", func(t *testing.T) (config.ServerConfig, string) { return modernCfg(t, "e") }},
		{"streamable-http", func(t *testing.T) (config.ServerConfig, string) {
			rec := filepath.Join(t.TempDir(), "rec")
			return config.ServerConfig{Name: "e", Transport: config.TransportHTTP, StartupTimeout: 20 * time.Second, CallTimeout: 20 * time.Second,
				URL: startMCPTestHTTP(t, "--http", "--protocol", "2026-07-28", "--record", rec)}, rec
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []Elicitation
			r := newTestRegistry(t, Options{Elicit: func(ctx context.Context, e Elicitation) ElicitResult {
				mu.Lock()
				seen = append(seen, e)
				mu.Unlock()
				return ElicitResult{Action: ElicitAccept, Content: map[string]any{"name": "Ada", "agree": true}}
			}})
			cfg, rec := tc.cfg(t)
			if st := applyAndWait(t, r, cfg); st["e"].State != StateReady || st["e"].ProtocolVersion != ProtocolModern {
				t.Fatalf("status = %+v", st["e"])
			}
			res, err := r.Call(context.Background(), "mcp__e__mrtr_ask", json.RawMessage(`{"message":"Who \u001b[2J are you?"}`))
			if err != nil || res.IsError {
				t.Fatalf("mrtr_ask = %+v, %v", res, err)
			}
			if want := `{"action":"accept","content":{"agree":true,"name":"Ada"}}`; res.Text != want {
				t.Errorf("the server got %s, want %s", res.Text, want)
			}
			if strings.Contains(res.Text, "opaque") {
				t.Errorf("the requestState reached the model: %s", res.Text)
			}
			mu.Lock()
			if len(seen) != 1 || seen[0].Server != "e" || seen[0].Message != "Who \x1b[2J are you?" {
				t.Fatalf("elicitations = %+v", seen)
			}
			var names []string
			for _, f := range seen[0].Fields {
				names = append(names, f.Name)
			}
			mu.Unlock()
			if got := strings.Join(names, " "); got != "name count color agree" {
				t.Errorf("fields %s, want the server's order", got)
			}
			in, _ := recorded(t, rec)
			stateJSON, _ := json.Marshal("opaque <&> \"state\" é \u2028 /1") // as mcp-go's server encodes it
			var ids []string
			retried := false
			for _, l := range in {
				if !strings.Contains(l, `"method":"tools/call"`) {
					continue
				}
				var m struct {
					ID string `json:"id"`
				}
				_ = json.Unmarshal([]byte(l), &m)
				ids = append(ids, m.ID)
				if strings.Contains(l, `"inputResponses"`) {
					retried = true
					if !strings.Contains(l, `"requestState":`+string(stateJSON)) {
						t.Errorf("the retry does not echo the requestState byte for byte: %s", l)
					}
				}
			}
			if !retried || len(ids) != 2 || ids[0] == ids[1] {
				t.Errorf("tools/call ids %v (retried %v): want two requests with different ids", ids, retried)
			}
		})
	}
}

// TestMRTRSamplingAndRoots: one input_required result asking for the model and the roots is
// answered by Options.Sample and Options.Roots (without asking the user).
func TestMRTRSamplingAndRoots(t *testing.T) {
	root := t.TempDir()
	r := newTestRegistry(t, Options{
		Roots: func() []string { return []string{root} },
		Sample: func(ctx context.Context, req SampleRequest) (SampleResult, error) {
			return SampleResult{Model: "m1", Text: "short: " + req.Messages[0].Text, StopReason: "endTurn"}, nil
		},
	})
	cfg, _ := modernCfg(t, "s")
	applyAndWait(t, r, cfg)
	res, err := r.Call(context.Background(), "mcp__s__mrtr_both", json.RawMessage(`{"text":"abc"}`))
	if err != nil || res.IsError {
		t.Fatalf("mrtr_both = %+v, %v", res, err)
	}
	if !strings.Contains(res.Text, `model m1 said "short: Summarize: abc"`) || !strings.Contains(res.Text, "file://"+root) {
		t.Errorf("result = %s", res.Text)
	}
}

// TestMRTRHostile: a server that asks for input forever is stopped after 8 rounds, and one that
// asks by a method no client answers is refused; both say so clearly, and a cancel ends an
// exchange waiting for the person.
func TestMRTRHostile(t *testing.T) {
	block := make(chan struct{})
	r := newTestRegistry(t, Options{
		Roots: func() []string { return nil },
		Elicit: func(ctx context.Context, e Elicitation) ElicitResult {
			close(block)
			<-ctx.Done()
			return ElicitResult{Action: ElicitCancel}
		},
	})
	cfg, rec := modernCfg(t, "h")
	applyAndWait(t, r, cfg)
	res, err := r.Call(context.Background(), "mcp__h__mrtr_loop", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text, "asked for input 8 times") {
		t.Fatalf("mrtr_loop = %+v, %v", res, err)
	}
	in, _ := recorded(t, rec)
	if n := countMethod(in, "tools/call"); n != 9 {
		t.Errorf("%d tools/call requests for the loop, want 9 (the first and 8 retries)", n)
	}
	res, err = r.Call(context.Background(), "mcp__h__mrtr_unknown", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text, `by method \"evil/exec\", which this client does not answer`) {
		t.Fatalf("mrtr_unknown = %+v, %v", res, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-block; cancel() }()
	res, err = r.Call(ctx, "mcp__h__mrtr_ask", nil)
	if err == nil || !res.IsError {
		t.Fatalf("cancelled mrtr_ask = %+v, %v", res, err)
	}
}

// TestSchemaVerbatimModern: a modern server's input schema reaches the model as the server wrote
// it (2020-12 keywords, $ref not dereferenced).
func TestSchemaVerbatimModern(t *testing.T) {
	r := newTestRegistry(t, Options{})
	cfg, _ := modernCfg(t, "v")
	applyAndWait(t, r, cfg)
	schema := `{"type":"object","$defs":{"n":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/n"},"b":{"prefixItems":[{"type":"integer"}]}}}`
	tool, ok := r.Lookup("mcp__v__schema_2020")
	if !ok {
		t.Fatal("no schema_2020 tool")
	}
	var got, want any
	_ = json.Unmarshal(tool.InputSchema, &got)
	_ = json.Unmarshal([]byte(schema), &want)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("schema = %s, want %s", tool.InputSchema, schema)
	}
}

// TestProtocolSpelling: config spells the eras without importing mcp-go; they must be mcp-go's.
func TestProtocolSpelling(t *testing.T) {
	if ProtocolLegacy != mcp.ProtocolVersion20251125 || ProtocolModern != mcp.ProtocolVersion20260728 {
		t.Errorf("config spells the eras %q and %q; mcp-go %q and %q", ProtocolLegacy, ProtocolModern, mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728)
	}
}

// TestModernListChanged: a modern server's tools/list_changed (stdio and HTTP) arrives on subscriptions/listen and
// the tools are listed again (through the pins: the new tool has its hash).
func TestModernListChanged(t *testing.T) {
	changed := make(chan struct{}, 100)
	r := newTestRegistry(t, Options{OnChange: func([]ServerStatus) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	cfg, rec := modernCfg(t, "c", "--ttl-ms", "600000")
	h := config.ServerConfig{Name: "ch", Transport: config.TransportHTTP, StartupTimeout: 20 * time.Second, CallTimeout: 20 * time.Second,
		URL: startMCPTestHTTP(t, "--http", "--protocol", "2026-07-28")}
	st := applyAndWait(t, r, cfg, h)
	if st["ch"].ProtocolVersion != ProtocolModern {
		t.Fatalf("http status = %+v", st["ch"])
	}
	// A change is heard once the server acknowledged the listen request; one made before then
	// is not (the test would race the listen otherwise).
	for _, name := range []string{"c", "ch"} {
		r.mu.Lock()
		c := r.servers[name].conn
		r.mu.Unlock()
		select {
		case <-c.listenS.heard:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: subscriptions/listen was never acknowledged", name)
		}
	}
	res, err := r.Call(context.Background(), "mcp__ch__add_tool", json.RawMessage(`{"name":"fresh"}`))
	if err != nil || res.IsError {
		t.Fatalf("add_tool over http = %+v, %v", res, err)
	}
	res, err = r.Call(context.Background(), "mcp__c__add_tool", json.RawMessage(`{"name":"fresh"}`))
	if err != nil || res.IsError {
		t.Fatalf("add_tool = %+v, %v", res, err)
	}
	deadline := time.After(20 * time.Second)
	for {
		_, okHTTP := r.Lookup("mcp__ch__fresh")
		if tool, ok := r.Lookup("mcp__c__fresh"); ok && okHTTP {
			if tool.Hash == "" {
				t.Errorf("the new tool has no pin hash")
			}
			break
		}
		select {
		case <-changed:
		case <-deadline:
			in, _ := recorded(t, rec)
			t.Fatalf("the tool list was not refreshed; sent %v", methodsOf(in))
		}
	}
	in, _ := recorded(t, rec)
	if countMethod(in, "subscriptions/listen") == 0 {
		t.Errorf("no subscriptions/listen sent: %v", methodsOf(in))
	}
}

// TestEraRelearnt: a server remembered modern that no longer answers server/discover (a legacy
// server that ignores it) is started in the legacy era after the probe, and the new era is
// remembered.
func TestEraRelearnt(t *testing.T) {
	eras := OpenEraStore(filepath.Join(t.TempDir(), "eras.json"))
	cfg := stdioCfg("x", "--ignore-discover")
	eras.Set(cfg.Fingerprint(), "x", ProtocolModern)
	r := newTestRegistry(t, Options{Eras: eras})
	st := applyAndWait(t, r, cfg)
	if st["x"].State != StateReady || st["x"].ProtocolVersion != ProtocolLegacy {
		t.Fatalf("status = %+v", st["x"])
	}
	if got := eras.Get(cfg.Fingerprint()); got != ProtocolLegacy {
		t.Errorf("remembered era = %q after re-learning, want %s", got, ProtocolLegacy)
	}
	r.Close() // the file is written in the background; Close waits for it
	if got := OpenEraStore(eras.path).Get(cfg.Fingerprint()); got != ProtocolLegacy {
		t.Errorf("era in the file = %q after re-learning, want %s", got, ProtocolLegacy)
	}
}

// TestModernResourceSubscription: a modern server's resource updates are asked for in the
// subscriptions/listen request (resourceSubscriptions), never by resources/subscribe; Subscribe
// returns once the server acknowledged the new listen, so the next change is heard, and after
// Unsubscribe the server no longer holds the subscription.
func TestModernResourceSubscription(t *testing.T) {
	events := make(chan ResourceEvent, 10)
	r := newTestRegistry(t, Options{OnResource: func(ev ResourceEvent) { events <- ev }})
	cfg, rec := modernCfg(t, "m", "--resources")
	if st := applyAndWait(t, r, cfg); st["m"].ProtocolVersion != ProtocolModern {
		t.Fatalf("status = %+v", st["m"])
	}
	ctx := context.Background()
	if err := r.Subscribe(ctx, "m", "mcptest://counter"); err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	res, err := r.Call(ctx, "mcp__m__bump", json.RawMessage(`{}`))
	if err != nil || res.IsError || !strings.Contains(res.Text, "(subscribed: true)") {
		t.Fatalf("bump after Subscribe = %+v, %v", res, err)
	}
	for ev := range events {
		if ev.Kind == EventResourceUpdated {
			if ev.URI != "mcptest://counter" || ev.Server != "m" {
				t.Errorf("update = %+v", ev)
			}
			break
		}
	}
	if err := r.Unsubscribe(ctx, "m", "mcptest://counter"); err != nil {
		t.Fatalf("Unsubscribe: %v", err)
	}
	res, err = r.Call(ctx, "mcp__m__bump", json.RawMessage(`{}`))
	if err != nil || res.IsError || !strings.Contains(res.Text, "(subscribed: false)") {
		t.Errorf("bump after Unsubscribe = %+v, %v", res, err)
	}
	in, _ := recorded(t, rec)
	if n := countMethod(in, "resources/subscribe") + countMethod(in, "resources/unsubscribe"); n != 0 {
		t.Errorf("a modern server got %d resources/(un)subscribe requests: %v", n, methodsOf(in))
	}
	var withURI int
	for _, l := range in {
		if strings.Contains(l, `"subscriptions/listen"`) && strings.Contains(l, `"resourceSubscriptions":["mcptest://counter"]`) {
			withURI++
		}
	}
	if withURI != 1 {
		t.Errorf("%d listen requests named the resource, want 1: %v", withURI, methodsOf(in))
	}
}

// TestEraStoreKeepsOtherWindows: two hosts (windows) share eras.json; what one remembered is not
// dropped when the other, which read the file before, remembers another server.
func TestEraStoreKeepsOtherWindows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", DefaultErasFile)
	a, b := OpenEraStore(path), OpenEraStore(path)
	if got := a.Get("fp-a"); got != "" { // a has read the (missing) file
		t.Fatalf("Get before any Set = %q", got)
	}
	b.Set("fp-b", "b", ProtocolModern)
	a.Set("fp-a", "a", ProtocolLegacy)
	fresh := OpenEraStore(path)
	if got, want := [2]string{fresh.Get("fp-a"), fresh.Get("fp-b")}, [2]string{ProtocolLegacy, ProtocolModern}; got != want {
		t.Errorf("eras.json holds %q, want %q", got, want)
	}
}

// TestEraStoreBackgroundWrites: a learnt era is held at once and written later (Registry.learnt);
// the file ends with the latest era of each server whatever order the writes run in, and a write
// keeps what another window wrote meanwhile.
func TestEraStoreBackgroundWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", DefaultErasFile)
	s := OpenEraStore(path)
	s.remember("fp-x", "x", ProtocolModern)
	s.remember("fp-x", "x", ProtocolLegacy) // relearnt before the first write ran
	s.remember("fp-y", "y", ProtocolModern)
	if got := s.Get("fp-x"); got != ProtocolLegacy {
		t.Fatalf("Get before the write = %q, want %s", got, ProtocolLegacy)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("remember wrote the file (%v)", err)
	}
	OpenEraStore(path).Set("fp-z", "z", ProtocolModern) // another window, meanwhile
	var wg sync.WaitGroup
	for range 2 { // one write per learnt era, in either order
		wg.Go(s.write)
	}
	wg.Wait()
	fresh := OpenEraStore(path)
	got := [3]string{fresh.Get("fp-x"), fresh.Get("fp-y"), fresh.Get("fp-z")}
	if want := [3]string{ProtocolLegacy, ProtocolModern, ProtocolModern}; got != want {
		t.Errorf("eras.json holds %q, want %q", got, want)
	}
}
