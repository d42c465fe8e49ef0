package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"unicode/utf8"
)

// ElideAt is the raw length past which the rest of one JSON string in a stdio frame is not kept.
// Every non-text content block that may legally arrive (mcpbridge.MaxResultTotal, 10 MiB, in all)
// fits under it, and its first bytes decode to more than the text cap even when every character
// is a 6-byte \u escape (6 * mcpbridge.MaxResultText < ElideAt). It is MaxResultTotal + 1 MiB;
// mcpbridge checks that at compile time (cap.go), as this package cannot import it.
const ElideAt = 10<<20 + 1<<20

// structureLimit bounds the bytes of one frame that lie outside JSON strings (braces, keys'
// punctuation, numbers, whitespace). Real messages carry their bulk inside strings, so a frame
// past it is a broken or hostile server: without this bound an endless line of non-string bytes
// would be kept whole up to the frame limit.
const structureLimit = 4 << 20

var (
	errFrameTooLarge  = errors.New("frame too large")
	errFrameStructure = errors.New("frame has too many bytes outside JSON strings")
)

// Frame is one line read from a stdio server. A JSON string longer than ElideAt raw bytes is
// kept as its first ElideAt bytes (cut between characters) and closed: Elided maps the offset
// of that string's opening quote in Data to the decoded length of the whole original string.
// The frame stays valid JSON; a 50 MB text result costs ElideAt bytes, not 50 MB or several
// copies of it. A text block decoded from it is capped anyway, and any other elided string
// makes the result too large (see mcpbridge's parseCallResult).
type Frame struct {
	Data   []byte
	Elided map[int]int
}

// ElidedLen returns the decoded length of the original string whose compacted form quoted is.
// quoted must alias f.Data (decoded with AliasRaw).
func (f Frame) ElidedLen(quoted []byte) (int, bool) {
	if len(f.Elided) == 0 || len(quoted) == 0 || cap(quoted) > cap(f.Data) {
		return 0, false
	}
	n, ok := f.Elided[cap(f.Data)-cap(quoted)]
	return n, ok
}

// NewFrameReader reads frames of at most limit raw bytes from r; elide is the length past which
// a string is cut (0: ElideAt).
func NewFrameReader(r *bufio.Reader, limit, elide int) *FrameReader {
	return &FrameReader{r: r, limit: limit, elide: elide}
}

// FrameReader reads newline-delimited frames of at most limit raw bytes, eliding long strings
// while it reads, so memory stays bounded by about ElideAt per string whatever the frame size.
type FrameReader struct {
	r     *bufio.Reader
	limit int
	elide int // 0 = ElideAt (tests use less)
}

// strState tracks one JSON string while its bytes stream past.
type strState struct {
	start    int  // offset of the opening quote in the output
	raw      int  // raw content bytes seen
	decoded  int  // decoded length so far
	dropping bool // past ElideAt: bytes are counted, not kept
	esc      int  // 0 plain, 1 after '\', 2..5 reading the hex digits of \u
	hex      rune
	high     bool // a high surrogate waits for its low half
}

// flushHigh counts a high surrogate that got no low half (decoded as U+FFFD).
func (s *strState) flushHigh() {
	if s.high {
		s.decoded += 3
		s.high = false
	}
}

func (f *FrameReader) Next() (Frame, error) {
	var (
		out    []byte
		elided map[int]int
		total  int
		outer  int // bytes kept outside strings
		inStr  bool
		s      strState
	)
	elide := f.elide
	if elide == 0 {
		elide = ElideAt
	}
	keep := func(b []byte) {
		if s.dropping {
			return
		}
		if s.raw+len(b) > elide {
			n := max(0, elide-s.raw)
			for n > 0 && n < len(b) && !utf8.RuneStart(b[n]) {
				n--
			}
			out = append(out, b[:n]...)
			s.dropping = true
			return
		}
		out = append(out, b...)
	}
	keepEsc := func(c byte) { // escapes are decided on at their backslash
		if !s.dropping {
			out = append(out, c)
		}
	}
	for {
		chunk, err := f.r.ReadSlice('\n')
		total += len(chunk)
		if total > f.limit {
			return Frame{}, errFrameTooLarge
		}
		if out == nil {
			// The frame is its own buffer (results alias it), made once: nothing is ever kept that
			// was not read, so a frame that came whole in its first chunk (the usual answer) fits
			// exactly. A longer one starts at twice its first chunk and grows by append.
			n := len(chunk)
			if err != nil {
				n *= 2
			}
			out = make([]byte, 0, n)
		}
		for i := 0; i < len(chunk); {
			if !inStr {
				j := bytes.IndexByte(chunk[i:], '"')
				n := j + 1
				if j < 0 {
					n = len(chunk) - i
				}
				if outer += n; outer > structureLimit {
					return Frame{}, errFrameStructure
				}
				out = append(out, chunk[i:i+n]...)
				if j < 0 {
					break
				}
				i += j + 1
				inStr, s = true, strState{start: len(out) - 1}
				continue
			}
			switch s.esc {
			case 0:
				j := bytes.IndexAny(chunk[i:], "\"\\")
				n := j
				if j < 0 {
					n = len(chunk) - i
				}
				if n > 0 {
					s.flushHigh()
					keep(chunk[i : i+n])
					s.raw += n
					s.decoded += n
					i += n
				}
				if j < 0 {
					continue
				}
				if chunk[i] == '"' {
					s.flushHigh()
					out = append(out, '"')
					if s.dropping {
						if elided == nil {
							elided = map[int]int{}
						}
						elided[s.start] = s.decoded
					}
					inStr = false
					i++
					continue
				}
				if s.raw+6 > elide { // stop before an escape, never inside one
					s.dropping = true
				}
				keepEsc(chunk[i])
				s.raw++
				s.esc = 1
				i++
			case 1:
				c := chunk[i]
				keepEsc(c)
				s.raw++
				i++
				if c == 'u' {
					s.esc, s.hex = 2, 0
					continue
				}
				s.flushHigh()
				s.decoded++
				s.esc = 0
			default:
				c := chunk[i]
				keepEsc(c)
				s.raw++
				i++
				s.hex = s.hex<<4 | hexVal(c)
				if s.esc++; s.esc < 6 {
					continue
				}
				s.esc = 0
				r := s.hex
				switch {
				case s.high && r >= 0xDC00 && r <= 0xDFFF:
					s.decoded += 4
					s.high = false
				case r >= 0xD800 && r <= 0xDBFF:
					s.flushHigh()
					s.high = true
				case r >= 0xDC00 && r <= 0xDFFF:
					s.flushHigh()
					s.decoded += 3
				default:
					s.flushHigh()
					s.decoded += utf8.RuneLen(r)
				}
			}
		}
		switch {
		case err == nil:
			return Frame{Data: out, Elided: elided}, nil
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return Frame{}, err
		}
	}
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return 0
}
