package session

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The fences that mark server-controlled text in what the model reads: each block of such text
// is opened by <name ...> and closed by </name> on a line of its own, written by Switchboard
// only. Server text inside is quoted ("> " lines) and passed through [Unfence].
const (
	FenceInstructions = "server-instructions" // a server's instructions in the system prompt
	FenceResource     = "attached-resource"   // a resource the user attached to a turn (host)
	FencePrompt       = "server-prompt"       // the messages of a server prompt the user ran (host)
)

var fences = []string{FenceInstructions, FenceResource, FencePrompt}

// fenceEscape is what a "<" that would start a fence marker is written as.
const fenceEscape = "&lt;"

// Unfence neutralises every fence marker in server text, so that the text can neither open nor
// close a fence: each "<" (or a look-alike: U+FF1C, U+FE64) that is followed by a fence name,
// optionally after a "/" and white space or invisible characters, in any case, with any dash,
// underscore or white space (or none) between the name's words, is written "&lt;". It changes
// nothing else, and errs on the side of neutralising ("<server_instructions_x" is changed too).
// Call it before safetext's escaping, which turns the invisible characters a reader skips into
// visible text.
func Unfence(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == '<' || r == '\uFF1C' || r == '\uFE64') && opensFence(s[i+n:]) {
			if last == 0 {
				b.Grow(len(s) + 8)
			}
			b.WriteString(s[last:i])
			b.WriteString(fenceEscape)
			last = i + n
		}
		i += n
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// opensFence reports whether s (what follows a "<") starts with a fence name, after optional
// skippable characters, a "/" (or U+FF0F) and skippable characters again.
func opensFence(s string) bool {
	s = strings.TrimLeftFunc(s, fenceSkippable)
	if r, n := utf8.DecodeRuneInString(s); r == '/' || r == '\uFF0F' {
		s = strings.TrimLeftFunc(s[n:], fenceSkippable)
	}
	for _, f := range fences {
		if hasFenceName(s, f) {
			return true
		}
	}
	return false
}

// hasFenceName reports whether s starts with name (lower-case ASCII words joined by "-"), the
// letters compared under Unicode case folding ("ſ" is "s", "K" is "k") and each "-" matching any
// run, possibly empty, of dashes (and the minus sign), underscores, white space and invisible
// characters.
func hasFenceName(s, name string) bool {
	for _, want := range name {
		if want == '-' {
			s = strings.TrimLeftFunc(s, func(r rune) bool { return r == '_' || r == '\u2212' || unicode.Is(unicode.Pd, r) || fenceSkippable(r) })
			continue
		}
		r, n := utf8.DecodeRuneInString(s)
		if n == 0 || !equalFold(r, want) {
			return false
		}
		s = s[n:]
	}
	return true
}

func equalFold(r, want rune) bool {
	for f := r; ; {
		if f == want {
			return true
		}
		if f = unicode.SimpleFold(f); f == r {
			return false
		}
	}
}

// fenceSkippable is white space and invisible (format) characters, which a reader skips.
func fenceSkippable(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }
