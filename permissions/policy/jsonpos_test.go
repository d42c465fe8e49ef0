package policy

import (
	"testing"
)

// TestParseErrors: every error says file:line:column of the offending byte.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "f.json:1:1: empty file: want a JSON object"},
		{"{\n  \"a\": 1,\n  \"a\": 2\n}", `f.json:3:3: duplicate member "a"`},
		{"{\n  \"a\": tru\n}", "f.json:2:8: want a JSON value (object, array, string, number, true, false or null)"},
		{"{\"a\": 1} x", "f.json:1:10: unexpected text after the JSON value"},
		{"{ /* open", "f.json:1:3: comment is not closed"},
		{"{\"a\": \"x\n\"}", "f.json:1:7: string is not closed on its line"},
		{"not json at all", "f.json:1:1: want a JSON value (object, array, string, number, true, false or null)"},
		{"[1 2]", "f.json:1:4: want , or ] after an element"},
	} {
		_, _, err := parseJSONC("f.json", []byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("parse %q: %v, want %s", tc.in, err, tc.want)
		}
	}
}

// TestParsePointers: JSONC (comments, trailing commas) parses, and nodes know their pointers.
func TestParsePointers(t *testing.T) {
	n, _, err := parseJSONC("f", []byte("\uFEFF{\n // c\n \"a/b\": [1, {\"~x\": true,},], /* c */\n}"))
	if err != nil {
		t.Fatal(err)
	}
	inner := n.get("a/b").vals[1].get("~x")
	if inner.ptr != "/a~1b/1/~0x" || !inner.b {
		t.Errorf("pointer %q", inner.ptr)
	}
	r := &Rule{Pointer: "/permissions/deny/2"}
	if r.Key() != "permissions.deny[2]" {
		t.Errorf("Key = %s", r.Key())
	}
}
