package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// The one-pass decoders of a callTool request must decode exactly what encoding/json decodes (the
// name the gate judges, the arguments it shows and the server gets), or leave it to encoding/json.

var commandSeeds = []string{
	`{"command":"switchboard.callTool","arguments":[{"name":"mcp__t__echo","arguments":{"text":"x"},"mode":"always-allow"}]}`,
	`{"command":"switchboard.callTool","arguments":[{"name":"a"},{"name":"b"}],"workDoneToken":"tok"}`,
	`{"command":"x","arguments":null,"workDoneToken":null}`,
	`{"command":null,"arguments":[],"workDoneToken":7}`,
	`{"Command":"x"}`,
	`{"command":"a","command":"b","arguments":[1],"arguments":[2]}`,
	`{"command":"\u0061"}`,
	`{"name":"mcp__t__echo","arguments":null,"mode":null}`,
	`{"name":"a","NAME":"b"}`,
	`{"name":"a","mode":"single-confirm","mode":null}`,
	`{"name":1}`,
	`{"name":"a","arguments":[1,2]}`,
	"{\"name\":\"\xff\"}",
	`[]`, `null`, ``, `"x"`,
}

// scanExecuteCommand is scanCommand as encoding/json would decode the params (of the arguments,
// only the first is kept).
func scanExecuteCommand(raw json.RawMessage) (executeCommandParams, bool) {
	c, ok := scanCommand(raw)
	p := executeCommandParams{Command: c.name, WorkDoneToken: c.token}
	switch {
	case c.arg != nil:
		p.Arguments = []json.RawMessage{c.arg}
	case c.array:
		p.Arguments = []json.RawMessage{}
	}
	return p, ok
}

func FuzzScanExecuteCommand(f *testing.F) {
	for _, s := range commandSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, ok := scanExecuteCommand(json.RawMessage(in))
		if !ok {
			return
		}
		var want executeCommandParams
		if err := lspconn.Decode(wire.MethodExecuteCommand, json.RawMessage(in), &want); err != nil {
			t.Fatalf("scanExecuteCommand took %q, which encoding/json refuses: %v", in, err)
		}
		if len(want.Arguments) > 1 {
			want.Arguments = want.Arguments[:1] // only the first is used, and kept
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("scanExecuteCommand(%q) differs from encoding/json (-want +got):\n%s", in, diff)
		}
	})
}

func FuzzScanCallToolParams(f *testing.F) {
	for _, s := range commandSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, ok := scanCallToolParams(json.RawMessage(in))
		if !ok {
			return
		}
		var want wire.CallToolParams
		if err := decodeArg(wire.CmdCallTool, json.RawMessage(in), &want); err != nil {
			t.Fatalf("scanCallToolParams took %q, which decodeArg refuses: %v", in, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("scanCallToolParams(%q) differs from decodeArg (-want +got):\n%s", in, diff)
		}
	})
}

// TestScanTakesTheUsualCall: the fast path is taken for an editor's usual callTool.
func TestScanTakesTheUsualCall(t *testing.T) {
	p, ok := scanExecuteCommand(json.RawMessage(commandSeeds[0]))
	if !ok || p.Command != wire.CmdCallTool || len(p.Arguments) != 1 {
		t.Fatalf("scanExecuteCommand = %+v, %v", p, ok)
	}
	c, ok := scanCallToolParams(p.Arguments[0])
	if !ok || c.Name != "mcp__t__echo" || string(c.Arguments) != `{"text":"x"}` || c.Mode == nil || *c.Mode != "always-allow" {
		t.Fatalf("scanCallToolParams = %+v, %v", c, ok)
	}
}

// FuzzMarshalToolResult: the hand-written callTool result is the JSON encoding/json writes (the
// same values; encoding/json also compacts the blocks and escapes <, > and &).
func FuzzMarshalToolResult(f *testing.F) {
	f.Add("mcp__t__echo", "Echo: hi", `{"type":"text","text":"Echo: hi"}`, "", false, 8)
	f.Add("n\u2028<&>", "line\nbreak \xff", "{ \"type\" : \"image\",\n\"data\":\"AA==\" }", "Server 'x' is not running.", true, -1)
	f.Add("x", "", `not json`, "", false, 0)
	f.Add("x", "", ``, "", true, 0)
	f.Fuzz(func(t *testing.T, name, text, block, summary string, flag bool, n int) {
		r := wire.ToolResult{Name: name, IsError: flag, Text: text, Content: []json.RawMessage{json.RawMessage(block)},
			Truncated: !flag, Bytes: n, Summary: summary, TextOmitted: flag}
		for _, content := range [][]json.RawMessage{r.Content, nil, {}} {
			r.Content = content
			got, gerr := marshalToolResult(r)
			want, werr := json.Marshal(r)
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("marshalToolResult(%+v): error %v, encoding/json: %v", r, gerr, werr)
			}
			if werr != nil {
				return
			}
			g, err := decodeNumbers(got)
			if err != nil {
				t.Fatalf("marshalToolResult(%+v) = %q: not JSON: %v", r, got, err)
			}
			w, err := decodeNumbers(want)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Fatalf("marshalToolResult(%+v) differs from encoding/json (-want +got):\n%s", r, diff)
			}
		}
	})
}

// decodeNumbers decodes b keeping numbers as written (a block may hold one past float64's range).
func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the value")
	}
	return v, nil
}
