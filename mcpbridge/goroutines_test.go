package mcpbridge

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// serverGoroutines counts the goroutines running code of this package, leaving out the
// connection attempts and the answers to a server's requests (both end on their own, some maybe
// only just after the servers are ready).
func serverGoroutines() (int, string) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "/mcpbridge.") && !strings.Contains(g, "(*Registry).connect(") && !strings.Contains(g, "serveRequest") && !strings.Contains(g, "testing.tRunner") {
			count++
		}
	}
	return count, string(buf)
}

// A ready stdio server holds four goroutines of the host for its life: its stdout reader, its
// stderr reader, the wait for its exit, and the registry's watch (its death and its tool-list
// changes). With 30 servers every goroutine per server is about 0.3 MB of the host's RSS; the
// registry's watch was two goroutines (death, tools) before.
func TestServerGoroutines(t *testing.T) {
	r := newTestRegistry(t, Options{})
	const n = 10
	var cfgs []config.ServerConfig
	for i := range n {
		cfgs = append(cfgs, stdioCfg(fmt.Sprintf("s%02d", i)))
	}
	applyAndWait(t, r, cfgs...)
	got, dump := serverGoroutines()
	t.Logf("%d servers: %d goroutines", n, got)
	if got > 4*n+5 { // the notifier, the spawner, and room for goroutines just ending
		t.Errorf("%d ready stdio servers hold %d goroutines, want at most 4 each:\n%s", n, got, dump)
	}
}
