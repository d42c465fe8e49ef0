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
	FenceViewContext  = "view-context"        // what an MCP Apps view added to the model's context (host)
	FenceTaskResult   = "task-result"         // a task's result handed back after a restart (host)
	FenceViewMessage  = "view-message"        // a message an MCP Apps view sent to the chat (host)
)

var fences = []string{FenceInstructions, FenceResource, FencePrompt, FenceViewContext, FenceTaskResult, FenceViewMessage}

// fenceEscape is what a "<" that would start a fence marker is written as.
const fenceEscape = "&lt;"

// Unfence neutralises every fence marker in server text, so that the text can neither open nor
// close a fence: a "<" that starts what reads as a fence marker is written "&lt;". What reads as
// one:
//   - an ASCII "<", then (after any white space or invisible characters, any run of "/", its
//     look-alikes and "\" ("<\/" is "</" escaped), and those again) a name whose letters, with
//     every separator between them dropped (dashes, underscores, dots, white space, digits,
//     invisible characters), begin with a fence name in any case ("</Attached Resource>", "<server_instructions_x", "</server.prompt");
//     or a name that holds anything but ASCII (a look-alike letter, a fullwidth letter, a
//     combining mark, a control character): such a name is not text a person reads past, and a
//     model may read it as a marker, so it is neutralised whatever it spells;
//   - a look-alike of "<" (U+FF1C, U+FE64, U+2039, U+27E8, U+3008, U+2329, U+02C2, U+1438, U+276E,
//     U+29FC) followed, in the same way, by any letter.
//
// Plain ASCII markup that names no fence ("<b>") is left as it is. Call it before safetext's
// escaping, which turns the invisible characters a reader skips into visible text.
func Unfence(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == '<' && opensFence(s[i+n:])) || (isLessLike(r) && opensTag(s[i+n:])) {
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

// isLessLike: r is a look-alike of "<" (not "<" itself).
func isLessLike(r rune) bool {
	switch r {
	case '\uFF1C', '\uFE64', '\u2039', '\u27E8', '\u3008', '\u2329', '\u02C2', '\u1438', '\u276E', '\u29FC':
		return true
	}
	return false
}

// isSlashLike: r is "/" or a look-alike.
func isSlashLike(r rune) bool {
	switch r {
	case '/', '\uFF0F', '\u2215', '\u2044', '\u29F8', '\u2571', '\u0338':
		return true
	}
	return false
}

// tagName returns what follows a "<" once the skippable characters and an optional slash are
// passed over.
func tagName(s string) string {
	s = strings.TrimLeftFunc(s, fenceSkippable)
	// Any run of slashes and backslashes: "<\/" is "</" escaped as in JSON or a script, which a
	// model reads as "</"; "<//" and "<\\/" read as it too.
	for {
		r, n := utf8.DecodeRuneInString(s)
		if !isSlashLike(r) && r != '\\' {
			return s
		}
		s = strings.TrimLeftFunc(s[n:], fenceSkippable)
	}
}

// opensTag: after a look-alike "<", a letter.
func opensTag(s string) bool {
	r, _ := utf8.DecodeRuneInString(tagName(s))
	return unicode.IsLetter(r)
}

// opensFence: after an ASCII "<", a name that begins with a fence name once its separators are
// dropped, or one that holds anything but ASCII (see Unfence).
func opensFence(s string) bool {
	s = tagName(s)
	if r, _ := utf8.DecodeRuneInString(s); !unicode.IsLetter(r) {
		return false
	}
	var letters []byte
	for _, r := range s {
		if len(letters) >= maxFenceName {
			break
		}
		switch {
		case r >= utf8.RuneSelf || (r < ' ' && r != '\t' && r != '\n' && r != '\r') || r == 0x7f:
			return true // not plain ASCII: a look-alike, a mark, a control character
		case 'a' <= r && r <= 'z':
			letters = append(letters, byte(r))
		case 'A' <= r && r <= 'Z':
			letters = append(letters, byte(r-'A'+'a'))
		case r == '-' || r == '_' || r == '.' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || ('0' <= r && r <= '9'):
			// a separator: dropped
		default:
			// the name ends (">", "=", a quote, ...)
			return hasFencePrefix(letters)
		}
	}
	return hasFencePrefix(letters)
}

// maxFenceName bounds how many letters of a name are looked at (the longest fence name has 18).
const maxFenceName = 32

var fenceLetters = func() []string {
	out := make([]string, len(fences))
	for i, f := range fences {
		out[i] = strings.ReplaceAll(f, "-", "")
	}
	return out
}()

func hasFencePrefix(letters []byte) bool {
	for _, f := range fenceLetters {
		if strings.HasPrefix(string(letters), f) {
			return true
		}
	}
	return false
}

// fenceSkippable is white space, invisible (format) characters, combining marks and control
// characters, which a reader skips or does not see.
func fenceSkippable(r rune) bool {
	return unicode.IsSpace(r) || unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me, unicode.Cc)
}
