package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

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
		out = append(out, wireTask(e))
	}
	return out
}

func wireTask(e host.TaskEntry) wire.TaskInfo {
	return wire.TaskInfo{
		ID: e.ID, Server: e.Server, Tool: e.Tool, TaskID: safetext.Line(e.TaskID), StartedBy: e.StartedBy, // the server's id, shown
		Started: e.Started.UTC().Format(time.RFC3339), Updated: e.Updated.UTC().Format(time.RFC3339),
		State: e.State, Status: e.Status, Message: e.Message, Result: e.Result, IsError: e.IsError, ForAgent: e.ForAgent, Here: e.Here,
	}
}

var _ host.TaskResultUI = (*server)(nil)

// OfferTaskResult is host.TaskResultUI: the notice is a window/showMessageRequest with Show result;
// choosing it shows the result: an editor that declared taskResults gets switchboard/showTaskResult
// (its own view), any other a read-only file of it opened with window/showDocument. Dismissing it
// does nothing: the result stays in switchboard.tasks.
func (s *server) OfferTaskResult(level host.Level, msg, id string) {
	typ := protocol.MessageTypeInfo
	switch level {
	case host.LevelWarning:
		typ = protocol.MessageTypeWarning
	case host.LevelError:
		typ = protocol.MessageTypeError
	}
	go func() {
		ctx := s.conn.baseCtx
		s.record("showMessage", map[string]any{"type": int(typ), "message": msg, "actions": []string{wire.TitleShowResult}})
		if _, ok := s.askButtons(ctx, typ, msg, nil, wire.TitleShowResult); !ok {
			return
		}
		if err := s.showTaskResult(ctx, id); err != nil {
			s.showMessage(protocol.MessageTypeWarning, "Switchboard could not show the result: "+safetext.Line(err.Error())+". It is listed by Switchboard: Tasks.")
		}
	}()
}

// showTaskResult shows task id's result, escaped (host.App.TaskResult), the editor's way.
func (s *server) showTaskResult(ctx context.Context, id string) error {
	if s.capabilities().taskResults {
		e, err := s.app.TaskResult(id)
		if err != nil {
			return err
		}
		s.record("showTaskResult", map[string]any{"id": id})
		s.conn.sendJSON(wire.NotifyShowTaskResult, wireTask(e))
		return nil
	}
	path, err := s.app.TaskResultFile(id)
	if err != nil {
		return err
	}
	var shown struct {
		Success bool `json:"success"`
	}
	if err := s.conn.call(ctx, wire.MethodShowDocument, map[string]any{"uri": string(uri.File(path)), "takeFocus": true}, &shown); err != nil {
		return fmt.Errorf("lsp: show %s: %w", path, err)
	}
	if !shown.Success {
		return fmt.Errorf("lsp: the editor did not open %s", path)
	}
	return nil
}
