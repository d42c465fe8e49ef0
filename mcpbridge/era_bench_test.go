package mcpbridge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// BenchmarkEraCall: a call to the same tools of the same (dual-era) stdio server, in 2026-07-28
// and in 2025-11-25, alternating who goes first; reports the median of each and their ratio.
func BenchmarkEraCall(b *testing.B) {
	r := newTestRegistry(b, Options{})
	modern, legacy := stdioCfg("mod"), stdioCfg("leg")
	modern.Protocol, legacy.Protocol = ProtocolModern, ProtocolLegacy
	st := applyAndWait(b, r, modern, legacy)
	if st["mod"].ProtocolVersion != ProtocolModern || st["leg"].ProtocolVersion != ProtocolLegacy {
		b.Fatalf("eras: %+v", st)
	}
	args := json.RawMessage(`{"text":"hello"}`)
	call := func(name string, out *[]time.Duration) {
		t0 := time.Now()
		if res, _ := r.Call(context.Background(), name, args); res.Text != "hello" {
			b.Fatalf("%s: %+v", name, res)
		}
		*out = append(*out, time.Since(t0))
	}
	var m, l []time.Duration
	for range 20 {
		call("mcp__mod__echo", &m)
		call("mcp__leg__echo", &l)
	}
	m, l = m[:0], l[:0]
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			call("mcp__mod__echo", &m)
			call("mcp__leg__echo", &l)
		} else {
			call("mcp__leg__echo", &l)
			call("mcp__mod__echo", &m)
		}
	}
	b.StopTimer()
	mm, lm := median(m), median(l)
	b.ReportMetric(float64(mm.Microseconds()), "modern-µs")
	b.ReportMetric(float64(lm.Microseconds()), "legacy-µs")
	b.ReportMetric(float64(mm)/float64(lm), "ratio")
}

// BenchmarkEraCallFloor: the same two calls as BenchmarkEraCall through Switchboard, and the same
// requests written by hand straight to two more copies of the server (the floor: the server's own
// cost in each era, with the exact _meta Switchboard sends), all four alternating in one run. It
// reports the eras' ratio through Switchboard beside the floors' ratio: where the first is no
// larger than the second, the modern era's extra time is the server's, not the host's.
func BenchmarkEraCallFloor(b *testing.B) {
	r := newTestRegistry(b, Options{})
	modern, legacy := stdioCfg("mod"), stdioCfg("leg")
	modern.Protocol, legacy.Protocol = ProtocolModern, ProtocolLegacy
	if st := applyAndWait(b, r, modern, legacy); st["mod"].ProtocolVersion != ProtocolModern || st["leg"].ProtocolVersion != ProtocolLegacy {
		b.Fatalf("eras: %+v", st)
	}
	r.mu.Lock()
	meta := r.servers["mod"].conn.meta
	r.mu.Unlock()

	type raw struct {
		in  io.WriteCloser
		out *bufio.Reader
		id  int
	}
	start := func(args ...string) *raw {
		cmd := exec.Command(mcptestBin, args...)
		in, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { in.Close(); cmd.Wait() }) // ignore error: the server ends with its stdin
		return &raw{in: in, out: bufio.NewReaderSize(out, 64<<10)}
	}
	roundTrip := func(s *raw, line string) string {
		if _, err := io.WriteString(s.in, line+"\n"); err != nil {
			b.Fatal(err)
		}
		for {
			got, err := s.out.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if strings.Contains(got, `"id":`) { // skip notifications
				return got
			}
		}
	}
	rawLeg, rawMod := start(), start()
	roundTrip(rawLeg, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}`)
	if _, err := io.WriteString(rawLeg.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	rawCall := func(s *raw, meta json.RawMessage) {
		s.id++
		params := `{"name":"echo","arguments":{"text":"hello"}}`
		if meta != nil {
			params = `{"_meta":` + string(meta) + `,"name":"echo","arguments":{"text":"hello"}}`
		}
		if got := roundTrip(s, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, s.id, params)); !strings.Contains(got, `"hello"`) {
			b.Fatalf("floor call: %s", got)
		}
	}
	args := json.RawMessage(`{"text":"hello"}`)
	var m, l, fm, fl []time.Duration
	timed := func(out *[]time.Duration, f func()) {
		t0 := time.Now()
		f()
		*out = append(*out, time.Since(t0))
	}
	steps := []func(){
		func() {
			timed(&m, func() {
				if res, _ := r.Call(context.Background(), "mcp__mod__echo", args); res.Text != "hello" {
					b.Fatalf("modern: %+v", res)
				}
			})
		},
		func() {
			timed(&l, func() {
				if res, _ := r.Call(context.Background(), "mcp__leg__echo", args); res.Text != "hello" {
					b.Fatalf("legacy: %+v", res)
				}
			})
		},
		func() { timed(&fm, func() { rawCall(rawMod, meta) }) },
		func() { timed(&fl, func() { rawCall(rawLeg, nil) }) },
	}
	for range 20 {
		for _, f := range steps {
			f()
		}
	}
	m, l, fm, fl = m[:0], l[:0], fm[:0], fl[:0]
	b.ResetTimer()
	for i := range b.N {
		for j := range steps {
			steps[(i+j)%len(steps)]()
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(median(m).Microseconds()), "modern-µs")
	b.ReportMetric(float64(median(l).Microseconds()), "legacy-µs")
	b.ReportMetric(float64(median(fm).Microseconds()), "floor-modern-µs")
	b.ReportMetric(float64(median(fl).Microseconds()), "floor-legacy-µs")
	b.ReportMetric(float64(median(m))/float64(median(l)), "ratio")
	b.ReportMetric(float64(median(fm))/float64(median(fl)), "floor-ratio")
}

// BenchmarkLegacyFirstCall: start, then first call, of a legacy stdio server that ignores
// server/discover, in auto (era logic) and with "protocol": "2025-11-25" (the path without it),
// alternating; reports the medians and their ratio.
func BenchmarkLegacyFirstCall(b *testing.B) {
	args := json.RawMessage(`{"text":"hello"}`)
	first := func(p string) time.Duration {
		r := NewRegistry(Options{})
		defer r.Close()
		cfg := stdioCfg("l", "--ignore-discover")
		cfg.Protocol = p
		t0 := time.Now()
		applyAndWait(b, r, cfg)
		if res, _ := r.Call(context.Background(), "mcp__l__echo", args); res.Text != "hello" {
			b.Fatalf("%s: %+v", p, res)
		}
		return time.Since(t0)
	}
	var auto, fixed []time.Duration
	for i := range b.N {
		if i%2 == 0 {
			auto = append(auto, first(ProtocolAuto))
			fixed = append(fixed, first(ProtocolLegacy))
		} else {
			fixed = append(fixed, first(ProtocolLegacy))
			auto = append(auto, first(ProtocolAuto))
		}
	}
	am, fm := median(auto), median(fixed)
	b.ReportMetric(float64(am.Microseconds()), "auto-µs")
	b.ReportMetric(float64(fm.Microseconds()), "fixed-µs")
	b.ReportMetric(float64(am)/float64(fm), "ratio")
}
