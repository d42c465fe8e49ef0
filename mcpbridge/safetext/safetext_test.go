package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcödé, 日本語", "plain text, ünïcödé, 日本語"},
		{"clear\x1b[2Jscreen", `clear\x1b[2Jscreen`},
		{"osc52\x1b]52;c;cm0gLXJmIH4=\x07end", `osc52\x1b]52;c;cm0gLXJmIH4=\x07end`},
		{"bel\a cr\r lf\n tab\t del\x7f nul\x00", `bel\x07 cr\r lf\n tab\t del\x7f nul\x00`},
		{"c1 \u0085 \u009b31m", `c1 \u0085 \u009b31m`},
		{"rlo \u202eexe.txt", `rlo \u202eexe.txt`},
		{"bidi \u061c\u200e\u200f\u202a\u2066\u2069", `bidi \u061c\u200e\u200f\u202a\u2066\u2069`},
		{"zw a\u200bb\u200cc\u200dd\u2060e\u2064f\ufeffg\u00adh\u180ei", `zw a\u200bb\u200cc\u200dd\u2060e\u2064f\ufeffg\u00adh\u180ei`},
		{"tag \U000E0041", `tag \U000e0041`},
		{"sep \u2028\u2029", `sep \u2028\u2029`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"backslash \\ stays", `backslash \ stays`},
	} {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBlock(t *testing.T) {
	in := "line 1\n\tindented\r\nevil\x1b[2J\u202e"
	want := "line 1\n\tindented\\r\nevil\\x1b[2J\\u202e"
	if got := Block(in); got != want {
		t.Errorf("Block = %q, want %q", got, want)
	}
}

func TestBounded(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  string
		cut   int
	}{
		{"short", 10, "short", 0},
		{"exactly10!", 10, "exactly10!", 0},
		{"日本語のテキスト", 3, "日本語…(+5 more characters)", 5},
		{"ab\x1bcd", 3, `ab\x1b…(+2 more characters)`, 2},
		{"abcd", 3, "abc…(+1 more character)", 1},
		{"abc", 0, "…(+3 more characters)", 3},
	} {
		if got := Bounded(tc.in, tc.limit); got != tc.want {
			t.Errorf("Bounded(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
		if _, cut := Cut(tc.in, tc.limit); cut != tc.cut {
			t.Errorf("Cut(%q, %d) cut %d, want %d", tc.in, tc.limit, cut, tc.cut)
		}
	}
}

// hidden reports a rune that must never reach the output (in a block, "\n" and "\t" may).
func hidden(out string, block bool) (rune, bool) {
	for _, r := range out {
		if Needs(r) && !(block && (r == '\n' || r == '\t')) {
			return r, true
		}
	}
	return 0, false
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a", "\x1b[2J", "\x1b]52;c;AAAA\x07", "\u202e", "a\u200bb", "\xff", "x\r\ny\tz", "\U000E0041", "\\x1b"} {
		f.Add(s, s+"\u200b")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, block := range []bool{false, true} {
			out := escape(a, block)
			if !utf8.ValidString(out) {
				t.Fatalf("escape(%q, %v) is not valid UTF-8: %q", a, block, out)
			}
			if r, bad := hidden(out, block); bad {
				t.Fatalf("escape(%q, %v) = %q still holds %U", a, block, out, r)
			}
		}
		// Two different texts look different, unless one spells an escape with a backslash.
		if a != b && !strings.Contains(a, `\`) && !strings.Contains(b, `\`) {
			if Line(a) == Line(b) {
				t.Fatalf("Line(%q) == Line(%q) == %q", a, b, Line(a))
			}
			if Block(a) == Block(b) {
				t.Fatalf("Block(%q) == Block(%q) == %q", a, b, Block(a))
			}
		}
		head, cut := Cut(a, 7)
		if cut < 0 || cut > 0 && !strings.HasPrefix(Line(a), head) {
			t.Fatalf("Cut(%q, 7) = %q, %d: not a prefix of Line", a, head, cut)
		}
		if n := utf8.RuneCountInString(a); cut != max(0, n-7) {
			t.Fatalf("Cut(%q, 7) cut %d of %d characters", a, cut, n)
		}
	})
}

func TestNoLinks(t *testing.T) {
	for in, want := range map[string]string{
		"[Fix](command:x?%7B%7D)": `[Fix]\(command:x?%7B%7D)`,
		"a ] (b) [c]d":            "a ] (b) [c]d",
		"[a](b)[c](d)":            `[a]\(b)[c]\(d)`,
	} {
		if got := NoLinks(in); got != want {
			t.Errorf("NoLinks(%q) = %q, want %q", in, got, want)
		}
	}
}

// Characters that show as nothing but are not format characters (Unicode Mn): variation
// selectors, Mongolian free variation selectors, Khmer inherent vowels. A run of variation
// selectors after one letter carries a hidden payload (a byte per selector) that a pin review
// would show as two identical descriptions. One emoji presentation selector
// right after a symbol (U+2764 U+FE0F) is what emoji are written with, and stays as it is; after
// a letter or a digit it carries a hidden bit, and is escaped.
func TestInvisibleMarks(t *testing.T) {
	hidden := "Reads a file." + string([]rune{0xfe01, 0xfe02, 0xe0100, 0xe0150, 0xe01ef})
	for in, want := range map[string]string{
		hidden:                         `Reads a file.\ufe01\ufe02\U000e0100\U000e0150\U000e01ef`,
		"a\u180bb\u180fc\u17b4d\u17b5": `a\u180bb\u180fc\u17b4d\u17b5`,
		"ok \u2764\ufe0f \u2194\ufe0f": "ok \u2764\ufe0f \u2194\ufe0f",
		"\u2764\ufe0f\ufe0f\ufe0e":     "\u2764\ufe0f" + `\ufe0f\ufe0e`,
		"R\ufe0fe\ufe0ead":             `R\ufe0fe\ufe0ead`, // a hidden bit after each letter
		"#\ufe0f\u20e3":                `#\ufe0f` + "\u20e3",
		"\u2139\ufe0f \u2102\ufe0f":    "\u2139\ufe0f \u2102" + `\ufe0f`, // an emoji base, a letter
		"\u00d7\ufe0f\u2500\ufe0f":     "\u00d7" + `\ufe0f` + "\u2500" + `\ufe0f`,
		"\ufe0f":                       `\ufe0f`,
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%+q) = %+q, want %+q", in, got, want)
		}
		if Clean(in) != (in == want) {
			t.Errorf("Clean(%+q) = %v", in, Clean(in))
		}
	}
}
