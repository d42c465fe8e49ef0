//go:build unix

package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// drain returns the frames a window has received so far without waiting.
func (w *win) drain() []frame {
	var fs []frame
	for {
		select {
		case f := <-w.frames:
			fs = append(fs, f)
		default:
			return fs
		}
	}
}

// sync makes sure the daemon has handled every frame w sent before: it answers ping itself, in
// the order of w's frames.
func (w *win) sync() []frame {
	w.send(`{"jsonrpc":"2.0","id":"sync","method":"ping"}`)
	return w.until(`"sync"`)
}

func methods(fs []frame) []string {
	var ms []string
	for _, f := range fs {
		if f.Method != "" {
			ms = append(ms, f.Method)
		}
	}
	return ms
}

// recorded counts the frames mcptest read whose method is method.
func recorded(t *testing.T, file, method string) int {
	t.Helper()
	data, _ := os.ReadFile(file)
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "> ") && strings.Contains(l, `"method":"`+method+`"`) {
			n++
		}
	}
	return n
}

// TestSubscriptionsRefcounted: two windows subscribe to one resource: the server hears one
// subscribe; an update reaches only subscribers; the server hears unsubscribe when the last
// subscriber leaves, even by closing.
func TestSubscriptionsRefcounted(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	record := dir + "/record"
	cfg := Config{Dir: dir, Build: "test"}
	req := request(launch("--resources", "--record", record))
	a := attachWin(t, "A", cfg, req)
	b := attachWin(t, "B", cfg, req)
	a.initialize()
	b.initialize()
	const subscribe = `{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":"mcptest://counter"}}`
	a.send(subscribe, 1)
	if fs := a.until("1"); fs[len(fs)-1].Error != nil {
		t.Fatalf("A subscribe: %s", fs[len(fs)-1].raw)
	}
	b.send(subscribe, 1)
	if fs := b.until("1"); fs[len(fs)-1].Error != nil {
		t.Fatalf("B subscribe: %s", fs[len(fs)-1].raw)
	}
	if n := recorded(t, record, "resources/subscribe"); n != 1 {
		t.Errorf("the server heard %d subscribes for two windows, want 1", n)
	}
	const bump = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bump","arguments":{}}}`
	a.send(bump, 2)
	for _, w := range []*win{a, b} {
		for w.next().Method != "notifications/resources/updated" {
		}
	}
	a.send(`{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"mcptest://counter"}}`)
	a.until("3")
	if n := recorded(t, record, "resources/unsubscribe"); n != 0 {
		t.Errorf("the server heard unsubscribe while B still subscribes")
	}
	a.drain()
	// mcp-go's server sends the update after bump's result: B's second update shows the daemon
	// has routed the first, and A's ping after it comes after anything routed to A.
	var fa []frame
	for _, id := range []int{4, 5} {
		a.send(bump, id)
		fa = append(fa, a.until(fmt.Sprint(id))...)
		for b.next().Method != "notifications/resources/updated" {
		}
	}
	fa = append(fa, a.sync()...)
	if ms := methods(fa); strings.Contains(strings.Join(ms, " "), "resources/updated") {
		t.Errorf("A got an update after it unsubscribed: %v", ms)
	}
	b.c.Close()
	waitFor(t, "unsubscribe upstream after the last subscriber left", func() bool {
		return recorded(t, record, "resources/unsubscribe") == 1
	})
}

// TestQuestionsGoToTheCaller: a server's question during the only busy window's call goes to
// that window, and another window can neither see nor answer it. With two windows busy the
// question is refused, shown to no one, and both windows are told in a log line.
func TestQuestionsGoToTheCaller(t *testing.T) {
	w := twoWindows(t, "--elicit", "--sample")
	a, b := w.a, w.b

	a.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	var q frame
	for q = a.next(); q.Method != "elicitation/create"; q = a.next() {
	}
	// B forges an answer with the id A was given; the daemon drops it.
	b.send(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"mallory","agree":true}}}`, q.ID)
	if ms := methods(b.sync()); len(ms) > 0 {
		t.Errorf("B received %v while A's call asked", ms)
	}
	a.send(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"alice","agree":true}}}`, q.ID)
	fs := a.until("5")
	if got := text(fs[len(fs)-1]); !strings.Contains(got, "alice") || strings.Contains(got, "mallory") {
		t.Fatalf("A's result %q: want A's own answer", got)
	}

	a.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"summarize","arguments":{"text":"hello"}}}`)
	for q = a.next(); q.Method != "sampling/createMessage"; q = a.next() {
	}
	a.send(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"A's model"},"model":"a"}}`, q.ID)
	if fs := a.until("6"); !strings.Contains(text(fs[len(fs)-1]), "A's model") {
		t.Fatalf("A's sampling result: %s", fs[len(fs)-1].raw)
	}

	// Both busy: B's slow call is in flight (its echo, sent after it, has come back).
	b.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":300}}}`)
	b.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	b.until("10")
	a.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	fa := a.until("7")
	if got := text(fa[len(fa)-1]); !strings.Contains(got, `"action":"cancel"`) {
		t.Errorf("ask while two windows are busy: %q, want cancel", got)
	}
	a.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"summarize","arguments":{"text":"x"}}}`)
	fa = append(fa, a.until("8")...)
	if got := text(fa[len(fa)-1]); !strings.Contains(got, "rejected") {
		t.Errorf("sampling while two windows are busy: %q, want rejected", got)
	}
	fb := b.sync()
	for name, fs := range map[string][]frame{"A": fa, "B": fb} {
		ms := strings.Join(methods(fs), " ")
		if strings.Contains(ms, "elicitation/create") || strings.Contains(ms, "sampling/createMessage") {
			t.Errorf("%s was shown a question no window could be named for: %s", name, ms)
		}
		if !strings.Contains(ms, "notifications/message") {
			t.Errorf("%s was not told why a question was refused: %s", name, ms)
		}
	}
	b.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
}

// TestRoots: a user-scope instance declares no roots and the daemon refuses roots/list; a
// workspace-scope instance answers exactly its folder set.
func TestRoots(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	record := dir + "/record"
	user := attachWin(t, "user", cfg, request(launch("--roots", "--record", record)))
	user.initialize()
	user.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots","arguments":{}}}`)
	if fs := user.until("1"); !strings.Contains(text(fs[len(fs)-1]), "roots/list:") {
		t.Errorf("roots from a user-scope instance: %q, want roots/list refused", text(fs[len(fs)-1]))
	}
	if got := ""; false && !strings.Contains(got, "roots/list:") {
		t.Errorf("roots from a user-scope instance: %q, want roots/list refused", got)
	}
	data, _ := os.ReadFile(record)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, `"method":"initialize"`) && strings.Contains(l, `"roots"`) {
			t.Errorf("a user-scope instance declared roots: %s", l)
		}
	}
	l := launch("--roots")
	l.Scope = ScopeWorkspace
	l.Folders = []Folder{{URI: "file:///work/one", Name: "one"}, {URI: "file:///work/two", Name: "two"}}
	ws := attachWin(t, "ws", cfg, request(l))
	ws.initialize()
	ws.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots","arguments":{}}}`)
	var got struct {
		Roots []Folder `json:"roots"`
	}
	fs := ws.until("1")
	if err := json.Unmarshal([]byte(text(fs[len(fs)-1])), &got); err != nil {
		t.Fatalf("roots: %s", fs[len(fs)-1].raw)
	}
	if fmt.Sprint(got.Roots) != fmt.Sprint(l.Folders) {
		t.Errorf("roots = %v, want %v", got.Roots, l.Folders)
	}
}

// TestProtocolMismatch: a window asking for another MCP revision than the instance speaks is
// refused (it runs the server itself).
func TestProtocolMismatch(t *testing.T) {
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	attachWin(t, "A", cfg, request(launch()))
	req := request(launch())
	req.ProtocolVersion = "2025-06-18"
	if _, err := Attach(context.Background(), cfg, req); err == nil || !strings.Contains(err.Error(), "speaks MCP 2025-11-25") {
		t.Fatalf("Attach = %v, want refused", err)
	}
}
