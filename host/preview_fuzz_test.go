package host

import (
	"encoding/json"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzPreview: whatever a model or a caller puts in a tool call's arguments, the approval prompt
// shows one bounded line of valid UTF-8 with nothing that can hide text or fake a line break.
func FuzzPreview(f *testing.F) {
	for _, s := range []string{
		`{"text":"hi"}`, `{"path":"/etc/passwd","mode":"w"}`, `null`, ``, `not json`,
		`{"a":"line\nbreak"}`, "{\"a\":\"\u202eevil\u202c\"}", "\xff\xfe", `[1,2,3]`,
		`{"deep":{"deeper":{"deepest":[true,false,null,1.5e300]}}}`, "\"\u2028\u2029\"",
	} {
		f.Add([]byte(s), 200)
	}
	f.Fuzz(func(t *testing.T, raw []byte, limit int) {
		limit = 1 + abs(limit)%400
		got := previewArguments(json.RawMessage(raw), limit)
		if !utf8.ValidString(got) {
			t.Fatalf("preview is not valid UTF-8: %q", got)
		}
		if n := utf8.RuneCountInString(got); n > limit*len(`\U0010ffff`)+1 {
			t.Fatalf("preview has %d runes for limit %d", n, limit)
		}
		for _, r := range got {
			if unicode.IsControl(r) || isBidiFormat(r) || r == '\u2028' || r == '\u2029' {
				t.Fatalf("preview keeps %U: %q", r, got)
			}
		}
		if again := previewArguments(json.RawMessage(raw), limit); again != got {
			t.Fatalf("preview is not deterministic: %q then %q", got, again)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
