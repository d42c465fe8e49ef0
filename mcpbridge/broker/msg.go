package broker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"

	"github.com/switchboard-dev/switchboard/mcpbridge/jsonscan"
)

// maxFrame bounds one line (one JSON-RPC message) either way, as mcpbridge bounds a stdio
// server's frames. A larger frame ends the connection it came on.
const maxFrame = 64 << 20

var errFrameTooLarge = errors.New("frame too large")

// readFrame reads one newline-terminated line of at most limit bytes into a buffer of its own
// (the message is relayed, and its id patched, without decoding it whole).
func readFrame(r *bufio.Reader, limit int) ([]byte, error) {
	var out []byte
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
// this daemon routed by.
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
			s, ok := jsonscan.String(value)
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
	return m, ok && (m.method != "" || m.id != nil)
}

// member returns the value of the member name of the JSON object obj (nil: none, or obj is not
// an object, or the name is ambiguous).
func member(obj []byte, name string) []byte {
	var out []byte
	ok := jsonscan.Members(obj, func(n, v []byte) bool {
		is, unsure := jsonscan.Name(n, name)
		if unsure || (is && out != nil) {
			return false
		}
		if is {
			out = v
		}
		return true
	})
	if !ok {
		return nil
	}
	return out
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
	with  []byte
}

// splice applies edits (in any order, not overlapping) to data, returning a new message.
func splice(data []byte, edits ...edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return a.at - b.at })
	grow := 0
	for _, e := range edits {
		grow += len(e.with) - e.n
	}
	out := make([]byte, 0, len(data)+grow)
	last := 0
	for _, e := range edits {
		out = append(out, data[last:e.at]...)
		out = append(out, e.with...)
		last = e.at + e.n
	}
	return append(out, data[last:]...)
}

// replace returns data with the value sub (a slice of data) replaced by with.
func replace(data, sub, with []byte) []byte {
	return splice(data, edit{at: off(data, sub), n: len(sub), with: with})
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
