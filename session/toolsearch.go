package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// ToolSearchTools is the built-in tool that finds and loads MCP tools when there are too many to send.
const ToolSearchTools = "search_tools"

// DefaultToolSearchThreshold is the tool count above which tool search turns on.
const DefaultToolSearchThreshold = 40

// Limits of search_tools.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 50
	maxSearchDescBytes = 300
)

// ToolSearchOptions configures tool search for large tool sets.
type ToolSearchOptions struct {
	// Threshold: with more tools than this (built-ins included), the model gets the always-loaded
	// set plus search_tools instead of every tool. 0 = DefaultToolSearchThreshold; < 0 = never.
	Threshold int
	// AlwaysLoaded are tools the user pinned: exact names, or "prefix*" (e.g. "mcp__github__*").
	AlwaysLoaded []string
	// MaxLoaded bounds the tools loaded by search or use in a conversation (the recently used
	// set); past it the earliest loaded is dropped. 0 = DefaultMaxLoaded.
	MaxLoaded int
}

// DefaultMaxLoaded is the default bound of the loaded set.
const DefaultMaxLoaded = 16

func (o ToolSearchOptions) maxLoaded() int {
	if o.MaxLoaded <= 0 {
		return DefaultMaxLoaded
	}
	return o.MaxLoaded
}

func (o ToolSearchOptions) threshold() int {
	if o.Threshold == 0 {
		return DefaultToolSearchThreshold
	}
	return o.Threshold
}

func (o ToolSearchOptions) pinned(name string) bool {
	for _, p := range o.AlwaysLoaded {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || p == name {
			return true
		}
	}
	return false
}

var searchToolsBuiltin = builtin{
	tool: mcpbridge.Tool{Name: ToolSearchTools, Tool: ToolSearchTools,
		Description: "Find tools of the connected MCP servers by what they do. Not every tool is loaded: search by words of " +
			"the task, a tool name or a server name; the tools found are loaded and can be called from your next step. " +
			"A tool you already know by name can also be called directly.",
		InputSchema: schema(`{"type":"object","properties":{"query":{"type":"string","description":"words describing the task, a tool name or a server name"},"limit":{"type":"integer","description":"most tools to return, default 10, at most 50"}},"required":["query"]}`)},
	readOnly: true,
}

// SetToolSearch replaces the tool-search options (the editor's settings changed). A model call
// gets the options current when its step starts; a snapshot built with other options is rebuilt.
// Safe for concurrent use.
func (m *Manager) SetToolSearch(o ToolSearchOptions) {
	o.AlwaysLoaded = slices.Clone(o.AlwaysLoaded)
	m.toolSearch.Store(&o)
}

// searchOptions is the tool-search options ts was built with (zero: the defaults).
func (ts *toolSet) searchOptions() ToolSearchOptions {
	if ts.search == nil {
		return ToolSearchOptions{}
	}
	return *ts.search
}

func init() { searchToolsBuiltin.run = searchTools } // searchTools reaches builtinByName: no init cycle

// searchOn reports whether the model gets the search set instead of every tool.
func (m *Manager) searchOn(ts *toolSet) bool {
	th := ts.searchOptions().threshold()
	return th >= 0 && len(ts.list) > th
}

// searchBase is the part of the tool list that does not change within a toolSet when search is
// on: the built-ins, search_tools, then the pinned tools in registry order. Built once per
// toolSet (tools snapshot).
func (m *Manager) searchBase(ts *toolSet) []ToolSpec {
	ts.baseOnce.Do(func() {
		base := slices.Clone(ts.specs[:ts.nbuiltin])
		base = append(base, ts.searchSpec)
		for _, s := range ts.specs[ts.nbuiltin:] {
			if ts.searchOptions().pinned(s.Name) {
				base = append(base, s)
			}
		}
		ts.base = base
	})
	return ts.base
}

// offered returns the tool list of the next model call: every tool below the threshold; above
// it the search base and then the conversation's loaded tools, in load order (so the list of a
// step is a byte-identical prefix of the next step's, and caches of the prefix stay valid).
func (m *Manager) offered(ts *toolSet, conv *convo) []ToolSpec {
	if !m.searchOn(ts) {
		return ts.specs
	}
	base := m.searchBase(ts)
	loaded := conv.loadedNames()
	out := slices.Clip(base)
	inBase := make(map[string]bool, len(base))
	for _, s := range base {
		inBase[s.Name] = true
	}
	var extra []ToolSpec
	for _, n := range loaded {
		if i, ok := ts.index[n]; ok && !inBase[n] {
			extra = append(extra, ts.specs[i])
		}
	}
	if room := min(MaxTools-len(base), ts.searchOptions().maxLoaded()); len(extra) > room {
		extra = extra[len(extra)-max(room, 0):] // the most recently loaded
	}
	return append(out, extra...)
}

// load adds tools to the conversation's loaded set (in order, each once). It keeps at most
// maxLoadedKept names; offered sends the most recent MaxLoaded of them.
func (c *convo) load(names ...string) {
	if c == nil {
		return
	}
	c.loadedMu.Lock()
	defer c.loadedMu.Unlock()
	for _, n := range names {
		if !slices.Contains(c.loaded, n) {
			c.loaded = append(c.loaded, n)
		}
	}
	if over := len(c.loaded) - maxLoadedKept; over > 0 {
		c.loaded = slices.Delete(c.loaded, 0, over)
	}
}

// maxLoadedKept bounds a conversation's loaded list in memory.
const maxLoadedKept = 256

func (c *convo) loadedNames() []string {
	c.loadedMu.Lock()
	defer c.loadedMu.Unlock()
	return slices.Clone(c.loaded)
}

// searchNote is added to the system prompt when search is on; it depends only on the tool count
// of the snapshot, so it is identical at every step of a turn.
func searchNote(total, sent int) string {
	return fmt.Sprintf("\n\nThe connected MCP servers have %d tools; only %d are loaded now. Call search_tools to find "+
		"the others by what they do (the tools it finds are loaded for your next step), or call a tool directly "+
		"when you know its name.", total, sent)
}

type searchHit struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func searchTools(ctx context.Context, m *Manager, conv *convo, args json.RawMessage) (string, error) {
	var a struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	terms := searchTerms(a.Query)
	if len(terms) == 0 {
		return "", fmt.Errorf("query is empty: give words describing the task, a tool name or a server name")
	}
	limit := a.Limit
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	limit = min(limit, maxSearchLimit)
	ts := m.snapshot()
	type scored struct {
		i     int
		score int
	}
	var hits []scored
	for i, t := range ts.list[ts.nbuiltin:] {
		if s := scoreTool(t, terms); s > 0 {
			hits = append(hits, scored{i + ts.nbuiltin, s})
		}
	}
	slices.SortStableFunc(hits, func(x, y scored) int { return y.score - x.score })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out := struct {
		Tools []searchHit `json:"tools"`
		Note  string      `json:"note"`
	}{Tools: []searchHit{}}
	for _, h := range hits {
		t := ts.list[h.i]
		out.Tools = append(out.Tools, searchHit{Name: t.Name, Description: cutUTF8(t.Description, maxSearchDescBytes)})
	}
	switch {
	case len(out.Tools) == 0:
		out.Note = "No tool matched. Try other words, a server name, or fewer words."
	case conv == nil:
		out.Note = "Tools found."
	default:
		out.Note = "These tools are loaded and can be called from your next step."
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func searchTerms(q string) []string {
	f := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	slices.Sort(f)
	return slices.Compact(f)
}

// scoreTool ranks a tool for the query terms: the tool's own name weighs most, then the server,
// then the description.
func scoreTool(t mcpbridge.Tool, terms []string) int {
	name, server, desc := strings.ToLower(t.Tool), strings.ToLower(t.Server), strings.ToLower(t.Description)
	if name == "" {
		name = strings.ToLower(t.Name)
	}
	full := strings.ToLower(t.Name)
	score := 0
	for _, term := range terms {
		switch {
		case name == term || full == term:
			score += 8
		case strings.Contains(name, term):
			score += 4
		}
		if server == term {
			score += 3
		}
		if strings.Contains(desc, term) {
			score += 2
		}
	}
	return score
}

// foundTools returns the tool names of a search_tools result (the loop loads them after the
// round, in call order).
func foundTools(result string) []string {
	var out struct {
		Tools []searchHit `json:"tools"`
	}
	if json.Unmarshal([]byte(result), &out) != nil {
		return nil
	}
	names := make([]string, len(out.Tools))
	for i, h := range out.Tools {
		names[i] = h.Name
	}
	return names
}
