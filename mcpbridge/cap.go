package mcpbridge

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// MaxResultText caps the text of one tool result (PROTOCOL.md section 5).
const MaxResultText = 1 << 20

// MaxResultTotal bounds a whole result after the text cap (capped text plus non-text blocks such
// as images). A larger result becomes an error result.
const MaxResultTotal = 10 << 20

// stdio.ElideAt must stay MaxResultTotal + 1 MiB (stdio/frame.go says why); stdio cannot import
// this package, so the build checks it here: either array index is out of range otherwise.
var _ = [1]struct{}{}[stdio.ElideAt-(MaxResultTotal+1<<20)]
var _ = [1]struct{}{}[(MaxResultTotal+1<<20)-stdio.ElideAt]

// truncationMarker is appended to text cut by the cap: total bytes before the cap, bytes kept.
// It is the only definition of the marker.
const truncationMarker = "\n\n[mcp output truncated: %d bytes total, %d kept]"

// Cap applies the result cap to text: over MaxResultText bytes it is cut at the last UTF-8
// boundary at or below the cap and the truncation marker is appended.
func Cap(text string) (capped string, truncated bool) {
	return capText(text, len(text), MaxResultText)
}

// capText caps prefix, the first bytes of a text of total bytes, at limit bytes.
// prefix must hold at least min(total, limit+utf8.UTFMax) bytes of the text.
func capText(prefix string, total, limit int) (string, bool) {
	if total <= limit {
		return prefix, false
	}
	kept := utf8Cut(prefix, limit)
	return prefix[:kept] + fmt.Sprintf(truncationMarker, total, kept), true
}

// utf8Cut returns the largest n <= limit such that s[:n] ends on a UTF-8 boundary.
func utf8Cut(s string, limit int) int {
	if limit >= len(s) {
		return len(s)
	}
	n := limit
	// Step back over continuation bytes to the start of the rune that crosses the limit.
	for n > 0 && n > limit-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// cappedString is the decoded form of a JSON string, of which only the first bytes are kept.
type cappedString struct {
	prefix string // the first min(total, keep) bytes, cut on a rune boundary
	total  int    // decoded length in bytes
}

var errBadString = errors.New("malformed JSON string")

// decodeCappedString decodes the JSON string literal quoted (with its quotes) keeping at most
// keep bytes of it, but counting all of it. It never materialises the whole string: a 50 MB text
// block costs keep bytes, not 50 MB. Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func decodeCappedString(quoted []byte, keep int) (cappedString, error) {
	if len(quoted) < 2 || quoted[0] != '"' || quoted[len(quoted)-1] != '"' {
		return cappedString{}, errBadString
	}
	s := quoted[1 : len(quoted)-1]
	// Fast path: no escapes and valid UTF-8 means the bytes are the text.
	simple := true
	for _, c := range s {
		if c == '\\' || c < 0x20 {
			simple = false
			break
		}
	}
	if simple && utf8.Valid(s) {
		n := min(len(s), keep)
		if n < len(s) {
			for n > 0 && !utf8.RuneStart(s[n]) {
				n--
			}
		}
		return cappedString{prefix: string(s[:n]), total: len(s)}, nil
	}
	var b strings.Builder
	b.Grow(min(len(s), keep))
	total := 0
	emit := func(r rune) {
		n := utf8.RuneLen(r)
		if n < 0 {
			r, n = utf8.RuneError, 3
		}
		if total+n <= keep && b.Len() == total {
			b.WriteRune(r)
		}
		total += n
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return cappedString{}, errBadString
			}
			switch s[i+1] {
			case '"', '\\', '/':
				emit(rune(s[i+1]))
			case 'b':
				emit('\b')
			case 'f':
				emit('\f')
			case 'n':
				emit('\n')
			case 'r':
				emit('\r')
			case 't':
				emit('\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok {
					return cappedString{}, errBadString
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(s, i+2); ok && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							emit(d)
							i += 6
							continue
						}
					}
					emit(utf8.RuneError)
					continue
				}
				emit(r)
				continue
			default:
				return cappedString{}, errBadString
			}
			i += 2
		case c < 0x20:
			return cappedString{}, errBadString
		case c < utf8.RuneSelf:
			emit(rune(c))
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			emit(r) // RuneError for invalid bytes, as encoding/json
			i += size
		}
	}
	return cappedString{prefix: b.String(), total: total}, nil
}

func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
