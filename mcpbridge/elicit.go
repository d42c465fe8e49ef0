package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// Elicitation is a server's request for input from the user (MCP elicitation/create), made while
// it works (typically inside a tool call).
type Elicitation struct {
	Server  string
	Mode    string // "form" or "url"
	Message string
	// Schema is the requested schema of a form: a flat JSON object schema of primitive
	// properties (see ValidateElicitation).
	Schema json.RawMessage
	Fields []ElicitField // the schema flattened (form mode)
	URL    string        // url mode: the page to open
	ID     string        // url mode: the server's elicitation id
}

// Elicitation answers (mcp.ElicitationResponseAction).
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline" // the user said no
	ElicitCancel  = "cancel"  // the user dismissed it, or could not be asked
)

// ElicitResult is the user's answer. Content is only for an accepted form.
type ElicitResult struct {
	Action  string
	Content map[string]any
}

// elicitHandler hands a server's elicitation/create to Options.Elicit. It runs on its own
// goroutine (never the transport's read loop); ctx ends with the server's request.
type elicitHandler struct {
	server string
	fn     func(context.Context, Elicitation) ElicitResult
	tasks  *taskAsks // nil: not counted (2026-07-28 input requests are counted by followTask)
}

// taskAsks counts a 2025-11-25 server's questions per task (the requests whose _meta names a
// related task): past maxInputRounds for one task they are answered cancel without asking the
// person, as a 2026-07-28 task's ninth round is not asked (tasks.go). Safe for concurrent use.
type taskAsks struct {
	log *slog.Logger

	mu sync.Mutex
	n  map[string]int // by task id; bounded by maxCountedTasks
}

// maxCountedTasks bounds the tasks counted per server (the oldest counts are dropped at once).
const maxCountedTasks = 256

// ask counts one question of task id and reports whether it may be put to the person.
func (t *taskAsks) ask(server, id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == nil || len(t.n) >= maxCountedTasks && t.n[id] == 0 {
		t.n = map[string]int{}
	}
	t.n[id]++
	if t.n[id] <= maxInputRounds {
		return true
	}
	if t.n[id] == maxInputRounds+1 {
		t.log.Warn(fmt.Sprintf("MCP server '%s' kept asking questions in one task; after %d, its further questions are answered cancel without asking you", server, maxInputRounds))
	}
	return false
}

// relatedTask is the task id a request's _meta names ("" none).
func relatedTask(ctx context.Context, meta *mcp.Meta) string {
	var sent struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if raw := stdio.RawParams(ctx); raw != nil && json.Unmarshal(raw, &sent) == nil {
		var rt struct {
			TaskID string `json:"taskId"`
		}
		if json.Unmarshal(sent.Meta[mcp.RelatedTaskMetaKey], &rt) == nil {
			return rt.TaskID
		}
		return ""
	}
	if meta != nil {
		if m, ok := meta.AdditionalFields[mcp.RelatedTaskMetaKey].(map[string]any); ok {
			id, _ := m["taskId"].(string)
			return id
		}
	}
	return ""
}

func (h elicitHandler) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p := req.Params
	if id := relatedTask(ctx, p.Meta); id != "" && h.tasks != nil && !h.tasks.ask(h.server, id) {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}}, nil
	}
	e := Elicitation{Server: h.server, Mode: p.Mode, Message: p.Message, URL: p.URL, ID: p.ElicitationID}
	if e.Mode == "" {
		e.Mode = mcp.ElicitationModeForm
	}
	var sent struct {
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if raw := stdio.RawParams(ctx); raw != nil && json.Unmarshal(raw, &sent) == nil && len(sent.RequestedSchema) > 0 {
		e.Schema = sent.RequestedSchema // as sent: the form keeps the server's field order
	} else if p.RequestedSchema != nil {
		// Over HTTP mcp-go hands the schema decoded into a map: fields come in name order.
		b, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("requestedSchema: %w", err)
		}
		e.Schema = b
	}
	if e.Mode == mcp.ElicitationModeForm {
		fields, err := ParseElicitSchema(e.Schema)
		if err != nil {
			return nil, fmt.Errorf("requestedSchema: %w", err)
		}
		e.Fields = fields
	}
	res := h.fn(ctx, e)
	out := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(res.Action)}}
	switch res.Action {
	case ElicitAccept:
		if e.Mode == mcp.ElicitationModeForm {
			if err := ValidateElicitation(e.Fields, res.Content); err != nil {
				return nil, fmt.Errorf("switchboard: the answer does not fit the form: %w", err) // a bug of ours
			}
			out.Content = res.Content
		}
	case ElicitDecline, ElicitCancel:
	default:
		out.Action = mcp.ElicitationResponseActionCancel
	}
	return out, nil
}
