package mcpbridge

// ToolSet is an immutable snapshot of the registered tools. The registry builds a new one
// whenever a server's tools change (connect, list_changed, reconnect, enable/disable, death) and
// publishes it atomically, so a call looks its tool up in O(1) without copying the list or taking
// the registry's lock. A ToolSet and the slices it returns are shared: never modify them. Safe
// for concurrent use.
type ToolSet struct {
	tools []Tool         // sorted by Name in the registry's sets
	index map[string]int // Name -> position in tools
	conns []*conn        // parallel to tools: the connection serving each (nil in NewToolSet's sets)
}

// emptyToolSet is the snapshot of a registry without tools.
var emptyToolSet = &ToolSet{index: map[string]int{}}

// NewToolSet returns a snapshot of tools, in their order (test doubles, embedders). tools is not
// copied; of two tools with one name, Lookup finds the last.
func NewToolSet(tools []Tool) *ToolSet {
	s := &ToolSet{tools: tools, index: make(map[string]int, len(tools))}
	for i, t := range tools {
		s.index[t.Name] = i
	}
	return s
}

// Len is the number of tools.
func (s *ToolSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tools)
}

// All returns the tools (the registry's sorted by Name). The slice is shared: do not modify it.
func (s *ToolSet) All() []Tool {
	if s == nil {
		return nil
	}
	return s.tools
}

// Lookup finds a tool by its registered name.
func (s *ToolSet) Lookup(name string) (Tool, bool) {
	if s == nil {
		return Tool{}, false
	}
	i, ok := s.index[name]
	if !ok {
		return Tool{}, false
	}
	return s.tools[i], true
}

// lookupConn is Lookup with the connection that serves the tool.
func (s *ToolSet) lookupConn(name string) (Tool, *conn, bool) {
	i, ok := s.index[name]
	if !ok || s.conns == nil {
		return Tool{}, nil, false
	}
	return s.tools[i], s.conns[i], true
}
