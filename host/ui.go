package host

import (
	"context"

	"github.com/switchboard-dev/switchboard/mcpbridge"
)

// UI is the only way the application asks or tells the person. The language server (host/lsp)
// implements it over LSP; `switchboard call` implements it on the terminal. Its methods are called
// from many goroutines and must not block for long: a question is shown, not waited for.
type UI interface {
	// Ask shows a pending question. The reply comes back through q.Answer (or App.Answer, from
	// any front end); q.Dismiss says the person closed it without answering. When q is resolved
	// another way (timeout, cancel), q.Done is closed and Resolved is called.
	Ask(q *Question)
	// Resolved tells that q ended; q.Outcome says how.
	Resolved(q *Question)
	// Notify tells the person one thing, in one plain sentence (already escaped).
	Notify(level Level, msg string)
	// ServersChanged gives every server's status (escaped) after a change, latest last.
	ServersChanged(servers []mcpbridge.ServerStatus)
	// ServersStarting says servers are (re)starting: the UI may show their progress until none is
	// starting (App.Servers). Called on a goroutine of its own; it may block until then.
	ServersStarting()
	// ToolProgress returns the observer of one tool call's progress in a chat turn (nil: not shown).
	ToolProgress() ToolProgress
	// ChatEvent tells one step of a chat turn (App.Chat), on the turn's goroutine, in order.
	ChatEvent(ev ChatEvent)
	// Buffer returns the front end's text of an open file (unsaved edits included).
	Buffer(path string) (string, bool)
	// ApplyEdit replaces the whole text of path (the edit_file tool), as the front end does it.
	ApplyEdit(ctx context.Context, path, newText string) (bool, error)
}

// Level is how a notice is shown.
type Level int

// Levels of Notify.
const (
	LevelInfo Level = iota
	LevelWarning
	LevelError
)

// ToolProgress observes one tool call's progress. Start comes first, with the call's tool and a
// stop function that cancels only this call (the result then says the user cancelled it); Report
// runs on one goroutine at a time; End comes once, after the last Report.
type ToolProgress interface {
	Start(tool string, stop func())
	Report(p mcpbridge.Progress)
	End(res mcpbridge.Result, cancelled bool)
}
