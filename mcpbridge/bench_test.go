package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// The benchmarks measure each ratio in one run, interleaving the two sides so that noise from
// a shared machine hits both alike. Run:
//
//	go test -run '^$' -bench . -benchtime 200x ./mcpbridge/

// bareClient starts mcptest under mcp-go's own stdio client.
func bareClient(b *testing.B, args ...string) *client.Client {
	b.Helper()
	c, err := client.NewStdioMCPClient(mcptestBin, nil, args...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = protocolVersion
	req.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	return c
}

func bareCall(b *testing.B, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkCallOverhead: Registry.Call vs a bare mcp-go client call on the same server binary
// (echo over stdio), interleaved. Goal: ratio <= 1.10.
func BenchmarkCallOverhead(b *testing.B) {
	r := newTestRegistry(b, Options{})
	applyAndWait(b, r, stdioCfg("bench"))
	bare := bareClient(b)
	args := json.RawMessage(`{"text":"hello"}`)
	bargs := map[string]any{"text": "hello"}
	for range 20 { // warm up both
		r.Call(context.Background(), "mcp__bench__echo", args)
		bareCall(b, bare, "echo", bargs)
	}
	reg := make([]time.Duration, 0, b.N)
	raw := make([]time.Duration, 0, b.N)
	viaRegistry := func() {
		t0 := time.Now()
		if res, _ := r.Call(context.Background(), "mcp__bench__echo", args); res.Text != "hello" {
			b.Fatalf("registry: %+v", res)
		}
		reg = append(reg, time.Since(t0))
	}
	viaBare := func() {
		t0 := time.Now()
		bareCall(b, bare, "echo", bargs)
		raw = append(raw, time.Since(t0))
	}
	b.ResetTimer()
	for i := range b.N { // alternate who goes first
		if i%2 == 0 {
			viaRegistry()
			viaBare()
		} else {
			viaBare()
			viaRegistry()
		}
	}
	// Medians: a shared machine adds outliers that would swamp a mean.
	mr, mb := median(reg), median(raw)
	b.ReportMetric(float64(mr.Nanoseconds()), "registry-median-ns")
	b.ReportMetric(float64(mb.Nanoseconds()), "bare-median-ns")
	b.ReportMetric(float64(mr)/float64(mb), "ratio")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// startupTime is the time from Apply until n mcptest servers are ready.
func startupTime(b *testing.B, n int, args ...string) time.Duration {
	r := NewRegistry(Options{})
	defer r.Close()
	cfgs := make([]config.ServerConfig, n)
	for i := range cfgs {
		cfgs[i] = stdioCfg(fmt.Sprintf("s%d", i), args...)
	}
	t0 := time.Now()
	r.Apply(context.Background(), cfgs)
	if err := r.WaitIdle(context.Background()); err != nil {
		b.Fatal(err)
	}
	d := time.Since(t0)
	for _, s := range r.Servers() {
		if s.State != StateReady {
			b.Fatalf("%s: %+v", s.Name, s)
		}
	}
	return d
}

// BenchmarkStartup30vs1: time until 30 subprocess servers are ready vs 1. "delay" servers take
// 500 ms to start (like npx fetching a package): the ratio shows whether startup is parallel.
// "instant" servers are CPU-bound process starts, which 2 cores cannot run 30 of at once.
func BenchmarkStartup30vs1(b *testing.B) {
	for _, bc := range []struct {
		name string
		args []string
	}{{"delay500ms", []string{"--startup-delay", "500ms"}}, {"instant", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			var one, thirty time.Duration
			for range b.N {
				one += startupTime(b, 1, bc.args...)
				thirty += startupTime(b, 30, bc.args...)
			}
			b.ReportMetric(float64(one.Milliseconds())/float64(b.N), "1-server-ms")
			b.ReportMetric(float64(thirty.Milliseconds())/float64(b.N), "30-servers-ms")
			b.ReportMetric(float64(thirty)/float64(one), "ratio")
		})
	}
}

// peakHeap runs f while sampling the heap (live and not yet swept objects) and returns the
// peak above the level before f.
func peakHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			default:
				time.Sleep(100 * time.Microsecond)
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	if peak.Load() < base {
		return 0
	}
	return peak.Load() - base
}

// BenchmarkBigResultMemory: peak heap growth while receiving a 50 MB text result over stdio,
// Registry.Call vs mcp-go's stdio client, as a multiple of the result size. Goal: < 3x.
func BenchmarkBigResultMemory(b *testing.B) {
	const size = 50_000_000
	r := newTestRegistry(b, Options{})
	applyAndWait(b, r, stdioCfg("big"))
	bare := bareClient(b)
	args := json.RawMessage(fmt.Sprintf(`{"n":%d}`, size))
	var regPeak, barePeak uint64
	var regTime, bareTime time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		regPeak = max(regPeak, peakHeap(func() {
			res, _ := r.Call(context.Background(), "mcp__big__big", args)
			if res.Bytes != size || !res.Truncated {
				b.Fatalf("registry: %d bytes", res.Bytes)
			}
		}))
		t1 := time.Now()
		barePeak = max(barePeak, peakHeap(func() {
			res := bareCall(b, bare, "big", map[string]any{"n": size})
			if len(res.Content) != 1 {
				b.Fatal("bare: no content")
			}
		}))
		bareTime += time.Since(t1)
		regTime += t1.Sub(t0)
	}
	b.ReportMetric(float64(regPeak)/size, "registry-peak-x")
	b.ReportMetric(float64(barePeak)/size, "bare-peak-x")
	b.ReportMetric(float64(regTime.Milliseconds())/float64(b.N), "registry-ms")
	b.ReportMetric(float64(bareTime.Milliseconds())/float64(b.N), "bare-ms")
}

// BenchmarkConnectLegacyServer: connecting to a legacy stdio server that ignores server/discover,
// with the registry (pinned handshake) vs mcp-go's default client (probe first, 5 s timeout).
func BenchmarkConnectLegacyServer(b *testing.B) {
	var reg, raw time.Duration
	for range b.N {
		reg += startupTime(b, 1, "--ignore-discover")
		t0 := time.Now()
		c, err := client.NewStdioMCPClient(mcptestBin, nil, "--ignore-discover")
		if err != nil {
			b.Fatal(err)
		}
		var req mcp.InitializeRequest
		req.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
		if _, err := c.Initialize(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		raw += time.Since(t0)
		c.Close()
	}
	b.ReportMetric(float64(reg.Milliseconds())/float64(b.N), "registry-ms")
	b.ReportMetric(float64(raw.Milliseconds())/float64(b.N), "mcp-go-default-ms")
}

// BenchmarkCallToolCount: Registry.Call (echo over stdio) with 10, 100 and 1,000 tools on the
// server. The tool is found in the published snapshot, so time and allocations per call should
// not depend on the count.
func BenchmarkCallToolCount(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := newTestRegistry(b, Options{})
			applyAndWait(b, r, stdioCfg("bench", "--tools", fmt.Sprint(n)))
			if got := r.Snapshot().Len(); got < n {
				b.Fatalf("%d tools registered, want at least %d", got, n)
			}
			args := json.RawMessage(`{"text":"hello"}`)
			b.ReportAllocs()
			for b.Loop() {
				if res, _ := r.Call(context.Background(), "mcp__bench__echo", args); res.Text != "hello" {
					b.Fatalf("call: %+v", res)
				}
			}
		})
	}
}

// BenchmarkCallParams is the hand-written tools/call params of one call (every call's way).
func BenchmarkCallParams(b *testing.B) {
	args := json.RawMessage(`{"text": "hello, world", "n": [1, 2, 3], "opts": {"deep": true}}`)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := appendCallParams(buf[:0], "echo", args); !ok {
			b.Fatal("not JSON")
		}
	}
}
