package session

import "encoding/json"

// Event kinds.
const (
	KindText       = "text"       // Text is a delta of the assistant's answer
	KindToolCall   = "toolCall"   // ToolCall: a call and its approval state
	KindToolResult = "toolResult" // Result: the outcome of a call
	KindDone       = "done"       // the turn ended: StopReason, Usage. Always the last event of a turn.
	KindError      = "error"      // Error: what went wrong; a done event (stopReason "error") follows
)

// Approval states of a tool call.
const (
	ApprovalPending = "pending"
	ApprovalAllowed = "allowed"
	ApprovalDenied  = "denied"
)

// Turn stop reasons in done events. Model stop reasons (end_turn, max_tokens, ...) pass through.
const (
	StopEndTurn   = "end_turn"
	StopMaxTokens = "max_tokens"
	StopMaxSteps  = "max_steps" // the iteration cap ended the turn (after one last call without tools)
	StopCancelled = "cancelled"
	StopError     = "error"
)

// Event is exactly the params of the switchboard/event notification (json-marshal it as is).
//
// Every turn emits, in this order per model call: text deltas; then for each tool call one
// toolCall event with approval "pending" (in call order), and per call (calls run in parallel, so
// calls interleave) a toolCall event with "allowed" or "denied" and one toolResult event. A turn
// always ends with exactly one done event, preceded by an error event when it failed.
type Event struct {
	Turn         string           `json:"turn"`
	Conversation string           `json:"conversation"`
	Kind         string           `json:"kind"`
	Text         string           `json:"text,omitempty"`
	ToolCall     *ToolCallEvent   `json:"toolCall,omitempty"`
	Result       *ToolResultEvent `json:"result,omitempty"`
	Usage        *Usage           `json:"usage,omitempty"` // done: the turn's total
	// ConversationUsage (done) is the conversation's total, this turn included.
	ConversationUsage *Usage `json:"conversationUsage,omitempty"`
	StopReason        string `json:"stopReason,omitempty"` // done
	Error             string `json:"error,omitempty"`      // error: the message
}

// ToolCallEvent describes one tool call and its approval state.
type ToolCallEvent struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Approval  string          `json:"approval"`            // pending | allowed | denied
	DecidedBy string          `json:"decidedBy,omitempty"` // permissions.By* or "unknown" / "invalid"; empty while pending
	Reason    string          `json:"reason,omitempty"`    // the gate's sentence, when it gives one
}

// ToolResultEvent is the outcome of one tool call.
type ToolResultEvent struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	IsError bool   `json:"isError"`
	// Truncated is true when the model did not see the whole result (the 1 MiB cap of mcpbridge or
	// the context budget; the rest can be paged with read_tool_result).
	Truncated bool   `json:"truncated"`
	Bytes     int    `json:"bytes"` // size of the full result text
	Text      string `json:"text"`  // a preview: at most PreviewBytes of the text
}

// PreviewBytes bounds ToolResultEvent.Text.
const PreviewBytes = 1024
