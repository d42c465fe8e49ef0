package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type member struct{ Name, Value string }

func members(data string) ([]member, bool) {
	var got []member
	ok := Members([]byte(data), func(name, value []byte) bool {
		got = append(got, member{string(name), string(value)})
		return true
	})
	return got, ok
}

func TestMembers(t *testing.T) {
	got, ok := members(` { "a" : 1 , "b\"c":[ {"x":[]}, "s" ,null,true,false,-0.5e+3] ,"d":{} } ` + "\n")
	want := []member{{"a", "1"}, {`b\"c`, `[ {"x":[]}, "s" ,null,true,false,-0.5e+3]`}, {"d", "{}"}}
	if !ok || !cmp.Equal(got, want) {
		t.Errorf("Members = %v, %v; want %v, true", got, ok, want)
	}
	if got, ok := members(`{}`); !ok || len(got) != 0 {
		t.Errorf("Members({}) = %v, %v", got, ok)
	}
}

// TestMembersRejects: everything here is rejected by encoding/json too, so a fast path that
// took any of it would let through what the slow path refuses.
func TestMembersRejects(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{"a":1}{}`, `{"a":1} x`,
		`{a:1}`, `{'a':1}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":+1}`,
		`{"a":tru}`, `{"a":nul}`, `{"a":True}`, `{"a":"x` + "\x01" + `"}`, `{"a":"\x"}`, `{"a":"\u12"}`,
		`{"a":"\u12g4"}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":{"b"}}`, `{"a":{"b":1,}}`, `{"a":[1 2]}`,
		`{"a":{"b":1 "c":2}}`, `{"a":[}`, `{"a":{]}`, `{"a":"unterminated}`, `{"a` + "\x00" + `":1}`,
		"{\"a\":1}\x00", `{"a":NaN}`, `{"a":Infinity}`, "\ufeff{}",
	} {
		if _, ok := members(in); ok {
			t.Errorf("Members(%q) = true", in)
		}
		if json.Valid([]byte(in)) && strings.HasPrefix(strings.TrimSpace(in), "{") {
			t.Errorf("test case %q is valid JSON: fix the test", in)
		}
	}
}

func TestMembersStops(t *testing.T) {
	n := 0
	ok := Members([]byte(`{"a":1,"b":2,"c":3}`), func(name, _ []byte) bool { n++; return string(name) != "b" })
	if ok || n != 2 {
		t.Errorf("Members stopped at b: ok %v after %d members, want false after 2", ok, n)
	}
}

func TestTooDeep(t *testing.T) {
	deep := `{"a":` + strings.Repeat("[", maxDepth+1) + "1" + strings.Repeat("]", maxDepth+1) + `}`
	if !json.Valid([]byte(deep)) {
		t.Fatal("deep input is not valid JSON")
	}
	if _, ok := members(deep); ok {
		t.Error("Members followed a nesting deeper than maxDepth: it is left to encoding/json")
	}
	ok := `{"a":` + strings.Repeat("[", maxDepth) + "1" + strings.Repeat("]", maxDepth) + `}`
	if _, got := members(ok); !got {
		t.Error("Members refused a nesting of maxDepth")
	}
}

func TestElements(t *testing.T) {
	var got []string
	ok := Elements([]byte(` [1, {"a":[2]} ,"x"] `), func(v []byte) bool { got = append(got, string(v)); return true })
	if want := []string{"1", `{"a":[2]}`, `"x"`}; !ok || !cmp.Equal(got, want) {
		t.Errorf("Elements = %q, %v; want %q", got, ok, want)
	}
	for _, in := range []string{`[1,]`, `[`, `{}`, `[1]x`} {
		if Elements([]byte(in), func([]byte) bool { return true }) {
			t.Errorf("Elements(%q) = true", in)
		}
	}
}

func TestString(t *testing.T) {
	for in, want := range map[string]string{`"abc"`: "abc", `""`: "", `"é ✓"`: "é ✓"} {
		if got, ok := String([]byte(in)); !ok || got != want {
			t.Errorf("String(%s) = %q, %v", in, got, ok)
		}
	}
	// An escape or invalid UTF-8 is decoded by encoding/json (which turns bad bytes into U+FFFD).
	for _, in := range []string{`"a\nb"`, `"\u0041"`, "\"\xff\"", `abc`, `"`, `1`} {
		if got, ok := String([]byte(in)); ok {
			t.Errorf("String(%q) = %q, true; want false", in, got)
		}
	}
}

func TestName(t *testing.T) {
	for _, tc := range []struct {
		name, want   string
		is, isUnsure bool
	}{
		{"id", "id", true, false},
		{"ID", "id", false, true},
		{"Id", "id", false, true},
		{`i\u0064`, "id", false, true},
		{"idx", "id", false, false},
		{"text", "text", true, false},
		{"te\u212At", "text", false, false},                  // no fold to 't' for U+212A (it folds to k)
		{"wor\u212ADoneToken", "workDoneToken", false, true}, // Kelvin sign folds to k, as encoding/json does
		{"i\u017FError", "isError", false, true},             // long s folds to s
	} {
		is, unsure := Name([]byte(tc.name), tc.want)
		if is != tc.is || unsure != tc.isUnsure {
			t.Errorf("Name(%q, %q) = %v, %v; want %v, %v", tc.name, tc.want, is, unsure, tc.is, tc.isUnsure)
		}
	}
}

// FuzzAgreesWithEncodingJSON: whatever Members accepts, encoding/json accepts, split the same way
// (the members put back together compact to the same bytes as the input), and the other way round
// for any valid object within maxDepth. String agrees with encoding/json's decoding when it says ok.
func FuzzAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":"sb-1","result":{"content":[{"type":"text","text":"Echo: hi"}]}}`,
		`{"command":"switchboard.callTool","arguments":[{"name":"mcp__t__echo","arguments":{"text":"x"}}]}`,
		`{"a":"\u00e9\n","b":[1,2.5e-3,-0,true,false,null],"c":{"d":{}}}`,
		"{\"a\":\"\xff\xfe\"}", `{"a":1}`, `{ }`, `[]`, `{"a":[[[[[]]]]]}`, `{"a":"\ud800"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var got []member
		ok := Members([]byte(in), func(name, value []byte) bool {
			got = append(got, member{string(name), string(value)})
			return true
		})
		valid := json.Valid([]byte(in))
		if v := Valid([]byte(in)); v != valid && (v || depth(in) <= maxDepth) {
			t.Fatalf("Valid(%q) = %v, json.Valid = %v", in, v, valid)
		}
		var back, want string
		if err := json.Unmarshal(AppendString(nil, in), &back); err != nil {
			t.Fatalf("AppendString(%q) is not a JSON string: %v", in, err)
		}
		old, _ := json.Marshal(in)
		if err := json.Unmarshal(old, &want); err != nil || back != want {
			t.Fatalf("AppendString(%q) decodes to %q; encoding/json's to %q", in, back, want)
		}
		isObject := strings.HasPrefix(strings.TrimLeft(in, " \t\r\n"), "{")
		if ok && !(valid && isObject) {
			t.Fatalf("Members accepted %q, which encoding/json refuses as an object", in)
		}
		if !ok && valid && isObject && depth(in) <= maxDepth {
			t.Fatalf("Members refused %q, a valid object", in)
		}
		if !ok {
			return
		}
		var rebuilt bytes.Buffer
		rebuilt.WriteByte('{')
		for i, m := range got {
			if i > 0 {
				rebuilt.WriteByte(',')
			}
			rebuilt.WriteString(`"` + m.Name + `":` + m.Value)
			if !json.Valid([]byte(m.Value)) || m.Value != strings.TrimSpace(m.Value) {
				t.Fatalf("member %q of %q has value %q", m.Name, in, m.Value)
			}
			if s, sok := String([]byte(m.Value)); sok {
				var want string
				if err := json.Unmarshal([]byte(m.Value), &want); err != nil || s != want {
					t.Fatalf("String(%q) = %q; encoding/json: %q, %v", m.Value, s, want, err)
				}
			}
		}
		rebuilt.WriteByte('}')
		var a, b bytes.Buffer
		if json.Compact(&a, []byte(in)) != nil || json.Compact(&b, rebuilt.Bytes()) != nil || a.String() != b.String() {
			t.Fatalf("members of %q put back together are %q", in, rebuilt.String())
		}
	})
}

// depth is the deepest nesting of containers in valid JSON (brackets inside strings skipped).
func depth(s string) int {
	d, deepest, inStr := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

func TestSetString(t *testing.T) {
	s := "before"
	if !SetString(&s, []byte("null")) || s != "before" {
		t.Errorf("null: %v, %q; want true and the value unchanged, as encoding/json", true, s)
	}
	if !SetString(&s, []byte(`"x"`)) || s != "x" {
		t.Errorf(`"x": got %q`, s)
	}
	for _, in := range []string{`"a\u0062"`, `1`, `true`, "\"\xff\""} {
		s = "kept"
		if SetString(&s, []byte(in)) || s != "kept" {
			t.Errorf("SetString(%q) = true or changed the value (%q): it is encoding/json's to decode", in, s)
		}
	}
}

func TestAmbiguousNames(t *testing.T) {
	many := func(extra string) string { // 20 members: past the pairwise check, into the map
		var b strings.Builder
		b.WriteString(`{`)
		for i := range 20 {
			fmt.Fprintf(&b, `"m%d":%d,`, i, i)
		}
		return b.String() + extra + `}`
	}
	for in, want := range map[string]bool{
		`{"text":"a","TEXT":"b"}`:              true,
		`{"a":{"b":[{"Key":1,"\u212Aey":2}]}}`: true, // the Kelvin sign folds to k
		`{"text":"a","te\u0078T":"b"}`:         true, // escapes count as what they say
		`{"text":"a","text":"b"}`:              false,
		`{"text":"a","texts":"b","t":{"u":1}}`: false,
		`[1,"x",{"a":1},[{"b":2,"c":3}]]`:      false,
		`"TEXT"`:                               false,
		many(`"z":1`):                          false,
		many(`"M3":1`):                         true,
		`{"a":1`:                               true, // not JSON: not walked, so not trusted
		``:                                     true,
	} {
		if got := AmbiguousNames([]byte(in)); got != want {
			t.Errorf("AmbiguousNames(%s) = %v, want %v", in, got, want)
		}
	}
}
