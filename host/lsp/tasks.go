package lsp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/host/wire"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// Long calls (MCP tasks): switchboard.tasks lists the running and recent tasks;
// switchboard.cancelTask cancels one this host follows (host/tasks.go). A running task's line
// (status message and elapsed time) is its call's work-done progress (progress.go), whose cancel
// cancels it too.

func (s *server) cmdTasks(ctx context.Context, _, _ json.RawMessage) (any, error) {
	return wire.TasksResult{Tasks: wireTasks(s.app.Tasks())}, nil
}

func (s *server) cmdCancelTask(ctx context.Context, arg, _ json.RawMessage) (any, error) {
	var p wire.CancelTaskParams
	if err := decodeArg(wire.CmdCancelTask, arg, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, lspconn.InvalidParams("%s: id is required", wire.CmdCancelTask)
	}
	if err := s.app.CancelTask(p.ID); err != nil {
		return nil, lspconn.InvalidParams("%s: %v", wire.CmdCancelTask, err)
	}
	return wire.TasksResult{Tasks: wireTasks(s.app.Tasks())}, nil
}

func wireTasks(es []host.TaskEntry) []wire.TaskInfo {
	out := make([]wire.TaskInfo, 0, len(es))
	for _, e := range es {
		out = append(out, wire.TaskInfo{
			ID: e.ID, Server: e.Server, Tool: e.Tool, TaskID: safetext.Line(e.TaskID), StartedBy: e.StartedBy, // the server's id, shown
			Started: e.Started.UTC().Format(time.RFC3339), Updated: e.Updated.UTC().Format(time.RFC3339),
			State: e.State, Status: e.Status, Message: e.Message, Result: e.Result, IsError: e.IsError, Here: e.Here,
		})
	}
	return out
}
