package mcpbridge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseCallResultSchema scans the blocks into an array on its stack (scanCallResultInto): what it
// finds there must be what a slice of its own would hold, whatever the array held before, for
// more blocks than it has room for, and for a "content" given twice (the last one wins, as
// encoding/json has it, and it starts again at the array's first element).
func TestScanCallResultIntoScratch(t *testing.T) {
	text := func(s string) string { return `{"type":"text","text":"` + s + `"}` }
	five := strings.Join([]string{text("a"), text("b"), text("c"), text("d"), text("e")}, ",")
	inputs := append([]string{
		`{"content":[` + five + `]}`,
		`{"content":[` + five + `],"content":[` + text("z") + `]}`,
		`{"content":[` + text("y") + `,` + text("z") + `],"content":[` + five + `]}`,
		`{"content":[` + text("y") + `],"content":null}`,
		`{"content":[]}`,
	}, scanSeeds...)
	for _, in := range inputs {
		want, wantOK := scanCallResult([]byte(in))
		scratch := make([]wireBlock, 4)
		for i := range scratch {
			scratch[i] = wireBlock{raw: []byte(`{"stale":1}`), typ: "stale", text: []byte(`"stale"`)}
		}
		got, content, ok := scanCallResultInto([]byte(in), scratch[:0])
		got.Content = content
		if ok != wantOK {
			t.Errorf("%s: ok = %v, scanCallResult's %v", in, ok, wantOK)
			continue
		}
		if diff := cmp.Diff(callResultView(want), callResultView(got)); ok && diff != "" {
			t.Errorf("%s: into a used array (-own slice +array):\n%s", in, diff)
		}
	}
}

// TestCallResultAllocations: shaping the usual answer (one short text block) costs what the
// Result keeps: its Content slice, the block's copy and the text. The blocks scanned, an empty
// task check and a lone text's join cost nothing (they were five more allocations).
func TestCallResultAllocations(t *testing.T) {
	raw := []byte(`{"content":[{"type":"text","text":"Echo: hello"}],"isError":false}`)
	c := &conn{}
	var res Result
	allocs := testing.AllocsPerRun(100, func() {
		if _, isTask, err := c.createdTask(raw, false); isTask || err != nil {
			t.Fatalf("a task: %v", err)
		}
		res = parseCallResultSchema("mcp__s__echo", raw, nil, nil)
	})
	if res.Text != "Echo: hello" || len(res.Content) != 1 || string(res.Content[0]) != `{"type":"text","text":"Echo: hello"}` || res.IsError {
		t.Fatalf("result = %+v", res)
	}
	if allocs > 3 {
		t.Errorf("%v allocations to shape one text block; want 3", allocs)
	}
}

// The Result's content does not alias the answer's bytes (a frame, or the HTTP transport's
// buffer), whatever the scratch array held.
func TestCallResultOwnsItsContent(t *testing.T) {
	raw := []byte(`{"content":[{"type":"text","text":"one"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}`)
	res := parseCallResultSchema("n", raw, nil, nil)
	for i := range raw {
		raw[i] = 'x'
	}
	got, _ := json.Marshal(res.Content)
	if res.Text != "one" || string(got) != `[{"type":"text","text":"one"},{"type":"image","data":"AAAA","mimeType":"image/png"}]` {
		t.Errorf("after the answer's bytes changed: text %q, content %s", res.Text, got)
	}
}
