package mcpbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Rich tool results (issue 15): what of a result's non-text blocks and structured content the
// model gets as text. Everything a server controls in a description (URIs, names, MIME types) is
// JSON-quoted, so it cannot end the description's line or forge one.

// describedText is a block's text for the model; elided is set when it used one of the frame's
// shortened strings (frame.go).
type describedText struct {
	cappedString
	elided bool
}

// describeBlock returns the model's text for a non-text block: a resource link is listed with its
// URI, an embedded resource is given with its text (or described when binary), audio is
// described. ok is false for blocks the session handles (images) and for unknown types.
func describeBlock(blk wireBlock, fr *frame) (d describedText, ok bool, err error) {
	switch blk.typ {
	case "resource_link":
		var l struct {
			URI, Name, MIMEType, Description string
			Size                             *int64
		}
		if err := json.Unmarshal(blk.raw, &l); err != nil {
			return d, false, err
		}
		s := "[resource_link uri=" + quote(l.URI)
		if l.Name != "" {
			s += " name=" + quote(Cut(l.Name, 200))
		}
		if l.MIMEType != "" {
			s += " mimeType=" + quote(Cut(l.MIMEType, 100))
		}
		s += "] (read it with the read_resource tool)"
		return describedText{cappedString: cappedString{prefix: s, total: len(s)}}, true, nil
	case "resource":
		var r struct {
			Resource struct {
				URI      string   `json:"uri"`
				MIMEType string   `json:"mimeType"`
				Text     aliasRaw `json:"text"`
				Blob     aliasRaw `json:"blob"`
			} `json:"resource"`
		}
		if err := json.Unmarshal(blk.raw, &r); err != nil {
			return d, false, err
		}
		rs := r.Resource
		head := "[resource uri=" + quote(rs.URI)
		if rs.MIMEType != "" {
			head += " mimeType=" + quote(Cut(rs.MIMEType, 100))
		}
		if len(rs.Text) > 0 && string(rs.Text) != "null" {
			cs, err := decodeCappedString(rs.Text, MaxResultText+utf8Slack)
			if err != nil {
				return d, false, err
			}
			if n, ok := fr.elidedLen(rs.Text); ok {
				cs.total, d.elided = n, true
			}
			head += "]\n"
			keep := cs.prefix[:utf8Cut(cs.prefix, MaxResultText+utf8Slack-len(head))]
			d.cappedString = cappedString{prefix: head + keep, total: len(head) + cs.total}
			return d, true, nil
		}
		n := 0
		if len(rs.Blob) >= 2 {
			n = base64Len(len(rs.Blob) - 2)
		}
		s := head + fmt.Sprintf(", %d bytes of binary content, not shown]", n)
		return describedText{cappedString: cappedString{prefix: s, total: len(s)}}, true, nil
	case "audio":
		var a struct{ MIMEType, Data string }
		if err := json.Unmarshal(blk.raw, &a); err != nil {
			return d, false, err
		}
		s := fmt.Sprintf("[audio mimeType=%s, %d bytes, not shown]", quote(Cut(a.MIMEType, 100)), base64Len(len(a.Data)))
		return describedText{cappedString: cappedString{prefix: s, total: len(s)}}, true, nil
	}
	return d, false, nil
}

// base64Len is the decoded size of n bytes of padded base64.
func base64Len(n int) int { return n / 4 * 3 }

// quote is s as a JSON string: no line breaks or control characters, quotes escaped.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // ignore error: strings always encode
	return strings.TrimSuffix(b.String(), "\n")
}

func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// structureInTexts reports whether one of texts (whole, not cut) is the JSON of structured.
func structureInTexts(structured []byte, texts []cappedString) bool {
	if len(structured) > MaxResultText {
		return false
	}
	var want any
	if json.Unmarshal(structured, &want) != nil {
		return false
	}
	for _, t := range texts {
		if t.total != len(t.prefix) {
			continue
		}
		s := strings.TrimSpace(t.prefix)
		if s == "" || (s[0] != '{' && s[0] != '[') {
			continue
		}
		var got any
		if json.Unmarshal([]byte(s), &got) == nil && reflect.DeepEqual(got, want) {
			return true
		}
	}
	return false
}

// schemaCache holds compiled output schemas by their text: a tool's schema is compiled once.
var schemaCache sync.Map // string -> schemaEntry

type schemaEntry struct {
	s   *jsonschema.Schema
	err error
}

// errNoLoad refuses every $ref outside the schema: a server's schema cannot make Switchboard
// read a local file or fetch a URL.
var errNoLoad = errors.New("references outside the schema are not followed")

type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, errNoLoad }

func compileSchema(schema []byte) (*jsonschema.Schema, error) {
	if e, ok := schemaCache.Load(string(schema)); ok {
		return e.(schemaEntry).s, e.(schemaEntry).err
	}
	s, err := func() (*jsonschema.Schema, error) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
		if err != nil {
			return nil, err
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(noLoader{})
		const id = "urn:switchboard:outputSchema"
		if err := c.AddResource(id, doc); err != nil {
			return nil, err
		}
		return c.Compile(id)
	}()
	schemaCache.Store(string(schema), schemaEntry{s, err})
	return s, err
}

// checkStructured validates structured against schema and returns "" or one short line saying
// what is wrong (bounded and on one line: it quotes the server's values).
func checkStructured(schema, structured []byte, has bool) string {
	if !has {
		return "the tool declares an output schema but sent no structuredContent"
	}
	s, err := compileSchema(schema)
	if err != nil {
		return oneLine("the tool's outputSchema cannot be used: " + err.Error())
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured))
	if err != nil {
		return oneLine("malformed structuredContent: " + err.Error())
	}
	if err := s.Validate(inst); err != nil {
		msg := err.Error()
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			if leaves := ve.BasicOutput().Errors; len(leaves) > 0 {
				var parts []string
				for _, u := range leaves {
					if u.Error != nil {
						parts = append(parts, u.InstanceLocation+": "+u.Error.String())
					}
				}
				if len(parts) > 0 {
					msg = strings.Join(parts, "; ")
				}
			}
		}
		return oneLine(msg)
	}
	return ""
}

// oneLine folds s onto one line and bounds it.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = Cut(s, 300) + "..."
	}
	return s
}
