package session

import (
	"context"
	"encoding/json"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
)

// Tools is what the loop needs from the MCP registry (implemented by *mcpbridge.Registry).
type Tools interface {
	Tools() []mcpbridge.Tool
	Call(ctx context.Context, name string, args json.RawMessage) (mcpbridge.Result, error)
	// Instructions returns each ready server's initialize instructions, by server name.
	Instructions() map[string]string
}

// ToolSnapshotter is implemented by Tools that publish an immutable snapshot of their tools
// (*mcpbridge.Registry). With it, a call finds its tool in O(1) and the tool specs are built once
// per change of the tools; without it, every call builds a snapshot from Tools().
type ToolSnapshotter interface {
	Snapshot() *mcpbridge.ToolSet
}

// Gate is the confirm gate (implemented by *permissions.Gate).
type Gate interface {
	Check(ctx context.Context, req permissions.Request) (permissions.Decision, error)
}

// Workspace is what the built-in editor tools need from the host.
type Workspace interface {
	// Folders returns the workspace folders as absolute paths.
	Folders() []string
	// Buffer returns the editor's current (possibly unsaved) text of an open file, by absolute path.
	Buffer(path string) (text string, ok bool)
	// ApplyEdit replaces the whole text of path through the editor (workspace/applyEdit), so the user
	// sees the change and can undo it. It reports whether the editor applied it.
	ApplyEdit(ctx context.Context, path, newText string) (applied bool, err error)
}
