package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"go.lsp.dev/uri"

	"github.com/switchboard-dev/switchboard/host/wire"
)

// Buffer is host.UI: the editor's text of an open file.
func (s *server) Buffer(path string) (string, bool) {
	doc, ok := s.docs.get(path)
	return doc.text, ok
}

// ApplyEdit is host.UI: it replaces the whole text of path with a workspace/applyEdit the user
// can undo.
func (s *server) ApplyEdit(ctx context.Context, path, newText string) (bool, error) {
	path = cleanPath(path)
	var end lspPosition
	docURI := string(uri.File(path))
	create := false
	if doc, ok := s.docs.get(path); ok {
		end = endPosition(doc.text)
		docURI = doc.uri
	} else if b, err := os.ReadFile(path); err == nil {
		end = endPosition(string(b))
	} else if os.IsNotExist(err) {
		create = true
	} else {
		return false, fmt.Errorf("lsp: apply edit: %w", err)
	}
	type textEdit struct {
		Range   lspRange `json:"range"`
		NewText string   `json:"newText"`
	}
	edits := []textEdit{{Range: lspRange{End: end}, NewText: newText}}
	edit := map[string]any{"changes": map[string][]textEdit{docURI: edits}}
	if create {
		edit = map[string]any{"documentChanges": []any{
			map[string]any{"kind": "create", "uri": docURI, "options": map[string]bool{"ignoreIfExists": true}},
			map[string]any{"textDocument": map[string]any{"uri": docURI, "version": nil}, "edits": edits},
		}}
	}
	params := map[string]any{"label": "Switchboard", "edit": edit}
	b, err := json.Marshal(params)
	if err != nil {
		return false, err
	}
	var res struct {
		Applied       bool   `json:"applied"`
		FailureReason string `json:"failureReason"`
	}
	var raw json.RawMessage
	if err := s.conn.call(ctx, wire.MethodApplyEdit, json.RawMessage(b), &raw); err != nil {
		return false, fmt.Errorf("lsp: workspace/applyEdit: %w", err)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return false, fmt.Errorf("lsp: workspace/applyEdit reply: %w", err)
	}
	return res.Applied, nil
}
