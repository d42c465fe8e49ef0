package mcpbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge/jsonscan"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// wireBlock is one content block of a tools/call result, decoded lazily.
type wireBlock struct {
	raw  stdio.AliasRaw
	typ  string
	text stdio.AliasRaw // the quoted JSON string of a text block
}

func (b *wireBlock) UnmarshalJSON(data []byte) error {
	b.raw = data
	var head struct {
		Type string         `json:"type"`
		Text stdio.AliasRaw `json:"text"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	b.typ, b.text = head.Type, head.Text
	return nil
}

// scanCallResult decodes the usual result (text blocks with plain names) in one pass, as
// encoding/json decodes it into wireCallResult; false: decode it with encoding/json (see package
// jsonscan).
func scanCallResult(raw []byte) (wireCallResult, bool) {
	w, content, ok := scanCallResultInto(raw, nil)
	w.Content = content
	return w, ok
}

// scanCallResultInto is scanCallResult appending the blocks to blocks[:0], and returning them
// apart from w (whose Content it leaves nil): a caller's array then holds the usual result's few
// blocks without an allocation. (In one variable with the structured content, which goes on to
// encoding/json, the array would be moved to the heap.)
func scanCallResultInto(raw []byte, blocks []wireBlock) (w wireCallResult, content []wireBlock, ok bool) {
	ok = jsonscan.Members(raw, func(name, v []byte) bool {
		which, unsure := jsonscan.Which(name, "content", "structuredContent", "isError")
		switch {
		case unsure:
			return false
		case which == 0:
			if string(v) == "null" {
				content = nil
				return true
			}
			content = blocks[:0]
			if content == nil {
				content = []wireBlock{} // empty, not nil, as encoding/json leaves it
			}
			return jsonscan.Elements(v, func(e []byte) bool {
				b, ok := scanBlock(e)
				content = append(content, b)
				return ok
			})
		case which == 1:
			w.StructuredContent = v
		case which == 2:
			switch string(v) {
			case "true":
				w.IsError = true
			case "false":
				w.IsError = false
			case "null":
			default:
				return false
			}
		}
		return true
	})
	return w, content, ok
}

// scanBlock is wireBlock.UnmarshalJSON for a block that is an object with plain names.
func scanBlock(data []byte) (wireBlock, bool) {
	b := wireBlock{raw: data}
	ok := jsonscan.Members(data, func(name, v []byte) bool {
		which, unsure := jsonscan.Which(name, "type", "text")
		switch {
		case unsure:
			return false
		case which == 0:
			if string(v) == `"text"` {
				b.typ = "text" // the usual block, without a copy
				return true
			}
			return jsonscan.SetString(&b.typ, v)
		case which == 1:
			b.text = v
		}
		return true
	})
	return b, ok
}

// wireCallResult is the part of a CallToolResult the registry needs.
type wireCallResult struct {
	Content           []wireBlock    `json:"content"`
	StructuredContent stdio.AliasRaw `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

// textBlock builds a text content block.
func textBlock(text string) json.RawMessage {
	b, _ := json.Marshal(struct { // ignore error: strings always marshal
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", text})
	return b
}

// errorResult is a result the bridge produces itself: {"error": msg} with isError.
func errorResult(name, msg string) Result {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)                        // the text is exactly what PROTOCOL.md spells, <, > and & included
	_ = enc.Encode(map[string]string{"error": msg}) // ignore error: strings always encode
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	text, truncated := Cap(string(b))
	return Result{Name: name, IsError: true, Text: text, Content: []json.RawMessage{textBlock(text)},
		Truncated: truncated, Bytes: len(b)}
}

// unknownToolResult is the result for a name nobody registered (PROTOCOL.md section 5).
func unknownToolResult(name string) Result {
	return errorResult(name, "Unknown tool: "+name)
}

// parseCallResult turns the raw result of tools/call into a capped Result. Each text block is
// capped at MaxResultText and so is their joined text (blocks joined with "\n"); non-text blocks
// are kept as they are; a result over MaxResultTotal after capping becomes an error result.
// raw may alias a frame buffer: nothing in the Result aliases it. fr (nil for transports other
// than stdio) is the frame raw aliases: a string the stdio reader shortened (stdio/frame.go) gives a
// text block's total length, and a shortened string anywhere else makes the result too large.
func parseCallResult(name string, raw []byte, fr *stdio.Frame) Result {
	return parseCallResultSchema(name, raw, fr, nil)
}

// parseCallResultSchema is parseCallResult for a tool that declares outSchema (nil: none): its
// structured content is validated (rich.go) and a mismatch is flagged in Text and StructuredError.
// Non-text blocks the model cannot take as they are (resource links, embedded resources, audio)
// are described in Text, an embedded text resource with its text, so they count against the cap.
// Images are left to the session, which knows whether its model takes them.
func parseCallResultSchema(name string, raw []byte, fr *stdio.Frame, outSchema json.RawMessage) Result {
	if fr == nil {
		fr = &stdio.Frame{}
	}
	var blocks [4]wireBlock // the usual result's blocks stay on the stack
	w, content, ok := scanCallResultInto(raw, blocks[:0])
	if !ok {
		var slow wireCallResult // its own variable: decoded into, it lives on the heap
		if err := json.Unmarshal(raw, &slow); err != nil {
			return errorResult(name, fmt.Sprintf("malformed tools/call result: %v", err))
		}
		w, content = slow, slow.Content
	}
	res := Result{Name: name, IsError: w.IsError, Content: make([]json.RawMessage, 0, len(content))}
	var textsArr [4]cappedString // on the stack, as blocks
	texts := textsArr[:0]
	size, usedElisions := 0, 0
	for _, blk := range content {
		if jsonscan.AmbiguousNames(blk.raw) {
			// The editor reads the block as it is and would show one value; the model would get
			// the other (encoding/json matches names without regard to case).
			return errorResult(name, "malformed content block: two of its member names differ only in case")
		}
		if blk.typ == "text" {
			cs, err := decodeCappedString(blk.text, MaxResultText+utf8Slack)
			if err != nil {
				return errorResult(name, "malformed text content block")
			}
			if n, ok := fr.ElidedLen(blk.text); ok {
				cs.total = n
				usedElisions++
			}
			texts = append(texts, cs)
			capped, cut := capText(cs.prefix, cs.total, MaxResultText)
			res.Truncated = res.Truncated || cut
			if cut {
				res.Content = append(res.Content, textBlock(capped))
			} else {
				res.Content = append(res.Content, json.RawMessage(append([]byte(nil), blk.raw...)))
			}
			size += len(res.Content[len(res.Content)-1])
			continue
		}
		if cs, ok, err := describeBlock(blk, fr); err != nil {
			return errorResult(name, "malformed "+blockType(blk.typ)+" content block")
		} else if ok {
			if cs.elided {
				usedElisions++
			}
			texts = append(texts, cs.cappedString)
			res.Truncated = res.Truncated || cs.total > MaxResultText
		}
		size += len(blk.raw)
		if size > MaxResultTotal {
			return errorResult(name, fmt.Sprintf("tool result too large: over %d bytes of content besides text (limit %d)", size, MaxResultTotal))
		}
		res.Content = append(res.Content, json.RawMessage(append([]byte(nil), blk.raw...)))
	}
	if size > MaxResultTotal {
		return errorResult(name, fmt.Sprintf("tool result too large: %d bytes after the text cap (limit %d)", size, MaxResultTotal))
	}
	if len(fr.Elided) > usedElisions {
		return errorResult(name, fmt.Sprintf("tool result too large: a value besides text is over %d bytes (limit %d in all)", stdio.ElideAt, MaxResultTotal))
	}
	hasStructure := len(w.StructuredContent) > 0 && string(w.StructuredContent) != "null"
	if hasStructure && len(w.StructuredContent) <= MaxResultText {
		// An MCP App's view reads the structure as the server sent it (apps.go).
		res.StructuredContent = json.RawMessage(append([]byte(nil), w.StructuredContent...))
	}
	if len(outSchema) > 0 && !w.IsError {
		if msg := checkStructured(outSchema, w.StructuredContent, hasStructure); msg != "" {
			res.StructuredError = msg
			flag := "[structuredContent does not match the tool's outputSchema: " + msg + "]"
			texts = append([]cappedString{{prefix: flag, total: len(flag)}}, texts...)
		}
	}
	if hasStructure && !structureInTexts(w.StructuredContent, texts) {
		// The text and the structure each reach the model once: the structure is added unless a
		// text block already is its JSON (what the spec asks servers to send).
		sc := compactJSON(w.StructuredContent)
		if len(texts) > 0 {
			sc = append([]byte("structuredContent: "), sc...)
		}
		texts = append(texts, cappedString{prefix: string(sc[:min(len(sc), MaxResultText+utf8Slack)]), total: len(sc)})
	}
	// Join the (already cut) prefixes: each holds at least min(total, cap) bytes, so the joined
	// prefix is exact up to the cap.
	var joined string
	total := 0
	if len(texts) == 1 {
		// The usual result: its one text is the joined text, without a copy.
		t := texts[0]
		joined, total = t.prefix[:utf8Cut(t.prefix, MaxResultText+utf8Slack)], t.total
	} else {
		var b strings.Builder
		for i, t := range texts {
			if i > 0 {
				total++
				if b.Len() < MaxResultText+utf8Slack {
					b.WriteByte('\n')
				}
			}
			total += t.total
			if room := MaxResultText + utf8Slack - b.Len(); room > 0 {
				b.WriteString(t.prefix[:utf8Cut(t.prefix, room)])
			}
		}
		joined = b.String()
	}
	text, cut := capText(joined, total, MaxResultText)
	res.Text, res.Bytes = text, total
	res.Truncated = res.Truncated || cut
	return res
}

// utf8Slack is how many bytes past the cap are decoded so that the cut can find a boundary.
const utf8Slack = 4
