package script_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-dev/switchboard/session/llm"
	"github.com/switchboard-dev/switchboard/session/script"
)

func run(t *testing.T, p *script.Provider, req llm.Request) ([]llm.Chunk, error) {
	var out []llm.Chunk
	for c, err := range p.Stream(context.Background(), req) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func TestStepsAndChunks(t *testing.T) {
	p, err := script.Parse("t", strings.NewReader(`
# a comment
chunk 4
expect last_user ~ "list"
reply text "héllo wörld"
reply tool_call id=c1 name=mcp__fs__list args={"path": "a b"}
reply tool_call id=c2 name=read_file
reply usage in=3 out=4

reply text "second"
reply stop max_tokens
`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := run(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "list it"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Chunk{
		{Kind: llm.ChunkText, Text: "hél"}, {Kind: llm.ChunkText, Text: "lo w"}, {Kind: llm.ChunkText, Text: "örl"}, {Kind: llm.ChunkText, Text: "d"},
		{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: "c1", Name: "mcp__fs__list", Args: []byte(`{"path": "a b"}`)}},
		{Kind: llm.ChunkToolCall, ToolCall: llm.ToolCall{ID: "c2", Name: "read_file", Args: []byte(`{}`)}},
		{Kind: llm.ChunkUsage, Usage: llm.Usage{InputTokens: 3, OutputTokens: 4}},
		{Kind: llm.ChunkStop, StopReason: llm.StopToolUse},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	if p.Done() == nil {
		t.Error("Done = nil with a step left")
	}
	got, _ = run(t, p, llm.Request{})
	if got[len(got)-1].StopReason != "max_tokens" || p.Done() != nil {
		t.Errorf("second step %+v, Done %v", got, p.Done())
	}
	_, err = run(t, p, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "more"}}})
	if err == nil || !strings.Contains(err.Error(), "only 2 steps") || !strings.Contains(err.Error(), `"more"`) {
		t.Errorf("past the end: %v", err)
	}
}

func TestUnmetExpectationNamesStep(t *testing.T) {
	p, _ := script.Parse("f.script", strings.NewReader("reply text \"a\"\n\nexpect last_tool_result id=c9 ~ `x`\nreply text \"b\"\n"))
	run(t, p, llm.Request{})
	_, err := run(t, p, llm.Request{})
	if err == nil || err.Error() != "script f.script: step 2 (line 3): expect last_tool_result id=c9 ~ `x`: no tool result with id c9 in the request (0 messages)" {
		t.Errorf("err = %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"bogus", `t:1: unknown directive "bogus"`},
		{"reply text nope", "Go-quoted"},
		{"reply tool_call id=c1 name=x args={bad", "not valid JSON"},
		{"expect last_user ~ \"(\"", "error parsing regexp"},
		{"expect last_user ~ \"a\"", "no reply"},
		{"reply tool_call id=c1", "wants name="},
		{"expect whatever ~ \"a\"", "unknown expectation"},
	} {
		_, err := script.Parse("t", strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.in, err, tc.want)
		}
	}
}
