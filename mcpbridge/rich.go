package mcpbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// Rich tool results (issue 15): what of a result's non-text blocks and structured content the
// model gets as text. Everything a server controls in a description (URIs, names, MIME types) is
// JSON-quoted, so it cannot end the description's line or forge one.

// describedText is a block's text for the model; elided is set when it used one of the frame's
// shortened strings (stdio/frame.go).
type describedText struct {
	cappedString
	elided bool
}

// describeBlock returns the model's text for a non-text block: a resource link is listed with its
// URI, an embedded resource is given with its text (or described when binary), audio is
// described. ok is false for blocks the session handles (images) and for unknown types.
func describeBlock(blk wireBlock, fr *stdio.Frame) (d describedText, ok bool, err error) {
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
				URI      string         `json:"uri"`
				MIMEType string         `json:"mimeType"`
				Text     stdio.AliasRaw `json:"text"`
				Blob     stdio.AliasRaw `json:"blob"`
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
			if n, ok := fr.ElidedLen(rs.Text); ok {
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

// schemaCache holds resolved output schemas by their text: a tool's schema is resolved once.
var schemaCache sync.Map // string -> schemaEntry

type schemaEntry struct {
	s   *jsonschema.Resolved
	err error
}

// errOtherDraft is an output schema of a draft other than 2020-12 and draft-07 (2019-09, draft-04
// ...): its structuredContent is not checked.
var errOtherDraft = errors.New("an output schema of another JSON Schema draft")

// compileSchema resolves an output schema (JSON Schema 2020-12, MCP's default, or draft-07) with
// google/jsonschema-go, the validator mcp-go's own types already link: santhosh-tekuri's compiles
// every draft's meta-schemas at process start (5 ms of every `switchboard serve` start). No loader
// is given, so a $ref outside the schema is an error: a server's schema cannot make Switchboard
// read a local file or fetch a URL.
func compileSchema(schema []byte) (*jsonschema.Resolved, error) {
	if e, ok := schemaCache.Load(string(schema)); ok {
		return e.(schemaEntry).s, e.(schemaEntry).err
	}
	s, err := func() (*jsonschema.Resolved, error) {
		var sc jsonschema.Schema
		if err := json.Unmarshal(schema, &sc); err != nil {
			return nil, err
		}
		// The validator knows exact spellings; servers write http or https, with or without "#".
		switch strings.TrimSuffix(strings.Replace(sc.Schema, "http://", "https://", 1), "#") {
		case "":
		case "https://json-schema.org/draft/2020-12/schema":
			sc.Schema = "https://json-schema.org/draft/2020-12/schema"
		case "https://json-schema.org/draft-07/schema":
			sc.Schema = "http://json-schema.org/draft-07/schema#"
		default:
			return nil, errOtherDraft
		}
		return sc.Resolve(&jsonschema.ResolveOptions{BaseURI: "urn:switchboard:outputSchema"})
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
	if errors.Is(err, errOtherDraft) {
		return "" // not checked: telling the model its result is wrong would be a guess
	}
	if err != nil {
		return oneLine("the tool's outputSchema cannot be used: " + err.Error())
	}
	var inst any
	if err := json.Unmarshal(structured, &inst); err != nil {
		return oneLine("malformed structuredContent: " + err.Error())
	}
	if err := s.Validate(inst); err != nil {
		// "validating root: validating /properties/p: ... validating /properties/x: type: ..."
		// says where in the schema; the innermost step is the one that failed.
		msg := err.Error()
		if i := strings.LastIndex(msg, "validating "); i >= 0 {
			msg = "schema " + msg[i+len("validating "):]
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
