package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestProtocolConfig: "protocol" is validated with a *ConfigError naming file, server and key.
func TestProtocolConfig(t *testing.T) {
	for _, tc := range []struct{ entry, want string }{
		{`{"command":"x","protocol":"2026-07-28"}`, ""},
		{`{"command":"x","protocol":"auto"}`, ""},
		{`{"url":"http://h/mcp","protocol":"2025-11-25"}`, ""},
		{`{"command":"x","protocol":"2027-01-01"}`, `f.json: server "s": protocol: must be "auto", "2025-11-25" or "2026-07-28", not "2027-01-01"`},
		{`{"type":"sse","url":"http://h/sse","protocol":"2026-07-28"}`, `f.json: server "s": protocol: 2026-07-28 has no SSE transport`},
		{`{"command":"x","protocol":7}`, `f.json: server "s": protocol: must be a string`},
	} {
		l := loader{getenv: func(string) (string, bool) { return "", true }}
		_, errs := l.parseEntry("f.json", "", "s", json.RawMessage(tc.entry))
		var got string
		for _, e := range errs {
			if _, ok := e.(*ConfigError); ok && strings.Contains(e.Error(), "protocol") {
				got = e.Error()
			}
		}
		if tc.want == "" && len(errs) > 0 || tc.want != "" && !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: errors %v, want %q", tc.entry, errs, tc.want)
		}
	}
}
