package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/switchboard-dev/switchboard/host/wire"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
)

// documents mirrors the editor's open buffers (full and incremental sync), keyed by file path, so
// built-in tools read unsaved text. Safe for concurrent use; the didOpen/didChange/didClose
// notifications apply in wire order because notifications run inline.
type documents struct {
	mu   sync.Mutex
	docs map[string]*document // by cleaned file path
}

type document struct {
	uri     string
	version int32
	text    string
}

func newDocuments() *documents { return &documents{docs: map[string]*document{}} }

func (d *documents) get(path string) (document, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.docs[cleanPath(path)]
	if !ok {
		return document{}, false
	}
	return *doc, true
}

type lspPosition struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start lspPosition `json:"start"`
	End   lspPosition `json:"end"`
}

type textDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int32  `json:"version"`
}

func (s *server) didOpen(ctx context.Context, raw json.RawMessage) error {
	var p struct {
		TextDocument struct {
			URI     string `json:"uri"`
			Version int32  `json:"version"`
			Text    string `json:"text"`
		} `json:"textDocument"`
	}
	if err := lspconn.Decode(wire.MethodDidOpen, raw, &p); err != nil {
		return err
	}
	path, ok := uriToPath(p.TextDocument.URI)
	if !ok {
		return nil // untitled: or other schemes: not a file the tools can name
	}
	s.docs.mu.Lock()
	s.docs.docs[path] = &document{uri: p.TextDocument.URI, version: p.TextDocument.Version, text: p.TextDocument.Text}
	s.docs.mu.Unlock()
	return nil
}

func (s *server) didChange(ctx context.Context, raw json.RawMessage) error {
	var p struct {
		TextDocument   textDocumentIdentifier `json:"textDocument"`
		ContentChanges []struct {
			Range *lspRange `json:"range"`
			Text  string    `json:"text"`
		} `json:"contentChanges"`
	}
	if err := lspconn.Decode(wire.MethodDidChange, raw, &p); err != nil {
		return err
	}
	path, ok := uriToPath(p.TextDocument.URI)
	if !ok {
		return nil
	}
	s.docs.mu.Lock()
	defer s.docs.mu.Unlock()
	doc, ok := s.docs.docs[path]
	if !ok {
		return fmt.Errorf("didChange for %s, which is not open", p.TextDocument.URI)
	}
	for _, c := range p.ContentChanges {
		if c.Range == nil {
			doc.text = c.Text
			continue
		}
		start := offsetOf(doc.text, c.Range.Start)
		end := offsetOf(doc.text, c.Range.End)
		if end < start {
			start, end = end, start
		}
		doc.text = doc.text[:start] + c.Text + doc.text[end:]
	}
	doc.version = p.TextDocument.Version
	return nil
}

func (s *server) didClose(ctx context.Context, raw json.RawMessage) error {
	var p struct {
		TextDocument textDocumentIdentifier `json:"textDocument"`
	}
	if err := lspconn.Decode(wire.MethodDidClose, raw, &p); err != nil {
		return err
	}
	if path, ok := uriToPath(p.TextDocument.URI); ok {
		s.docs.mu.Lock()
		delete(s.docs.docs, path)
		s.docs.mu.Unlock()
	}
	return nil
}

// offsetOf converts an LSP position (line, UTF-16 code units) to a byte offset in text. Positions
// past the end of a line clamp to the line's end; lines past the end clamp to the end of text.
func offsetOf(text string, pos lspPosition) int {
	if pos.Line < 0 {
		return 0
	}
	off := 0
	for line := 0; line < pos.Line; line++ {
		i := indexNewline(text[off:])
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	units := 0
	for off < len(text) && units < pos.Character {
		r, size := utf8.DecodeRuneInString(text[off:])
		if r == '\n' || (r == '\r' && (off+1 >= len(text) || text[off+1] == '\n')) {
			break
		}
		n := utf16.RuneLen(r)
		if n < 1 {
			n = 1
		}
		units += n
		off += size
	}
	return off
}

func indexNewline(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return i
		}
	}
	return -1
}

// endPosition is the LSP position just past the last character of text.
func endPosition(text string) lspPosition {
	line, last := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			line++
			last = i + 1
		}
	}
	units := 0
	for _, r := range text[last:] {
		n := utf16.RuneLen(r)
		if n < 1 {
			n = 1
		}
		units += n
	}
	return lspPosition{Line: line, Character: units}
}
