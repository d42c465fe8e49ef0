package mcpbridge

import (
	"bufio"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func readFrames(t *testing.T, input string, limit int) []frame {
	t.Helper()
	fr := &frameReader{r: bufio.NewReaderSize(strings.NewReader(input), 4096), limit: limit}
	var out []frame
	for {
		f, err := fr.next()
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
		if string(f.data) != lines[i]+"\n" || len(f.elided) != 0 {
			t.Errorf("frame %d = %q (elided %v)", i, f.data, f.elided)
		}
	}
}

func TestFrameReaderElidesLongStrings(t *testing.T) {
	const elide = 64 << 10 // the escape handling, on a small scale
	for _, tc := range []struct {
		name    string
		content string // raw JSON string content
	}{
		{"plain", strings.Repeat("x", elide+12345)},
		{"utf8", strings.Repeat("€", elide/3+1000)},
		{"escapes", strings.Repeat(`\u0041\n\"`, elide/10+1000)},
		{"pairs", strings.Repeat(`\ud83d\ude00é`, elide/14+10)},
		{"lone surrogates", strings.Repeat(`\ud83dx\ude00`, elide/13+10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want string
			if err := json.Unmarshal([]byte(`"`+tc.content+`"`), &want); err != nil {
				t.Fatal(err)
			}
			line := `{"result":{"content":[{"type":"text","text":"` + tc.content + `"}],"isError":false}}` + "\n"
			r := &frameReader{r: bufio.NewReaderSize(strings.NewReader(line), 4096), limit: 64 << 20, elide: elide}
			f, err := r.next()
			if err != nil {
				t.Fatal(err)
			}
			if len(f.data) > elide+200 || len(f.elided) != 1 || !json.Valid(f.data) {
				t.Fatalf("len %d, elided %v, valid %v", len(f.data), f.elided, json.Valid(f.data))
			}
			var env envelope
			json.Unmarshal(f.data, &env)
			var w wireCallResult
			json.Unmarshal(env.Result, &w)
			n, ok := f.elidedLen(w.Content[0].text)
			var prefix string
			json.Unmarshal(w.Content[0].text, &prefix)
			if !ok || n != len(want) || !strings.HasPrefix(want, strings.TrimSuffix(prefix, "\uFFFD")) || len(prefix) < elide/6 {
				t.Errorf("elided length %d, %v (want %d); prefix of %d bytes is a prefix: %v", n, ok, len(want), len(prefix), strings.HasPrefix(want, prefix))
			}
		})
	}
}

// TestFrameReaderBigText is the real scale: a text block over elideAt decodes to the same
// capped Result as the whole string would.
func TestFrameReaderBigText(t *testing.T) {
	content := strings.Repeat("ab€", elideAt/5)
	line := `{"result":{"content":[{"type":"text","text":"` + content + `"}]}}` + "\n"
	f := readFrames(t, line, 64<<20)[0]
	var env envelope
	json.Unmarshal(f.data, &env)
	res := parseCallResult("n", env.Result, &f)
	wantText, _ := Cap(content)
	if res.IsError || res.Bytes != len(content) || res.Text != wantText || len(f.data) > elideAt+100 {
		t.Errorf("error %v, bytes %d (want %d), text ok %v, frame %d bytes", res.IsError, res.Bytes, len(content), res.Text == wantText, len(f.data))
	}
}

func TestFrameReaderLongNonTextIsTooLarge(t *testing.T) {
	line := `{"result":{"content":[{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("A", 70000) + `"}]}}` + "\n"
	f, err := (&frameReader{r: bufio.NewReader(strings.NewReader(line)), limit: 1 << 20, elide: 65536}).next()
	if err != nil {
		t.Fatal(err)
	}
	var env envelope
	json.Unmarshal(f.data, &env)
	if res := parseCallResult("n", env.Result, &f); !res.IsError || !strings.Contains(res.Text, "too large") {
		t.Errorf("result = %.200s", res.Text)
	}
}

func TestFrameReaderLimit(t *testing.T) {
	fr := &frameReader{r: bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 5000)+"\n"), 1024), limit: 4096}
	if _, err := fr.next(); !errors.Is(err, errFrameTooLarge) {
		t.Errorf("err = %v", err)
	}
}
