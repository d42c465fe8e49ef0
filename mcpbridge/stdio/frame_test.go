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

// Each frame is a buffer of its own: a response's result aliases it and lives on with the
// caller, while the reader goes on to the next line in its bufio buffer. A frame that reused the
// reader's buffer (or another frame's) would have its bytes overwritten by the next line.
func TestFrameReaderFramesOwnTheirBytes(t *testing.T) {
	for _, size := range []int{16, 4096} { // lines in several chunks, lines in one
		first := `{"jsonrpc":"2.0","id":"sb-1","result":{"content":[{"type":"text","text":"one"}]}}` + "\n"
		second := `{"jsonrpc":"2.0","id":"sb-2","result":{"content":[{"type":"text","text":"TWO"}]}}` + "\n"
		fr := NewFrameReader(bufio.NewReaderSize(strings.NewReader(first+second+first), size), 1<<20, 0)
		f1, err := fr.Next()
		if err != nil {
			t.Fatal(err)
		}
		f2, err := fr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fr.Next(); err != nil {
			t.Fatal(err)
		}
		_ = append(f1.Data, strings.Repeat("x", 200)...) // room past a frame is not another frame's
		if string(f1.Data) != first || string(f2.Data) != second {
			t.Errorf("buffer %d: frames after reading on = %q, %q", size, f1.Data, f2.Data)
		}
	}
}

// cycleReader repeats one line forever.
type cycleReader struct {
	line string
	off  int
}

func (c *cycleReader) Read(p []byte) (int, error) {
	n := copy(p, c.line[c.off:])
	c.off = (c.off + n) % len(c.line)
	return n, nil
}

// A frame that comes whole in one read (the usual answer) costs one allocation: its own buffer,
// made at its size, not grown from nothing by append (five allocations for this line).
func TestFrameReaderOneAllocationPerFrame(t *testing.T) {
	line := `{"jsonrpc":"2.0","id":"sb-12","result":{"content":[{"type":"text","text":"Echo: a \"quoted\" word"}],"isError":false}}` + "\n"
	fr := NewFrameReader(bufio.NewReaderSize(&cycleReader{line: line}, 8<<10), 1<<20, 0)
	var f Frame
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if f, err = fr.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if string(f.Data) != line {
		t.Fatalf("frame = %q", f.Data)
	}
	if allocs != 1 {
		t.Errorf("%v allocations per frame; want 1", allocs)
	}
}
