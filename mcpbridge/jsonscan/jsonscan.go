// Package jsonscan walks the members of a JSON object, or the elements of a JSON array, in one
// pass over its bytes, without reflection and without copying: every value it reports is a slice
// of the input. It validates the whole input as it goes.
//
// It is the fast path in front of encoding/json for the few messages on a tool call's way
// (the editor's request, the server's answer). encoding/json checks a message in one pass and
// decodes it in a second, by reflection, and a custom UnmarshalJSON inside it checks its part
// again: about half of the host's CPU per call went to that. jsonscan is never more lenient than
// encoding/json: what it accepts, encoding/json accepts (FuzzAgreesWithEncodingJSON). Where it is
// unsure (a member name with an escape, a name that matches a wanted one only without regard to
// case, which encoding/json would also take, a nesting deeper than maxDepth) it reports false and
// the caller decodes the message with encoding/json as before, which then also gives the error.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDepth bounds the nesting jsonscan follows (encoding/json allows 10,000): deeper input is
// left to encoding/json.
const maxDepth = 512

// Members calls fn for each member of the JSON object that is data (white space around it
// allowed), in order: name is the member's name as written between its quotes, and value is its
// value with no white space around it. fn returning false stops the walk. Members reports whether
// data was one valid JSON object and fn never returned false; a false result says nothing about
// which members fn has seen.
func Members(data []byte, fn func(name, value []byte) bool) bool {
	s := scanner{data: data}
	s.space()
	if !s.consume('{') {
		return false
	}
	s.space()
	if s.consume('}') {
		return s.end()
	}
	for {
		s.space()
		start := s.i
		if !s.string() {
			return false
		}
		name := data[start+1 : s.i-1]
		s.space()
		if !s.consume(':') {
			return false
		}
		s.space()
		start = s.i
		if !s.value() {
			return false
		}
		if !fn(name, data[start:s.i]) {
			return false
		}
		s.space()
		if s.consume(',') {
			continue
		}
		if s.consume('}') {
			return s.end()
		}
		return false
	}
}

// Elements calls fn for each element of the JSON array that is data, as Members does for an
// object's members.
func Elements(data []byte, fn func(value []byte) bool) bool {
	s := scanner{data: data}
	s.space()
	if !s.consume('[') {
		return false
	}
	s.space()
	if s.consume(']') {
		return s.end()
	}
	for {
		s.space()
		start := s.i
		if !s.value() {
			return false
		}
		if !fn(data[start:s.i]) {
			return false
		}
		s.space()
		if s.consume(',') {
			continue
		}
		if s.consume(']') {
			return s.end()
		}
		return false
	}
}

// Valid reports whether data is one valid JSON value (white space around it allowed), as
// json.Valid does, but for a nesting deeper than maxDepth, which it refuses.
func Valid(data []byte) bool {
	s := scanner{data: data}
	return s.value() && s.end()
}

// AppendString appends s as a JSON string. Printable ASCII without '"', '\\', '<', '>' and '&'
// is appended as it is; anything else is written by encoding/json (its escapes, invalid UTF-8 as
// U+FFFD).
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // ignore error: strings always marshal
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// String returns the text of the JSON string value (with its quotes, as Members reports it) when
// it has no escape and is valid UTF-8, which is when encoding/json decodes it to the same bytes;
// otherwise false, and the caller decodes it with encoding/json.
func String(value []byte) (string, bool) {
	body, ok := StringBytes(value)
	if !ok {
		return "", false
	}
	return string(body), true
}

// StringBytes is String without the copy: the text is a slice of value, for a caller that only
// compares it (a map lookup by string(body) does not allocate).
func StringBytes(value []byte) ([]byte, bool) {
	if len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' {
		return nil, false
	}
	body := value[1 : len(value)-1]
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return nil, false
	}
	return body, true
}

// SetString decodes value into *dst as encoding/json decodes it into a string field when String
// can: null leaves *dst as it was. False: leave the message to encoding/json.
func SetString(dst *string, value []byte) bool {
	if string(value) == "null" {
		return true
	}
	s, ok := String(value)
	if ok {
		*dst = s
	}
	return ok
}

// Name reports whether a member's name (as Members gives it) is want, and whether it is unsure:
// a name with an escape, or one that equals want only when case is ignored (encoding/json also
// matches those to want's field), is for encoding/json to decode.
func Name(name []byte, want string) (is, unsure bool) {
	if string(name) == want {
		return true, false
	}
	if bytes.IndexByte(name, '\\') >= 0 || bytes.EqualFold(name, []byte(want)) {
		return false, true
	}
	return false, false
}

// Which returns which of names a member's name is (-1: none of them), or that it is unsure (see
// Name): then the caller leaves the message to encoding/json. No two names may be equal without
// regard to case.
func Which(name []byte, names ...string) (which int, unsure bool) {
	for i, n := range names {
		is, u := Name(name, n)
		if is {
			return i, false
		}
		if u {
			return -1, true
		}
	}
	return -1, false
}

// AmbiguousNames reports whether an object anywhere in the JSON value data has two member names
// that are equal without regard to case but not equal (after their escapes), or whether data
// cannot be walked (not JSON, nested deeper than maxDepth). encoding/json takes either of two such
// names for a struct field, and the last one wins; a JavaScript reader (an editor) takes only the
// one spelled exactly. A server's content block with both ("text" and "TEXT") would show the editor
// one text and give the model the other.
func AmbiguousNames(data []byte) bool {
	v := bytes.TrimSpace(data)
	if len(v) == 0 || (v[0] != '{' && v[0] != '[') {
		return !Valid(v)
	}
	return ambiguous(v, 0)
}

// ambiguous is AmbiguousNames for a container, or a value that Members or Elements has checked.
func ambiguous(v []byte, depth int) bool {
	if depth > maxDepth {
		return true
	}
	switch v[0] {
	case '[':
		bad := false
		if !Elements(v, func(e []byte) bool {
			bad = ambiguous(e, depth+1)
			return !bad
		}) {
			return true
		}
		return bad
	case '{':
	default:
		return false // a scalar the walk above has checked
	}
	var small [16][]byte
	names := small[:0]
	var folded map[string][]byte // by fold key, past len(small) names
	bad := false
	if !Members(v, func(name, value []byte) bool {
		if bytes.IndexByte(name, '\\') >= 0 {
			var s string
			if json.Unmarshal(append(append([]byte{'"'}, name...), '"'), &s) != nil {
				bad = true
				return false
			}
			name = []byte(s)
		}
		if folded == nil && len(names) < len(small) {
			for _, n := range names {
				if !bytes.Equal(n, name) && bytes.EqualFold(n, name) {
					bad = true
					return false
				}
			}
			names = append(names, name)
		} else {
			if folded == nil {
				folded = make(map[string][]byte, 2*len(names))
				for _, n := range names {
					folded[foldKey(n)] = n
				}
			}
			k := foldKey(name)
			if n, ok := folded[k]; ok && !bytes.Equal(n, name) {
				bad = true
				return false
			}
			folded[k] = name
		}
		bad = ambiguous(value, depth+1)
		return !bad
	}) {
		return true
	}
	return bad
}

// foldKey maps every rune of name to the smallest rune it folds to (unicode.SimpleFold), so two
// names have the same key exactly when bytes.EqualFold says they are equal.
func foldKey(name []byte) string {
	var b strings.Builder
	for _, r := range string(name) {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

type scanner struct {
	data []byte
	i    int
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) consume(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only white space follows.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.data)
}

// value moves past one JSON value of any kind, containers included, without recursion.
func (s *scanner) value() bool {
	var stackBuf [32]byte
	stack := stackBuf[:0] // the open containers: '{' or '['
	for {
		// A value starts here.
		s.space()
		if s.i >= len(s.data) {
			return false
		}
		closed := true // the value ends here (a scalar or an empty container)
		switch c := s.data[s.i]; {
		case c == '{':
			s.i++
			s.space()
			if !s.consume('}') {
				if len(stack) == maxDepth {
					return false
				}
				stack = append(stack, '{')
				if !s.key() {
					return false
				}
				closed = false
			}
		case c == '[':
			s.i++
			s.space()
			if !s.consume(']') {
				if len(stack) == maxDepth {
					return false
				}
				stack = append(stack, '[')
				closed = false
			}
		case c == '"':
			if !s.string() {
				return false
			}
		case c == '-' || ('0' <= c && c <= '9'):
			if !s.number() {
				return false
			}
		case c == 't':
			if !s.literal("true") {
				return false
			}
		case c == 'f':
			if !s.literal("false") {
				return false
			}
		case c == 'n':
			if !s.literal("null") {
				return false
			}
		default:
			return false
		}
		if !closed {
			continue
		}
		// After a value: close what ends here, then the next value of the innermost container.
		for {
			if len(stack) == 0 {
				return true
			}
			s.space()
			if s.i >= len(s.data) {
				return false
			}
			top := stack[len(stack)-1]
			c := s.data[s.i]
			if c == ',' {
				s.i++
				if top == '{' && !s.key() {
					return false
				}
				break
			}
			if (top == '{' && c == '}') || (top == '[' && c == ']') {
				s.i++
				stack = stack[:len(stack)-1]
				continue
			}
			return false
		}
	}
}

// key moves past a member's name and its colon.
func (s *scanner) key() bool {
	s.space()
	if !s.string() {
		return false
	}
	s.space()
	return s.consume(':')
}

// string moves past one JSON string. Bytes from 0x80 up pass as they are: encoding/json accepts
// any of them and decodes invalid UTF-8 as U+FFFD (String leaves that to it).
func (s *scanner) string() bool {
	if !s.consume('"') {
		return false
	}
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c == '\\':
			if s.i+1 >= len(s.data) {
				return false
			}
			switch s.data[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.data) {
					return false
				}
				for _, h := range s.data[s.i+2 : s.i+6] {
					if !isHex(h) {
						return false
					}
				}
				s.i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			s.i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// number moves past one JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	s.consume('-')
	switch {
	case s.consume('0'):
	case s.i < len(s.data) && '1' <= s.data[s.i] && s.data[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.consume('.') {
		if s.digits() == 0 {
			return false
		}
	}
	if s.consume('e') || s.consume('E') {
		if !s.consume('+') {
			s.consume('-')
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.data) && '0' <= s.data[s.i] && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

func (s *scanner) literal(word string) bool {
	if len(s.data)-s.i >= len(word) && string(s.data[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}
