package host

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
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
		// Escapes make a character up to 10 long; markers and the list of keys left out add a bounded tail.
		if n := utf8.RuneCountInString(got); n > 2*limit*len(`\U0010ffff`)+safetext.ArgKeysListed*safetext.ArgKeyLimit*10+400 {
			t.Fatalf("preview has %d runes for limit %d", n, limit)
		}
		for _, r := range got {
			if safetext.Needs(r) {
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

func TestPreviewArguments(t *testing.T) {
	long := strings.Repeat("x", 190)
	for _, tc := range []struct{ name, in, want string }{
		{"empty", ``, `{}`},
		{"null", `null`, `{}`},
		{"compact", `{ "a" : [1, 2] }`, `{"a":[1,2]}`},
		{"rlo", "{\"a\":\"\u202e\"}", `{"a":"\u202e"}`},
		{"not json", "not json\n", `"not json"`},
		{"line separator", "{\"a\":\"\u2028\"}", `{"a":"\u2028"}`},
		{"esc not json", "{\"a\x1b[2J\":1}", `"{\"a\x1b[2J\":1}"`},
		{"rlo in a key", "{\"a\u202e\":1}", `{"a\u202e":1}`},
		// A long first value must not hide a later key.
		{"long value then key", `{"text": "` + long + `", "then": "rm -rf ~"}`,
			`{"text":"` + strings.Repeat("x", 79) + `…(+112 more characters),"then":"rm -rf ~"}`},
		{"keys left out", `{"a":"` + long + `","b":"` + long + `","c":"` + long + `","then":"rm -rf ~","force":true}`,
			`{"a":"` + strings.Repeat("x", 79) + `…(+112 more characters)} (+4 more keys: b, c, then, force; ` + previewWhole + `)`},
		{"array", `[` + strings.Repeat(`1,`, 150) + `1]`, `[` + strings.Repeat(`1,`, 99) + `1…(+103 more characters)`},
	} {
		if got := previewArguments([]byte(tc.in), previewLimit); got != tc.want {
			t.Errorf("%s: preview =\n %q\nwant\n %q", tc.name, got, tc.want)
		}
	}
}
