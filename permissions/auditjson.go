package permissions

import (
	"encoding/hex"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendAuditLine appends e as one line of the audit log, with the arguments' hash sum as its
// argsSha256, byte for byte what json.Encoder (HTML escaping on) writes for it, newline included.
// The writer encodes every decision: by hand it takes less than half of encoding/json's time and
// allocates nothing (BenchmarkAuditLine). false: e has what only encoding/json can say (a time
// outside UTC or past year 9999, a latency that is not a number); b is then unchanged.
// FuzzAuditLine holds it to encoding/json.
func appendAuditLine(b []byte, e *AuditEntry, sum *[32]byte) ([]byte, bool) {
	if e.Time.Location() != time.UTC || e.Time.Year() < 0 || e.Time.Year() > 9999 ||
		math.IsNaN(e.LatencyMs) || math.IsInf(e.LatencyMs, 0) {
		return b, false
	}
	b = append(b, `{"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","tool":`...)
	b = appendJSONString(b, e.Tool)
	b = appendOmitEmpty(b, `,"server":`, e.Server)
	b = append(b, `,"argsSha256":"`...)
	b = hex.AppendEncode(b, sum[:])
	b = append(b, `","mode":`...)
	b = appendJSONString(b, e.Mode)
	b = append(b, `,"decision":`...)
	b = appendJSONString(b, e.Decision)
	b = append(b, `,"by":`...)
	b = appendJSONString(b, e.By)
	b = appendOmitEmpty(b, `,"answer":`, e.Answer)
	b = appendOmitEmpty(b, `,"entry":`, e.Entry)
	b = appendOmitEmpty(b, `,"file":`, e.File)
	b = appendOmitEmpty(b, `,"turn":`, e.Turn)
	b = appendOmitEmpty(b, `,"reason":`, e.Reason)
	b = append(b, `,"latencyMs":`...)
	b = appendJSONFloat(b, e.LatencyMs)
	return append(b, "}\n"...), true
}

func appendOmitEmpty(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, name...), s)
}

// appendJSONFloat is encoding/json's float64: the shortest 'f' form, 'e' for very small or large
// values (with e-09 written e-9).
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendJSONString is encoding/json's string with HTML escaping: <, > and & as \u003c, \u003e and
// \u0026, U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
