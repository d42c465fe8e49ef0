package session

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/session/llm"
)

// Rich tool results (issue 15): images of a result go to the model as images, within a cap;
// resource links are read through the built-in read_resource tool, gated like a call of the
// server's tools.

// MaxImageBytes caps one image sent to the model (decoded bytes). A larger image is described in
// the result's text, not sent.
const MaxImageBytes = 1 << 20

// maxImagesPerResult bounds how many images of one result are sent; the rest are described.
const maxImagesPerResult = 4

// imageTypes are the image types every provider with image input accepts.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// resultImages returns the images of a result's content blocks that may go to the model, and a
// text describing every image block (sent or not, and why not), to append to the result's text.
// An image is sent only when it is valid base64 of an accepted type whose bytes are that type (a
// provider rejects the whole request otherwise) and within MaxImageBytes.
func resultImages(content []json.RawMessage) (images []llm.Image, notes string) {
	var b strings.Builder
	for _, raw := range content {
		var blk struct {
			Type     string `json:"type"`
			MIMEType string `json:"mimeType"`
			Data     string `json:"data"`
		}
		if json.Unmarshal(raw, &blk) != nil || blk.Type != "image" {
			continue
		}
		mime := strings.ToLower(strings.TrimSpace(blk.MIMEType))
		size := base64.StdEncoding.DecodedLen(len(blk.Data))
		why := ""
		var data []byte
		switch {
		case !imageTypes[mime]:
			why = "not shown: the type is not one the model takes (PNG, JPEG, GIF, WebP)"
		case size > MaxImageBytes+3:
			why = fmt.Sprintf("not shown: over the %d-byte limit for images", MaxImageBytes)
		case len(images) >= maxImagesPerResult:
			why = fmt.Sprintf("not shown: only %d images of one result are sent", maxImagesPerResult)
		default:
			var err error
			data, err = base64.StdEncoding.DecodeString(blk.Data)
			size = len(data)
			switch {
			case err != nil:
				why = "not shown: the data is not valid base64"
			case size > MaxImageBytes:
				why = fmt.Sprintf("not shown: over the %d-byte limit for images", MaxImageBytes)
			case http.DetectContentType(data) != mime:
				why = "not shown: the data is not " + mime
			}
		}
		fmt.Fprintf(&b, "\n[image %s, %d bytes", quoteJSON(mime), size)
		if why != "" {
			b.WriteString(", " + why)
		} else {
			images = append(images, llm.Image{MIMEType: mime, Data: blk.Data})
		}
		b.WriteString("]")
	}
	return images, b.String()
}

func quoteJSON(s string) string {
	s = cutUTF8(s, 100)
	b, _ := json.Marshal(s) // ignore error: strings always marshal
	return string(b)
}

// ResourceReader is implemented by Tools that can read MCP resources (*mcpbridge.Registry). With
// it, the built-in read_resource reads the resources that tool results link to.
type ResourceReader interface {
	ReadResource(ctx context.Context, server, uri string) (mcpbridge.ReadResult, error)
}

// ToolReadResource reads an MCP resource by server and URI.
const ToolReadResource = "read_resource"

var readResourceBuiltin = builtin{
	tool: mcpbridge.Tool{Name: ToolReadResource, Tool: ToolReadResource,
		Description: "Read a resource of an MCP server by its URI, such as one a tool result links to (resource_link). Give the server that returned the link.",
		InputSchema: schema(`{"type":"object","properties":{"server":{"type":"string","description":"the MCP server name (the <server> of mcp__<server>__<tool>)"},"uri":{"type":"string","description":"the resource URI"}},"required":["server","uri"]}`)},
	runResult: readResource,
}

type readResourceArgs struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// resourceRequest returns the server a read_resource call reads from, and that server's
// definition fingerprint (from its tools), so the gate decides as for a call of its tools.
func resourceRequest(ts *toolSet, args json.RawMessage) (server, definition string) {
	var a readResourceArgs
	if json.Unmarshal(args, &a) != nil {
		return "", ""
	}
	for _, t := range ts.src.All() {
		if t.Server == a.Server {
			return a.Server, t.Definition
		}
	}
	return a.Server, ""
}

func readResource(ctx context.Context, m *Manager, _ *convo, args json.RawMessage) (mcpbridge.Result, error) {
	var a readResourceArgs
	if err := decodeArgs(args, &a); err != nil {
		return mcpbridge.Result{}, err
	}
	if a.Server == "" || a.URI == "" {
		return mcpbridge.Result{}, errors.New("give both server and uri")
	}
	rr, ok := m.opts.Tools.(ResourceReader)
	if !ok {
		return mcpbridge.Result{}, errors.New("reading MCP resources is not available here")
	}
	res, err := rr.ReadResource(ctx, a.Server, a.URI)
	if err != nil {
		return mcpbridge.Result{}, err
	}
	var text strings.Builder
	var content []json.RawMessage
	truncated := false
	for i, c := range res.Contents {
		if i > 0 {
			text.WriteByte('\n')
		}
		fmt.Fprintf(&text, "[resource uri=%s", quoteJSON(c.URI))
		if c.MIMEType != "" {
			fmt.Fprintf(&text, " mimeType=%s", quoteJSON(c.MIMEType))
		}
		switch {
		case c.Blob != "" && strings.HasPrefix(c.MIMEType, "image/"):
			text.WriteString("]")
			b, _ := json.Marshal(map[string]string{"type": "image", "mimeType": c.MIMEType, "data": c.Blob}) // ignore error: strings
			content = append(content, b)
		case c.Blob != "":
			fmt.Fprintf(&text, ", %d bytes of binary content, not shown]", base64.StdEncoding.DecodedLen(len(c.Blob)))
		default:
			text.WriteString("]\n" + c.Text)
			truncated = truncated || c.Truncated
		}
	}
	s := text.String()
	return mcpbridge.Result{Name: ToolReadResource, Text: s, Bytes: len(s), Truncated: truncated,
		Content: append([]json.RawMessage{textBlock(s)}, content...)}, nil
}
