package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"

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
}

func (h elicitHandler) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p := req.Params
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
