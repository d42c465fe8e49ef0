// Package safetext is the one escaper for text that an MCP server or a config file controls, on
// its way to a terminal, an editor prompt, a log line shown to a person or a quoted block given to
// the model. It imports only the standard library so that every package can use it.
//
// Escaped are: every C0 and C1 control character and DEL (ESC starts terminal sequences, BEL, CR
// and backspace rewrite a line), bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E,
// U+2066-U+2069: they reorder what is shown), zero-width and invisible characters (U+200B-U+200D,
// U+2060-U+2064, U+FEFF, U+00AD, U+180E, U+034F, the Hangul fillers), every other Unicode format
// character (category Cf, tag characters included), the marks that show as nothing (variation
// selectors, but for one emoji presentation selector after a symbol; Mongolian free variation
// selectors; Khmer inherent vowels), the line and paragraph separators U+2028 and U+2029, and
// invalid UTF-8. Each is shown visibly: `\x1b`, `\r`, `\u202e`, `\U000e0041`, and an
// invalid byte as `\xff` (always >= \x80, so it cannot be mistaken for an escaped control).
//
// A backslash is left as it is: two inputs that differ in a hidden character always look different,
// but a text that spells `\x1b` literally looks like one that holds ESC. Nothing it prints can act
// on a terminal; that is the guarantee.
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line escapes s for one line: a prompt, a toast, a terminal line, a table cell. Line breaks and
// tabs are escaped too.
func Line(s string) string { return escape(s, false) }

// Block escapes s for multi-line text (a tool result on a terminal, a stderr tail): "\n" and "\t"
// are kept, everything else that Line escapes is escaped ("\r" included).
func Block(s string) string { return escape(s, true) }

// Cut bounds s to limit characters (runes of the input, never cut in half) and escapes it as Line
// does. It returns the escaped head and how many characters of s were left out (0 when none).
func Cut(s string, limit int) (head string, cut int) {
	if limit < 0 {
		limit = 0
	}
	n, end := 0, len(s)
	for i := range s {
		if n == limit {
			end = i
			break
		}
		n++
	}
	if end == len(s) {
		return Line(s), 0
	}
	return Line(s[:end]), utf8.RuneCountInString(s[end:])
}

// Bounded is Line bounded to limit characters of s; when it cuts, it ends with a marker that says
// how much it cut: "…(+123 more characters)".
func Bounded(s string, limit int) string {
	head, cut := Cut(s, limit)
	if cut == 0 {
		return head
	}
	return head + Marker(cut)
}

// NoLinks writes each "](" in s as `]\(`, so that no text in it reads as a link where an editor
// renders "[label](target)" in a message: VS Code does in its notifications, hiding the target
// behind the label and running a command: target (a terminal's sendSequence, any command with
// its arguments) when the label is clicked. For text a server wrote that an editor shows so.
func NoLinks(s string) string { return strings.ReplaceAll(s, "](", `]\(`) }

// Marker is the text Bounded appends after a cut of n characters.
func Marker(n int) string {
	if n == 1 {
		return "…(+1 more character)"
	}
	return fmt.Sprintf("…(+%d more characters)", n)
}

// Needs reports whether r is one of the characters this package escapes (invalid UTF-8 aside).
// "\n" and "\t" are included: Block keeps them.
func Needs(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r < 0xad:
		return false
	case r == 0x00ad, r == 0x034f, r == 0x061c, r == 0x115f, r == 0x1160, r == 0x180e,
		r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r == 0x2028, r == 0x2029,
		r >= 0x2060 && r <= 0x206f, r == 0x3164, r == 0xfeff, r == 0xffa0, r >= 0xfff0 && r <= 0xfffb,
		// Marks that show as nothing (Mn, not Cf): Khmer inherent vowels, Mongolian free variation
		// selectors, and the variation selectors but the emoji ones (see NeedsAfter).
		r == 0x17b4, r == 0x17b5, r >= 0x180b && r <= 0x180d, r == 0x180f,
		r >= 0xfe00 && r <= 0xfe0d, r >= 0xe0100 && r <= 0xe01ef:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// NeedsAfter is Needs for r after prev: a text or emoji presentation selector (U+FE0E, U+FE0F)
// is how emoji are written, one right after a symbol (U+2764 U+FE0F); anywhere else, after a
// letter, a digit or another selector, it shows nothing and is escaped, so that no text carries a
// hidden payload in them.
func NeedsAfter(prev, r rune) bool {
	if r == 0xfe0e || r == 0xfe0f {
		return !emojiBase(prev)
	}
	return Needs(r)
}

// emojiBase: r is a character a presentation selector makes an emoji of (the bases of Unicode's
// emoji variation sequences, by block; keycap digits excepted). The VS Code extension
// (format.ts) and the Neovim plugin (toolform.lua) use the same list.
func emojiBase(r rune) bool {
	for _, b := range emojiBases {
		if r >= b[0] && r <= b[1] {
			return true
		}
	}
	return false
}

var emojiBases = [][2]rune{
	{0xa9, 0xa9}, {0xae, 0xae}, {0x203c, 0x203c}, {0x2049, 0x2049}, {0x2122, 0x2122}, {0x2139, 0x2139},
	{0x2194, 0x2199}, {0x21a9, 0x21aa}, {0x231a, 0x231b}, {0x2328, 0x2328}, {0x23cf, 0x23cf},
	{0x23e9, 0x23f3}, {0x23f8, 0x23fa}, {0x24c2, 0x24c2}, {0x25aa, 0x25ab}, {0x25b6, 0x25b6},
	{0x25c0, 0x25c0}, {0x25fb, 0x25fe}, {0x2600, 0x27bf}, {0x2934, 0x2935}, {0x2b05, 0x2b07},
	{0x2b1b, 0x2b1c}, {0x2b50, 0x2b50}, {0x2b55, 0x2b55}, {0x3030, 0x3030}, {0x303d, 0x303d},
	{0x3297, 0x3297}, {0x3299, 0x3299}, {0x1f000, 0x1faff},
}

// Clean reports whether s needs no escaping at all for a line.
func Clean(s string) bool {
	prev := rune(0)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || NeedsAfter(prev, r) {
			return false
		}
		prev = r
		i += size
	}
	return true
}

func escape(s string, block bool) string {
	if Clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	prev := rune(0)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case block && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case NeedsAfter(prev, r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case NeedsAfter(prev, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		prev = r
		i += size
	}
	return b.String()
}
