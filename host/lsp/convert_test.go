package lsp

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// An editor that declares textOnce gets the text once, for a result of any size: every text block
// leaves content, every other block stays there in order. The type is read as encoding/json reads
// it, so a server cannot hide a text block (or pass another block off as text) with escapes, case
// or a repeated name.
func TestWireResultTextOnce(t *testing.T) {
	blocks := []string{
		`{"type":"text","text":"a"}`,
		`{"type":"image","data":"AAAA","mimeType":"image/png"}`,
		`{"text":"b","type":"text"}`,
		`{"type":"te\u0078t","text":"escaped"}`,
		`{"TYPE":"text","text":"case"}`,
		`{"type":"text","type":"image","data":"AAAA","mimeType":"image/png"}`,
		`{"type":"image","type":"text","text":"last wins"}`,
		`{"type":"resource","resource":{"uri":"x:/y","type":"text"}}`,
		`{"type":"audio","data":"AAAA","mimeType":"audio/wav"}`,
		`{"type":"text","type":null,"text":"a null does not undo it"}`,
	}
	r := mcpbridge.Result{Name: "mcp__s__t", Text: "a\nb", Bytes: 3}
	for _, b := range blocks {
		r.Content = append(r.Content, json.RawMessage(b))
	}
	got := wireResult(r, true)
	var kept []string
	for _, b := range got.Content {
		kept = append(kept, string(b))
	}
	want := []string{blocks[1], blocks[5], blocks[7], blocks[8]}
	if diff := cmp.Diff(want, kept); diff != "" || !got.TextOmitted || got.Text != r.Text {
		t.Errorf("textOnce: textOmitted %v, text %q; content (-want +got):\n%s", got.TextOmitted, got.Text, diff)
	}

	if all := wireResult(r, false); len(all.Content) != len(blocks) || all.TextOmitted {
		t.Errorf("without textOnce: %d blocks, textOmitted %v; want all %d", len(all.Content), all.TextOmitted, len(blocks))
	}
	img := mcpbridge.Result{Content: []json.RawMessage{json.RawMessage(blocks[1])}}
	if got := wireResult(img, true); got.TextOmitted || len(got.Content) != 1 {
		t.Errorf("an image-only result: textOmitted %v, %d blocks; want false, 1", got.TextOmitted, len(got.Content))
	}
}
