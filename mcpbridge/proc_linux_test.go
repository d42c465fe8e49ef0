package mcpbridge

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// osThreads is this process's thread count (/proc/self/status).
func osThreads(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line in /proc/self/status")
	return 0
}

// Waiting for a stdio server's exit holds no OS thread: 16 running servers did hold 16 threads
// blocked in wait4 (each with its stacks), now their exits are awaited in the runtime's poller.
// A server that exits is still seen at once (the faults tests).
func TestServersHoldNoWaitThreads(t *testing.T) {
	r := newTestRegistry(t, Options{})
	before := osThreads(t)
	const n = 16
	var cfgs []config.ServerConfig
	for i := range n {
		cfgs = append(cfgs, stdioCfg(fmt.Sprintf("s%02d", i)))
	}
	applyAndWait(t, r, cfgs...)
	grown := osThreads(t) - before
	t.Logf("%d running servers: %d more OS threads", n, grown)
	if grown >= n {
		t.Errorf("%d running servers: %d more OS threads; want their exits awaited without a thread each", n, grown)
	}
}
