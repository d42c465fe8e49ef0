package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// callProgress shows, on stderr, the line of a `switchboard call` that runs as an MCP task (the
// task's status message and the time it has run); Ctrl-C cancels the call, which sends the server
// tasks/cancel. On a terminal the line is rewritten in place every second; otherwise a line is
// written when the status message changes. Other progress is not shown (as before).
type callProgress struct {
	w    io.Writer
	term bool

	mu     sync.Mutex
	tool   string
	shown  bool   // a line is on the terminal, without its newline
	status string // the last line without its elapsed time (not a terminal)
}

var (
	_ host.ToolProgress = (*callProgress)(nil)
	_ host.TaskProgress = (*callProgress)(nil)
)

func (p *callProgress) Start(tool string, stop func()) {
	p.mu.Lock()
	p.tool = tool
	p.mu.Unlock()
}

func (p *callProgress) Report(mcpbridge.Progress) {}

// Task is host.TaskProgress; line is escaped already.
func (p *callProgress) Task(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	text := fmt.Sprintf("switchboard call: %s: %s", safetext.Line(p.tool), line)
	if p.term {
		// \r and erase to the end of the line: the previous line may have been longer.
		fmt.Fprintf(p.w, "\r%s\x1b[K", text)
		p.shown = true
		return
	}
	status := line
	if i := strings.LastIndex(line, " · "); i >= 0 {
		status = line[:i]
	}
	if status != p.status {
		p.status = status
		fmt.Fprintln(p.w, text)
	}
}

func (p *callProgress) End(res mcpbridge.Result, cancelled bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}
