package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/session/sessiontest"
)

// recorder of the requests a provider gets.
type recProvider struct {
	p    session.Provider
	mu   sync.Mutex
	reqs []session.Request
}

func (r *recProvider) Stream(ctx context.Context, req session.Request) iter.Seq2[session.Chunk, error] {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.p.Stream(ctx, req)
}

func (r *recProvider) requests() []session.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// manyTools adds n tools per server: mcp__<server>__t<i>, with distinct descriptions.
func manyTools(servers []string, n int) *sessiontest.Tools {
	tools := sessiontest.NewTools()
	for _, s := range servers {
		for i := range n {
			tools.Add(s, fmt.Sprintf("t%d", i), sessiontest.Text(s+" ok"))
		}
	}
	return tools
}

func runTurnIn(t *testing.T, m *session.Manager, conv, prompt string) (string, []session.Event) {
	t.Helper()
	rec := newRecorder()
	c, _, err := m.Start(context.Background(), session.StartParams{Conversation: conv, Prompt: prompt, Mode: permissions.SingleConfirm}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	evs := rec.wait(t)
	for _, e := range evs {
		if e.Kind == session.KindError {
			t.Errorf("turn failed: %s", e.Error)
		}
	}
	return c, evs
}

func specNames(specs []session.ToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

// Above the threshold the model gets the built-ins and search_tools; found tools are in the next
// step's list (appended: the earlier list stays a byte-identical prefix), a call to a tool that
// was never loaded runs and loads it, nothing is loaded twice, and the used tools stay loaded in
// the next turn.
func TestToolSearchLoadsFoundTools(t *testing.T) {
	tools := manyTools([]string{"github", "jira", "wx"}, 20) // 60 MCP tools
	tools.Add("wx", "forecast", sessiontest.Text("sunny"))
	script := `expect tools ~ "^read_file list_files search_files edit_file read_tool_result search_tools$"
reply tool_call id=c1 name=search_tools args={"query":"forecast"}

expect last_tool_result id=c1 ~ "mcp__wx__forecast"
expect tools ~ " search_tools mcp__wx__forecast$"
reply tool_call id=c2 name=mcp__wx__forecast args={}
reply tool_call id=c3 name=mcp__jira__t7 args={}
reply tool_call id=c4 name=search_tools args={"query":"forecast"}

expect last_tool_result id=c2 ~ "sunny"
expect last_tool_result id=c3 ~ "jira ok"
expect tools ~ " search_tools mcp__wx__forecast mcp__jira__t7$"
reply text "done"

expect tools ~ " search_tools mcp__wx__forecast mcp__jira__t7$"
reply text "again"
`
	rp := &recProvider{p: sessiontest.Script(t, script)}
	m := session.NewManager(session.Options{Tools: tools, Gate: sessiontest.AllowAll()})
	t.Cleanup(m.Close)
	m.UseProvider(rp)
	conv, _ := runTurnIn(t, m, "", "weather?")
	runTurnIn(t, m, conv, "again")
	reqs := rp.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls, want 4", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1], reqs[i]
		if prev.System != cur.System {
			t.Errorf("step %d: system prompt changed", i)
		}
		pb, _ := json.Marshal(prev.Tools)
		cb, _ := json.Marshal(cur.Tools[:len(prev.Tools)])
		if string(pb) != string(cb) {
			t.Errorf("step %d: the earlier tool list is not a byte-identical prefix", i)
		}
		names := specNames(cur.Tools)
		slices.Sort(names)
		if len(slices.Compact(names)) != len(cur.Tools) {
			t.Errorf("step %d: a tool is loaded twice: %v", i, specNames(cur.Tools))
		}
	}
	if !strings.Contains(reqs[0].System, "search_tools") {
		t.Errorf("system prompt does not mention search_tools")
	}
}

// Below the threshold nothing changes: every tool is sent and there is no search_tools.
func TestToolSearchBelowThreshold(t *testing.T) {
	tools := manyTools([]string{"a", "b"}, 10)
	rp := &recProvider{p: sessiontest.Script(t, `reply text "hi"`)}
	m := session.NewManager(session.Options{Tools: tools, Gate: sessiontest.AllowAll()})
	t.Cleanup(m.Close)
	m.UseProvider(rp)
	runTurnIn(t, m, "", "hi")
	got := specNames(rp.requests()[0].Tools)
	if len(got) != 5+20 || slices.Contains(got, "search_tools") {
		t.Errorf("tools = %v, want the 5 built-ins and all 20 MCP tools", got)
	}
}

// The threshold and the pinned tools are settings: pinned tools are always in the list.
func TestToolSearchPinnedAndThreshold(t *testing.T) {
	tools := manyTools([]string{"a", "b"}, 10)
	rp := &recProvider{p: sessiontest.Script(t, `reply text "hi"`)}
	m := session.NewManager(session.Options{Tools: tools, Gate: sessiontest.AllowAll(),
		ToolSearch: session.ToolSearchOptions{Threshold: 10, AlwaysLoaded: []string{"mcp__b__t3", "mcp__a__*"}}})
	t.Cleanup(m.Close)
	m.UseProvider(rp)
	runTurnIn(t, m, "", "hi")
	got := specNames(rp.requests()[0].Tools)
	want := []string{"read_file", "list_files", "search_files", "edit_file", "read_tool_result", "search_tools"}
	for i := range 10 {
		want = append(want, fmt.Sprintf("mcp__a__t%d", i))
	}
	want = append(want, "mcp__b__t3")
	if !slices.Equal(got, want) {
		t.Errorf("tools = %v\nwant %v", got, want)
	}
}

// Every tool is reachable through search_tools: a search by server name finds all of its tools
// (paged by limit), and a search finds a tool by words of its description.
func TestSearchToolsRanking(t *testing.T) {
	tools := manyTools([]string{"github", "jira"}, 25)
	tools.AddTool("jira", "make_issue", "Create a ticket in the bug tracker.", sessiontest.Text("ok"))
	m := session.NewManager(session.Options{Tools: tools, Gate: sessiontest.AllowAll()})
	t.Cleanup(m.Close)
	res, _ := m.CallTool(context.Background(), "search_tools", json.RawMessage(`{"query":"bug tracker ticket"}`), permissions.SingleConfirm)
	var out struct {
		Tools []struct{ Name, Description string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil || len(out.Tools) == 0 || out.Tools[0].Name != "mcp__jira__make_issue" {
		t.Fatalf("search by description: %s (err %v)", res.Text, err)
	}
	res, _ = m.CallTool(context.Background(), "search_tools", json.RawMessage(`{"query":"github","limit":50}`), permissions.SingleConfirm)
	out.Tools = nil
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tl := range out.Tools {
		if strings.HasPrefix(tl.Name, "mcp__github__") {
			n++
		}
	}
	if n != 25 {
		t.Errorf("search by server found %d of 25 github tools: %s", n, res.Text)
	}
}

// The loaded set is bounded (MaxLoaded): past it the earliest loaded tools leave the list, and
// they stay callable.
func TestToolSearchLoadedBound(t *testing.T) {
	tools := manyTools([]string{"a", "b", "c"}, 20)
	script := `reply tool_call id=c1 name=mcp__a__t1 args={}
reply tool_call id=c2 name=mcp__a__t2 args={}
reply tool_call id=c3 name=mcp__a__t3 args={}

expect tools ~ " search_tools mcp__a__t2 mcp__a__t3$"
reply tool_call id=c4 name=mcp__a__t1 args={}

expect last_tool_result id=c4 ~ "a ok"
reply text "ok"
`
	m := session.NewManager(session.Options{Tools: tools, Gate: sessiontest.AllowAll(), ToolSearch: session.ToolSearchOptions{MaxLoaded: 2}})
	t.Cleanup(m.Close)
	m.UseProvider(sessiontest.Script(t, script))
	runTurnIn(t, m, "", "go")
}
