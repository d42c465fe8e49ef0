package stdio

import (
	"bufio"
	"errors"
	"strings"
	"testing"
)

func readFrames(t *testing.T, input string, limit int) []Frame {
	t.Helper()
	fr := NewFrameReader(bufio.NewReaderSize(strings.NewReader(input), 4096), limit, 0)
	var out []Frame
	for {
		f, err := fr.Next()
		if err != nil {
			return out
		}
		out = append(out, f)
	}
}

func TestFrameReaderSmallFramesUnchanged(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a \"q\" \\ \n \u00e9 \ud83d\ude00 é"}]}}`,
		`not json at all`,
		`{"a":"` + strings.Repeat("x", 10000) + `","b":[1,2,"\\\""]}`,
		``,
	}
	got := readFrames(t, strings.Join(lines, "\n")+"\n", 1<<20)
	if len(got) != len(lines) {
		t.Fatalf("%d frames; want %d", len(got), len(lines))
	}
	for i, f := range got {
		if string(f.Data) != lines[i]+"\n" || len(f.Elided) != 0 {
			t.Errorf("frame %d = %q (elided %v)", i, f.Data, f.Elided)
		}
	}
}

func TestFrameReaderLimit(t *testing.T) {
	fr := NewFrameReader(bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 5000)+"\n"), 1024), 4096, 0)
	if _, err := fr.Next(); !errors.Is(err, errFrameTooLarge) {
		t.Errorf("err = %v", err)
	}
}
