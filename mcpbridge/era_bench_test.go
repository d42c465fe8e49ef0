package mcpbridge

import (
	"context"
	"encoding/json"
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
