//go:build unix

package broker

import (
	"encoding/json"
	"strings"
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
	dir, _ := serveInProcess(t, time.Minute)
	cfg := Config{Dir: dir, Build: "test"}
	req := request(launch())
	a := attachWin(t, "A", cfg, req)
	b := attachWin(t, "B", cfg, req)
	a.initialize()
	b.initialize()
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
}

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }
