package mcpbridge

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

func readFrames(t *testing.T, input string, limit int) []stdio.Frame {
	t.Helper()
	fr := stdio.NewFrameReader(bufio.NewReaderSize(strings.NewReader(input), 4096), limit, 0)
	var out []stdio.Frame
	for {
		f, err := fr.Next()
		if err != nil {
			return out
		}
		out = append(out, f)
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
			r := stdio.NewFrameReader(bufio.NewReaderSize(strings.NewReader(line), 4096), 64<<20, elide)
			f, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Data) > elide+200 || len(f.Elided) != 1 || !json.Valid(f.Data) {
				t.Fatalf("len %d, elided %v, valid %v", len(f.Data), f.Elided, json.Valid(f.Data))
			}
			var env stdio.Envelope
			json.Unmarshal(f.Data, &env)
			var w wireCallResult
			json.Unmarshal(env.Result, &w)
			n, ok := f.ElidedLen(w.Content[0].text)
			var prefix string
			json.Unmarshal(w.Content[0].text, &prefix)
			if !ok || n != len(want) || !strings.HasPrefix(want, strings.TrimSuffix(prefix, "\uFFFD")) || len(prefix) < elide/6 {
				t.Errorf("elided length %d, %v (want %d); prefix of %d bytes is a prefix: %v", n, ok, len(want), len(prefix), strings.HasPrefix(want, prefix))
			}
		})
	}
}

// TestFrameReaderBigText is the real scale: a text block over stdio.ElideAt decodes to the same
// capped Result as the whole string would.
func TestFrameReaderBigText(t *testing.T) {
	content := strings.Repeat("ab€", stdio.ElideAt/5)
	line := `{"result":{"content":[{"type":"text","text":"` + content + `"}]}}` + "\n"
	f := readFrames(t, line, 64<<20)[0]
	var env stdio.Envelope
	json.Unmarshal(f.Data, &env)
	res := parseCallResult("n", env.Result, &f)
	wantText, _ := Cap(content)
	if res.IsError || res.Bytes != len(content) || res.Text != wantText || len(f.Data) > stdio.ElideAt+100 {
		t.Errorf("error %v, bytes %d (want %d), text ok %v, frame %d bytes", res.IsError, res.Bytes, len(content), res.Text == wantText, len(f.Data))
	}
}

func TestFrameReaderLongNonTextIsTooLarge(t *testing.T) {
	line := `{"result":{"content":[{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("A", 70000) + `"}]}}` + "\n"
	f, err := (stdio.NewFrameReader(bufio.NewReader(strings.NewReader(line)), 1<<20, 65536)).Next()
	if err != nil {
		t.Fatal(err)
	}
	var env stdio.Envelope
	json.Unmarshal(f.Data, &env)
	if res := parseCallResult("n", env.Result, &f); !res.IsError || !strings.Contains(res.Text, "too large") {
		t.Errorf("result = %.200s", res.Text)
	}
}
