package policy

import (
	"encoding/json"
	"testing"
)

// FuzzParseJSONC: the parser never panics, always gives a node or an error, and accepts every
// valid JSON text except one with a duplicate member name or nesting deeper than maxDepth (which
// a policy must not have).
func FuzzParseJSONC(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a": [1, 2.5e3, -0, true, false, null, "x\u00e9\n"]}`, `{"a": {"b": {"c": []}}}`,
		"{/* c */ \"a\": 1, // d\n}", `{"a": 1,}`, `[1,]`, `{"a" 1}`, `{"a": 01}`, `"\ud800"`, "\ufeff{}",
		`{"a": 1, "a": 2}`, `{"deniedMcpServers": [{"serverCommand": ["npx", "-y", "x"]}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, _, err := parseJSONC("f", []byte(s))
		if err == nil && n == nil {
			t.Fatalf("no node and no error for %q", s)
		}
		if json.Valid([]byte(s)) && err != nil {
			var v any
			// A valid text may still be refused for a duplicate member or nesting deeper than maxDepth.
			if e, ok := err.(*FileError); !ok || (json.Unmarshal([]byte(s), &v) == nil && !isDupOrDeep(e.Msg)) {
				t.Fatalf("valid JSON %q refused: %v", s, err)
			}
		}
	})
}

func isDupOrDeep(msg string) bool {
	return len(msg) > 9 && (msg[:9] == "duplicate" || msg[:7] == "nesting")
}
