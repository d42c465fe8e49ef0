package policy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A node is one parsed JSON value that remembers where it was written, so that every rule can
// be named as file#/json/pointer and every error as file:line:column. encoding/json keeps no
// positions below the top level, hence this small parser. It reads JSONC (// and /* */ comments,
// trailing commas), as Claude Code's and VS Code's files may hold them.
type node struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	off  int  // byte offset of the value's first byte
	ptr  string

	str  string // 's'; the raw text for 'n'
	b    bool
	keys []string // 'o', in order
	vals []*node  // 'o' members (parallel to keys) or 'a' elements
}

func (n *node) kindName() string {
	switch n.kind {
	case 'o':
		return "an object"
	case 'a':
		return "an array"
	case 's':
		return "a string"
	case 'n':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "null"
}

// get returns the member named key of an object node, or nil.
func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// A FileError is a problem at a place in a policy file: "file:line:column: msg". Line is 0 when
// the problem is the whole file (it cannot be read or trusted).
type FileError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// maxDepth bounds nesting; no policy needs more, and a deep file must not exhaust the stack.
const maxDepth = 64

type parser struct {
	file  string
	data  []byte
	i     int
	lines []int // byte offset of each line's start
}

// parseJSONC parses data as one JSONC value. The error is a *FileError with line and column.
func parseJSONC(file string, data []byte) (*node, *parser, error) {
	p := &parser{file: file, data: data, lines: []int{0}}
	for i, c := range data {
		if c == '\n' {
			p.lines = append(p.lines, i+1)
		}
	}
	if strings.HasPrefix(string(data), "\uFEFF") {
		p.i = 3
	}
	if err := p.space(); err != nil {
		return nil, p, err
	}
	if p.i >= len(data) {
		return nil, p, p.errAt(p.i, "empty file: want a JSON object")
	}
	n, err := p.value("", 0)
	if err != nil {
		return nil, p, err
	}
	if err := p.space(); err != nil {
		return nil, p, err
	}
	if p.i < len(data) {
		return nil, p, p.errAt(p.i, "unexpected text after the JSON value")
	}
	return n, p, nil
}

// pos turns a byte offset into a 1-based line and column (columns count bytes).
func (p *parser) pos(off int) (line, col int) {
	lo, hi := 0, len(p.lines)
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if p.lines[m] <= off {
			lo = m
		} else {
			hi = m
		}
	}
	return lo + 1, off - p.lines[lo] + 1
}

func (p *parser) errAt(off int, format string, args ...any) *FileError {
	l, c := p.pos(off)
	return &FileError{File: p.file, Line: l, Col: c, Msg: fmt.Sprintf(format, args...)}
}

// space skips white space and comments.
func (p *parser) space() error {
	for p.i < len(p.data) {
		switch c := p.data[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case c == '/' && p.i+1 < len(p.data) && p.data[p.i+1] == '/':
			for p.i < len(p.data) && p.data[p.i] != '\n' {
				p.i++
			}
		case c == '/' && p.i+1 < len(p.data) && p.data[p.i+1] == '*':
			start := p.i
			end := strings.Index(string(p.data[p.i+2:]), "*/")
			if end < 0 {
				return p.errAt(start, "comment is not closed")
			}
			p.i += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

// escapePointer escapes one JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func (p *parser) value(ptr string, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errAt(p.i, "nesting deeper than %d levels", maxDepth)
	}
	if p.i >= len(p.data) {
		return nil, p.errAt(p.i, "unexpected end of file")
	}
	n := &node{off: p.i, ptr: ptr}
	switch c := p.data[p.i]; {
	case c == '{':
		n.kind = 'o'
		p.i++
		for {
			if err := p.space(); err != nil {
				return nil, err
			}
			if p.i < len(p.data) && p.data[p.i] == '}' {
				p.i++
				return n, nil
			}
			if p.i >= len(p.data) || p.data[p.i] != '"' {
				return nil, p.errAt(p.i, "want a member name in double quotes or }")
			}
			koff := p.i
			k, err := p.string()
			if err != nil {
				return nil, err
			}
			if n.get(k) != nil {
				// encoding/json would keep the last; a policy must not say two things.
				return nil, p.errAt(koff, "duplicate member %q", k)
			}
			if err := p.space(); err != nil {
				return nil, err
			}
			if p.i >= len(p.data) || p.data[p.i] != ':' {
				return nil, p.errAt(p.i, "want : after member name %q", k)
			}
			p.i++
			if err := p.space(); err != nil {
				return nil, err
			}
			v, err := p.value(ptr+"/"+escapePointer(k), depth+1)
			if err != nil {
				return nil, err
			}
			n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			if err := p.space(); err != nil {
				return nil, err
			}
			switch {
			case p.i < len(p.data) && p.data[p.i] == ',':
				p.i++
			case p.i < len(p.data) && p.data[p.i] == '}':
			default:
				return nil, p.errAt(p.i, "want , or } after a member")
			}
		}
	case c == '[':
		n.kind = 'a'
		p.i++
		for {
			if err := p.space(); err != nil {
				return nil, err
			}
			if p.i < len(p.data) && p.data[p.i] == ']' {
				p.i++
				return n, nil
			}
			v, err := p.value(ptr+"/"+strconv.Itoa(len(n.vals)), depth+1)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
			if err := p.space(); err != nil {
				return nil, err
			}
			switch {
			case p.i < len(p.data) && p.data[p.i] == ',':
				p.i++
			case p.i < len(p.data) && p.data[p.i] == ']':
			default:
				return nil, p.errAt(p.i, "want , or ] after an element")
			}
		}
	case c == '"':
		n.kind = 's'
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		n.str = s
		return n, nil
	case c == '-' || '0' <= c && c <= '9':
		n.kind = 'n'
		j := p.i
		for j < len(p.data) && strings.IndexByte("+-0123456789.eE", p.data[j]) >= 0 {
			j++
		}
		if !json.Valid(p.data[p.i:j]) {
			return nil, p.errAt(p.i, "invalid number %q", p.data[p.i:j])
		}
		n.str = string(p.data[p.i:j])
		p.i = j
		return n, nil
	default:
		for _, lit := range []struct {
			word string
			kind byte
			b    bool
		}{{"true", 'b', true}, {"false", 'b', false}, {"null", 'z', false}} {
			if strings.HasPrefix(string(p.data[p.i:min(len(p.data), p.i+5)]), lit.word) {
				n.kind, n.b = lit.kind, lit.b
				p.i += len(lit.word)
				return n, nil
			}
		}
		return nil, p.errAt(p.i, "want a JSON value (object, array, string, number, true, false or null)")
	}
}

// string reads a JSON string at p.i (which is '"').
func (p *parser) string() (string, error) {
	start := p.i
	j := p.i + 1
	for ; j < len(p.data); j++ {
		if p.data[j] == '\\' {
			j++
			continue
		}
		if p.data[j] == '"' {
			break
		}
		if p.data[j] == '\n' {
			return "", p.errAt(start, "string is not closed on its line")
		}
	}
	if j >= len(p.data) {
		return "", p.errAt(start, "string is not closed")
	}
	var s string
	if err := json.Unmarshal(p.data[start:j+1], &s); err != nil {
		return "", p.errAt(start, "invalid string: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	p.i = j + 1
	return s, nil
}
