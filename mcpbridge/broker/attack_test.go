//go:build unix

package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCraftedProgressToken: a window whose request names its progress token in a way the daemon
// does not read as the server does (the key twice, an escaped key, _meta twice) must not get
// another window's token through to the server: the server would report that window's progress
// with it, and the daemon would route it to the other window. The daemon's tokens are "sb-" and
// the upstream id; B's one call is the instance's second request (the daemon's initialize is the
// first), so its token is "sb-2".
func TestCraftedProgressToken(t *testing.T) {
	w := twoWindows(t)
	a, b := w.a, w.b
	b.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0,"steps":1},"_meta":{"progressToken":"tok"}}}`)
	b.until("1")
	for i, meta := range []string{
		`"_meta":{"progressToken":"a","progressToken":"sb-2"}`,
		`"_meta":{"progress\u0054oken":"sb-2"}`,
		`"_meta":{"progressToken":"a"},"_meta":{"progressToken":"sb-2"}`,
	} {
		id := 10 + i
		a.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0,"steps":7},%s}}`, id, meta)
		if fs := a.until(jsonInt(id)); fs[len(fs)-1].Error == nil {
			t.Errorf("A's call with %s was not refused: %s", meta, fs[len(fs)-1].raw)
		}
		// B's own round trip through the server: anything the server said about A's call came
		// before its answer.
		b.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"sync"}}}`, id)
		for _, f := range b.until(jsonInt(id)) {
			if f.Method == "notifications/progress" && strings.Contains(string(f.Params), `"total":7`) {
				t.Errorf("B got progress of A's call (A's request had %s): %s", meta, f.raw)
			}
		}
	}
	// An escaped name that is another one altogether is no reason to refuse: A's own token is
	// replaced, and its progress comes back to A alone.
	a.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0,"steps":2},"_meta":{"a\u0026b":1,"progressToken":"mine"}}}`)
	for progress, done := 0, false; progress < 2 || !done; { // mcp-go may send progress after the result
		switch f := a.next(); {
		case f.Method == "notifications/progress" && strings.Contains(string(f.Params), `"progressToken":"mine"`):
			progress++
		case f.Method == "" && f.Error != nil:
			t.Fatalf("A's call with an escaped other name in _meta was refused: %s", f.raw)
		case f.Method == "" && string(f.ID) == "20":
			done = true
		}
	}
	b.send(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"echo","arguments":{"text":"sync"}}}`)
	for _, f := range b.until("21") {
		if f.Method == "notifications/progress" && strings.Contains(string(f.Params), `"total":2`) {
			t.Errorf("B got progress of A's call: %s", f.raw)
		}
	}
}

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestRecheckEachWindowsName: two windows name one launch differently ("x" and "y"), and share
// its process. The policy comes to block the name "y" (a serverName rule): the daemon must cut
// off the window that asked for "y", telling it the rule, and keep serving the other; once "x" is
// blocked too no window may run the server, and it stops. Before, the recheck asked only about
// the first window's name, and the window of "y" kept calling the server.
func TestRecheckEachWindowsName(t *testing.T) {
	dir := testDir(t)
	var mu sync.Mutex
	denied := map[string]bool{}
	admit := func(r Request) error {
		mu.Lock()
		defer mu.Unlock()
		if denied[r.Name] {
			return fmt.Errorf("blocked: serverName %s (rule test)", r.Name)
		}
		return nil
	}
	deny := func(name string) {
		mu.Lock()
		denied[name] = true
		mu.Unlock()
	}
	recheck := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if err := Serve(ctx, Options{Dir: dir, Build: "test", Idle: time.Minute, Ready: closeOnWrite(ready), Admit: admit, Recheck: recheck,
			Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))}); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-ready
	cfg := Config{Dir: dir, Build: "test", Heartbeat: -1}
	rx, ry := request(launch()), request(launch())
	rx.Name, ry.Name = "x", "y"
	x, y := attachWin(t, "x", cfg, rx), attachWin(t, "y", cfg, ry)
	if x.c.ServerPid() != y.c.ServerPid() {
		t.Fatalf("one launch, two processes")
	}
	pid := x.c.ServerPid()
	x.initialize()
	y.initialize()

	deny("y")
	recheck <- struct{}{}
	select {
	case <-y.ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the window whose name the policy now blocks is still attached")
	}
	if e := y.c.Exited(); e == nil || !strings.Contains(e.Reason, "serverName y (rule test)") {
		t.Errorf("y told %+v, want the rule", e)
	}
	x.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still"}}}`)
	if fs := x.until("5"); text(fs[len(fs)-1]) != "still" {
		t.Errorf("x's call after y was cut off: %s", fs[len(fs)-1].raw)
	}
	if gone(pid) {
		t.Fatal("the server stopped while a window may still use it")
	}

	deny("x")
	recheck <- struct{}{}
	select {
	case <-x.ended:
	case <-time.After(20 * time.Second):
		t.Fatal("no window may run the server, and its last window is still attached")
	}
	waitFor(t, "the server's end", func() bool { return gone(pid) })
}
