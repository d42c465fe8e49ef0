package mcpbridge

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s: got %q, want %q (run with -update to accept)", name, got, want)
	}
}

// tail is the end of a capped text: the last bytes kept and the marker.
func tail(s string) string { return s[max(0, len(s)-80):] }

func TestCapMarkerGolden(t *testing.T) {
	text, cut := Cap(strings.Repeat("x", 2*MaxResultText+5))
	if !cut || len(text) != MaxResultText+len("\n\n[mcp output truncated: 2097157 bytes total, 1048576 kept]") {
		t.Fatalf("cut=%v len=%d", cut, len(text))
	}
	golden(t, "cap_ascii.golden", tail(text))

	// A 3-byte rune straddling the cap is dropped whole: kept < cap.
	text, _ = Cap(strings.Repeat("x", MaxResultText-1) + "€€")
	if !utf8.ValidString(text) {
		t.Error("cut inside a rune")
	}
	golden(t, "cap_utf8.golden", tail(text))

	if text, cut := Cap(strings.Repeat("x", MaxResultText)); cut || len(text) != MaxResultText {
		t.Errorf("text of exactly the cap was cut")
	}
}

func TestDecodeCappedString(t *testing.T) {
	for _, s := range []string{
		"", "plain", "with \"quotes\" and \\ and \n\t\r\b\f /", "ünïcödé €", "emoji 😀 pair", "\x00\x1f ctrl",
		"lone surrogate x", string([]byte{'a', 0xff, 'b'}), strings.Repeat("é", 50),
	} {
		q, _ := json.Marshal(s)
		var want string
		json.Unmarshal(q, &want)
		for _, keep := range []int{0, 1, 5, 10, 1000} {
			got, err := decodeCappedString(q, keep)
			if err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			if got.total != len(want) || !strings.HasPrefix(want, got.prefix) || len(got.prefix) > keep ||
				(len(want) <= keep && got.prefix != want) || len(got.prefix) < min(len(want), keep)-3 {
				t.Errorf("decode(%s, %d) = %+v; want prefix of %q", q, keep, got, want)
			}
		}
	}
	// Escapes json.Marshal does not produce.
	got, err := decodeCappedString([]byte(`"\u00e9\/\ud83d\ude00"`), 100)
	if err != nil || got.prefix != "é/😀" {
		t.Errorf("escapes = %+v, %v", got, err)
	}
	for _, bad := range []string{`"\x"`, `"abc`, `"\u12"`, "\"a\x01\""} {
		if _, err := decodeCappedString([]byte(bad), 10); err == nil {
			t.Errorf("decode(%s) accepted", bad)
		}
	}
}

func TestParseCallResult(t *testing.T) {
	big := strings.Repeat("é", MaxResultText) // 2 MiB
	raw, _ := json.Marshal(map[string]any{
		"content": []any{
			map[string]any{"type": "text", "text": "first"},
			map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"},
			map[string]any{"type": "text", "text": big},
		},
		"isError": true,
	})
	res := parseCallResult("mcp__s__t", raw, nil)
	if !res.IsError || !res.Truncated || res.Bytes != len("first")+1+len(big) || len(res.Content) != 3 {
		t.Fatalf("result = %+v", res.Truncated)
	}
	if !strings.HasPrefix(res.Text, "first\néé") || !utf8.ValidString(res.Text) {
		t.Errorf("text starts %q", res.Text[:20])
	}
	golden(t, "result_joined.golden", tail(res.Text))
	var img map[string]string
	json.Unmarshal(res.Content[1], &img)
	if img["data"] != "AAAA" {
		t.Errorf("image block = %s", res.Content[1])
	}
	var blk struct{ Text string }
	json.Unmarshal(res.Content[2], &blk)
	golden(t, "result_block.golden", tail(blk.Text))
	if len(blk.Text) > MaxResultText+100 {
		t.Errorf("text block not capped: %d bytes", len(blk.Text))
	}

	// Non-text content beyond MaxResultTotal is an error result.
	huge, _ := json.Marshal(map[string]any{"content": []any{
		map[string]any{"type": "image", "data": strings.Repeat("A", MaxResultTotal), "mimeType": "image/png"},
	}})
	if res := parseCallResult("n", huge, nil); !res.IsError || !strings.Contains(res.Text, "too large") || len(res.Content) != 1 {
		t.Errorf("huge = %+v", res.Text)
	}

	// Structured content only.
	res = parseCallResult("n", []byte(`{"content":[],"structuredContent":{"a":1}}`), nil)
	if res.Text != `{"a":1}` {
		t.Errorf("structured = %q", res.Text)
	}
	if res := parseCallResult("n", []byte(`{"content":[{"type":"text","text":5}]}`), nil); !res.IsError {
		t.Errorf("malformed = %+v", res)
	}
}

// TestDecodeAliasesInput guards the assumption behind stdio.AliasRaw: encoding/json passes
// UnmarshalJSON a sub-slice of the input, so a large result is not copied.
func TestDecodeAliasesInput(t *testing.T) {
	in := []byte(`{"result":{"content":[{"type":"text","text":"abc"}]}}`)
	var env stdio.Envelope
	if err := json.Unmarshal(in, &env); err != nil {
		t.Fatal(err)
	}
	in[len(in)-8] = 'X' // the "a" of "abc", inside the result
	if !strings.Contains(string(env.Result), "X") {
		t.Fatal("stdio.AliasRaw copied its input: the lean read path lost its point (see result.go)")
	}
}
