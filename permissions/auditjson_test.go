package permissions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// encodingJSONLine is the audit line as encoding/json writes it (the writer's fallback, and what
// the log held before appendAuditLine).
func encodingJSONLine(t testing.TB, e AuditEntry, sum [32]byte) []byte {
	e.ArgsSha256 = hex.EncodeToString(sum[:])
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(&e); err != nil {
		return nil
	}
	return buf.Bytes()
}

// FuzzAuditLine holds the hand encoder to encoding/json, byte for byte: whatever a server, a tool
// name or a reason puts in a field, the audit log's lines are what they were.
func FuzzAuditLine(f *testing.F) {
	f.Add(int64(1796029200), int64(123456789), "mcp__gh__search", "gh", "single-confirm", "allow", "user", "once",
		"mcp__gh__*", "/home/u/.config/switchboard/allow_tool", "t1", "allowed by allowlist entry mcp__gh__*", 1.25, []byte(`{"q":"x"}`))
	f.Add(int64(0), int64(0), "", "", "", "", "", "", "", "", "", "", 0.0, []byte(nil))
	f.Add(int64(-62135596800), int64(999999999), "<b>&amp;</b>", "\u2028\u2029", "\x00\x1f\x7f", "\"\\", "\b\f\n\r\t",
		"\xff\xfe", "a\xe2\x80", "\u202e\u200b", "é😀", "\ufffd", 1e-7, []byte("x"))
	f.Add(int64(253402300799), int64(1), "x", "y", "z", "deny", "mode", "", "", "", "", "", 1e21, []byte("{}"))
	f.Add(int64(253402300800), int64(0), "x", "", "", "", "", "", "", "", "", "", 0.000001, []byte("{}"))
	f.Add(int64(5), int64(0), "x", "", "", "", "", "", "", "", "", "", math.Inf(1), []byte("{}"))
	f.Fuzz(func(t *testing.T, sec, nsec int64, tool, server, mode, decision, by, answer, entry, file, turn, reason string, latency float64, args []byte) {
		e := AuditEntry{Time: time.Unix(sec, nsec).UTC(), Tool: tool, Server: server, Mode: mode, Decision: decision, By: by,
			Answer: answer, Entry: entry, File: file, Turn: turn, Reason: reason, LatencyMs: latency}
		sum := sha256.Sum256(args)
		want := encodingJSONLine(t, e, sum)
		got, ok := appendAuditLine([]byte("prefix"), &e, &sum)
		if !ok {
			if want != nil && e.Time.Year() >= 0 && e.Time.Year() <= 9999 && !math.IsNaN(latency) && !math.IsInf(latency, 0) {
				t.Fatalf("refused an entry encoding/json writes: %s", want)
			}
			if string(got) != "prefix" {
				t.Fatalf("refused, but appended %q", got)
			}
			return
		}
		if want == nil {
			t.Fatalf("wrote %q for an entry encoding/json refuses", got)
		}
		if !bytes.Equal(got[len("prefix"):], want) {
			t.Fatalf("hand:\n%s\nencoding/json:\n%s", got[len("prefix"):], want)
		}
	})
}

// An entry in another zone goes to encoding/json, which writes its offset.
func TestAuditLineOtherZone(t *testing.T) {
	e := AuditEntry{Time: time.Date(2026, 12, 2, 9, 0, 0, 0, time.FixedZone("x", 3600)), Tool: "t"}
	var sum [32]byte
	if _, ok := appendAuditLine(nil, &e, &sum); ok {
		t.Error("took a time outside UTC")
	}
}

func BenchmarkAuditLine(b *testing.B) {
	e := AuditEntry{Time: time.Date(2026, 12, 2, 9, 0, 0, 123456789, time.UTC), Tool: "mcp__everything__echo", Server: "everything",
		Mode: "single-confirm", Decision: "allow", By: "allowlist", Entry: "mcp__everything__*",
		File: "/home/user/.config/switchboard/allow_tool", Reason: "allowed by allowlist entry mcp__everything__* (in /home/user/.config/switchboard/allow_tool)", LatencyMs: 0.012}
	sum := sha256.Sum256([]byte(`{"message":"hello"}`))
	b.Run("hand", func(b *testing.B) {
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = appendAuditLine(buf[:0], &e, &sum)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			e.ArgsSha256 = hex.EncodeToString(sum[:])
			_ = enc.Encode(&e)
		}
	})
}
