package broker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/jsonscan"
)

// maxFrame bounds one line (one JSON-RPC message) either way, as mcpbridge bounds a stdio
// server's frames. A larger frame ends the connection it came on.
const maxFrame = 64 << 20

var errFrameTooLarge = errors.New("frame too large")

// readFrame reads one newline-terminated line of at most limit bytes into a buffer of its own
// (the message is relayed, and its id patched, without decoding it whole).
func readFrame(r *bufio.Reader, limit int) ([]byte, error) {
	return readRest(r, limit, nil)
}

// nextFrame is readFrame for a relay's read loop: a frame that fits in r's buffer, as nearly all
// do, is returned where it lies, without a copy, and is valid only until the next read of r; a
// larger one gets a buffer of its own. The loops handle each frame before they read the next, and
// whatever keeps a frame's bytes longer copies them (attachment.send copies what it queues).
func nextFrame(r *bufio.Reader, limit int) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	switch {
	case len(line) > limit:
		return nil, errFrameTooLarge
	case err == nil:
		return line, nil
	case errors.Is(err, bufio.ErrBufferFull):
		return readRest(r, limit, bytes.Clone(line))
	case len(bytes.TrimSpace(line)) > 0 && errors.Is(err, io.EOF):
		return bytes.Clone(line), nil // a last line without its newline
	}
	return nil, err
}

// readRest reads the rest of a line whose start is out.
func readRest(r *bufio.Reader, limit int, out []byte) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if len(out)+len(chunk) > limit {
			return nil, errFrameTooLarge
		}
		out = append(out, chunk...)
		switch {
		case err == nil:
			return out, nil
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			if len(bytes.TrimSpace(out)) > 0 && errors.Is(err, io.EOF) {
				return out, nil // a last line without its newline
			}
			return nil, err
		}
	}
}

// msg is the top level of one JSON-RPC message. Every slice aliases data, so an offset into data
// is where the value sits (see off).
type msg struct {
	data   []byte
	id     []byte // nil: none
	method string
	params []byte
	result bool // has "result" or "error"
}

func (m *msg) isRequest() bool      { return m.id != nil && m.method != "" }
func (m *msg) isNotification() bool { return m.id == nil && m.method != "" }
func (m *msg) isResponse() bool     { return m.id != nil && m.method == "" && m.result }

// parseMsg reads the top-level members of a message. A message that is not one JSON object, has
// a member twice, or has a member name encoding/json would match to a field without regard to
// case ("ID") is refused: a reader in the window would then see another id or method than the one
// this daemon routed by. So is one with an id, a method and a result or an error: the daemon would
// route it as a request, and a reader that goes by the result (mcp-go's stdio server matches an
// answer to its question by id alone) take it as the answer to a question put to another window.
func parseMsg(data []byte) (msg, bool) {
	m := msg{data: data}
	var seen [6]bool
	ok := jsonscan.Members(data, func(name, value []byte) bool {
		i, unsure := jsonscan.Which(name, "jsonrpc", "id", "method", "params", "result", "error")
		if unsure {
			return false
		}
		if i < 0 {
			return true
		}
		if seen[i] {
			return false
		}
		seen[i] = true
		switch i {
		case 1:
			if value[0] != '"' && value[0] != '-' && (value[0] < '0' || value[0] > '9') {
				return false // ids are strings or numbers (null ids are for parse errors: not routed)
			}
			m.id = value
		case 2:
			s, ok := knownMethod(value)
			if !ok {
				s, ok = jsonscan.String(value)
			}
			if !ok && json.Unmarshal(value, &s) != nil {
				return false
			}
			if s == "" {
				return false
			}
			m.method = s
		case 3:
			m.params = value
		case 4, 5:
			m.result = true
		}
		return true
	})
	return m, ok && (m.method != "" || m.id != nil) && !(m.id != nil && m.method != "" && m.result)
}

// knownMethods are the methods the daemon sees on every call, or routes by: a frame's method is
// one of these strings instead of a new one.
var knownMethods = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"initialize", "ping", "logging/setLevel", "tools/call", "tools/list", "resources/list",
		"resources/read", "resources/templates/list", "resources/subscribe", "resources/unsubscribe",
		"prompts/list", "prompts/get", "completion/complete", "roots/list", "elicitation/create",
		"sampling/createMessage", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel",
		"notifications/initialized", "notifications/cancelled", "notifications/progress",
		"notifications/message", "notifications/resources/updated", "notifications/elicitation/complete",
		"notifications/tools/list_changed", "notifications/resources/list_changed",
		"notifications/prompts/list_changed", "notifications/roots/list_changed", "notifications/tasks/status",
	} {
		m[s] = s
	}
	return m
}()

// knownMethod is the method of a JSON string value that is one of knownMethods, written plainly
// (no escape: an escaped one is decoded the long way and compares equal all the same).
func knownMethod(value []byte) (string, bool) {
	if len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' {
		return "", false
	}
	s, ok := knownMethods[string(value[1:len(value)-1])]
	return s, ok
}

// member returns the value of the member name of the JSON object obj (nil: none, or obj is not
// an object, or the name is ambiguous).
func member(obj []byte, name string) []byte {
	v, _ := lookup(obj, name)
	return v
}

// lookup is member telling an ambiguous name apart from none: the member twice, or a member
// whose name has an escape or equals name only without regard to case. A reader of the message
// (encoding/json, JavaScript) may take one of those as the member, where member found none or
// another.
func lookup(obj []byte, name string) (v []byte, ambiguous bool) {
	ok := jsonscan.Members(obj, func(n, val []byte) bool {
		is, unsure := jsonscan.Name(n, name)
		if unsure && bytes.IndexByte(n, '\\') >= 0 {
			// Escaped: decoded, it may be another name altogether, which no reader takes for name.
			var s string
			if json.Unmarshal(slices.Concat([]byte{'"'}, n, []byte{'"'}), &s) == nil && !strings.EqualFold(s, name) {
				return true
			}
		}
		if unsure || (is && v != nil) {
			ambiguous = true
			return false
		}
		if is {
			v = val
		}
		return true
	})
	if !ok {
		return nil, ambiguous
	}
	return v, false
}

// stringMember decodes the string member name of obj.
func stringMember(obj []byte, name string) (string, bool) {
	v := member(obj, name)
	if v == nil {
		return "", false
	}
	if s, ok := jsonscan.String(v); ok {
		return s, true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// off is the offset of sub in data; sub must be a slice of data.
func off(data, sub []byte) int { return cap(data) - cap(sub) }

// edit replaces the bytes at [at, at+n) of a message.
type edit struct {
	at, n int
	with  string
}

// splice applies edits (in any order, not overlapping) to data, returning a new message.
func splice(data []byte, edits ...edit) []byte {
	return spliceTo(nil, data, edits)
}

// spliceTo is splice writing into dst's space, a buffer its caller reuses frame after frame when
// the message is written before the next one is read (nothing keeps it: see attachment.send).
func spliceTo(dst, data []byte, edits []edit) []byte {
	for i := 1; i < len(edits); i++ { // a few edits: sorted in place, no closure to allocate
		for j := i; j > 0 && edits[j].at < edits[j-1].at; j-- {
			edits[j], edits[j-1] = edits[j-1], edits[j]
		}
	}
	grow := 0
	for _, e := range edits {
		grow += len(e.with) - e.n
	}
	out := dst[:0]
	if cap(out) < len(data)+grow {
		out = make([]byte, 0, len(data)+grow)
	}
	last := 0
	for _, e := range edits {
		out = append(out, data[last:e.at]...)
		out = append(out, e.with...)
		last = e.at + e.n
	}
	return append(out, data[last:]...)
}

// replace returns data with the value sub (a slice of data) replaced by with.
func replace(data, sub []byte, with string) []byte {
	return replaceTo(nil, data, sub, with)
}

// replaceTo is replace into dst's space (see spliceTo).
func replaceTo(dst, data, sub []byte, with string) []byte {
	e := [1]edit{{at: off(data, sub), n: len(sub), with: with}}
	return spliceTo(dst, data, e[:])
}

// scratchMax is the largest buffer a relay keeps for the next frame: one large result does not
// hold its size for good.
const scratchMax = 64 << 10

// keep returns b to hold as the next frame's scratch buffer, or nil when it grew too large.
func keep(b []byte) []byte {
	if cap(b) > scratchMax {
		return nil
	}
	return b[:0]
}

// withNewline is b ending in a newline, in a new buffer when it has none (never appended in place:
// b may be a read buffer's or a scratch buffer that the caller still uses).
func withNewline(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return b
	}
	return slices.Concat(b, []byte{'\n'})
}

// idKey is a JSON-RPC id as a map key: its JSON text, so that 1 and "1" stay apart.
func idKey(id []byte) string { return string(id) }

func response(id []byte, result string) []byte {
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"result":`), []byte(result), []byte("}\n"))
}

func errorResponse(id []byte, code int, message string) []byte {
	b, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}) // ignore error: an int and a string
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"error":`), b, []byte("}\n"))
}

func notification(method string, params any) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", method, params}) // ignore error: our own plain values
	return append(b, '\n')
}

// JSON-RPC and MCP error codes the daemon answers with.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeServerGone     = -32000
	codeUserRejected   = -1 // sampling refused (MCP: "User rejected sampling request")
)
