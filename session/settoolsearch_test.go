package session_test

import (
	"slices"
	"testing"

	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

// The editor's tool-search settings change at run time (didChangeConfiguration): the next turn
// uses the new threshold and pins, with the same registry snapshot.
func TestSetToolSearchAppliesToNextTurn(t *testing.T) {
	tools := manyTools([]string{"a", "b"}, 10) // 20 MCP tools + 5 built-ins: below the default 40
	rp := &recProvider{p: sessiontest.Script(t, "reply text \"1\"\n\nreply text \"2\"\n\nreply text \"3\"\n")}
	m := session.NewManager(session.Options{Tools: tools, Gate: sessiontest.AllowAll()})
	t.Cleanup(m.Close)
	m.UseProvider(rp)

	runTurnIn(t, m, "", "one")
	m.SetToolSearch(session.ToolSearchOptions{Threshold: 10, AlwaysLoaded: []string{"mcp__b__t3"}})
	runTurnIn(t, m, "", "two")
	m.SetToolSearch(session.ToolSearchOptions{Threshold: -1})
	runTurnIn(t, m, "", "three")

	reqs := rp.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	if got := specNames(reqs[0].Tools); len(got) != 25 || slices.Contains(got, session.ToolSearchTools) {
		t.Errorf("turn 1 (default threshold): tools = %v, want all 25", got)
	}
	want := []string{"read_file", "list_files", "search_files", "edit_file", "read_tool_result", session.ToolSearchTools, "mcp__b__t3"}
	if got := specNames(reqs[1].Tools); !slices.Equal(got, want) {
		t.Errorf("turn 2 (threshold 10, one pin): tools = %v, want %v", got, want)
	}
	if got := specNames(reqs[2].Tools); len(got) != 25 || slices.Contains(got, session.ToolSearchTools) {
		t.Errorf("turn 3 (search off): tools = %v, want all 25", got)
	}
}
