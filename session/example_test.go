package session_test

import (
	"encoding/json"
	"fmt"

	"github.com/switchboard-dev/switchboard/session"
)

// The JSON of each event kind: the params of switchboard/event.
func ExampleEvent() {
	for _, e := range []session.Event{
		{Turn: "turn-2", Conversation: "conv-1", Kind: session.KindText, Text: "Let me "},
		{Turn: "turn-2", Conversation: "conv-1", Kind: session.KindToolCall, ToolCall: &session.ToolCallEvent{
			ID: "c1", Name: "mcp__fs__list", Arguments: json.RawMessage(`{"path":"."}`), Approval: session.ApprovalPending}},
		{Turn: "turn-2", Conversation: "conv-1", Kind: session.KindToolCall, ToolCall: &session.ToolCallEvent{
			ID: "c1", Name: "mcp__fs__list", Arguments: json.RawMessage(`{"path":"."}`), Approval: session.ApprovalDenied, DecidedBy: "user", Reason: "denied by the user"}},
		{Turn: "turn-2", Conversation: "conv-1", Kind: session.KindToolResult, Result: &session.ToolResultEvent{
			ID: "c1", Name: "mcp__fs__list", IsError: false, Truncated: true, Bytes: 52000, Text: "a.go\nb.go\n..."}},
		{Turn: "turn-2", Conversation: "conv-1", Kind: session.KindError, Error: "openai: HTTP 401 Unauthorized (invalid_request_error): Incorrect API key provided"},
		{Turn: "turn-2", Conversation: "conv-1", Kind: session.KindDone, StopReason: session.StopEndTurn, Usage: &session.Usage{InputTokens: 1200, CachedInputTokens: 1000, OutputTokens: 85, Cost: 0.00174},
			ConversationUsage: &session.Usage{InputTokens: 3000, CachedInputTokens: 2000, OutputTokens: 200, Cost: 0.0042}},
	} {
		b, _ := json.Marshal(e)
		fmt.Println(string(b))
	}
	// Output:
	// {"turn":"turn-2","conversation":"conv-1","kind":"text","text":"Let me "}
	// {"turn":"turn-2","conversation":"conv-1","kind":"toolCall","toolCall":{"id":"c1","name":"mcp__fs__list","arguments":{"path":"."},"approval":"pending"}}
	// {"turn":"turn-2","conversation":"conv-1","kind":"toolCall","toolCall":{"id":"c1","name":"mcp__fs__list","arguments":{"path":"."},"approval":"denied","decidedBy":"user","reason":"denied by the user"}}
	// {"turn":"turn-2","conversation":"conv-1","kind":"toolResult","result":{"id":"c1","name":"mcp__fs__list","isError":false,"truncated":true,"bytes":52000,"text":"a.go\nb.go\n..."}}
	// {"turn":"turn-2","conversation":"conv-1","kind":"error","error":"openai: HTTP 401 Unauthorized (invalid_request_error): Incorrect API key provided"}
	// {"turn":"turn-2","conversation":"conv-1","kind":"done","usage":{"inputTokens":1200,"cachedInputTokens":1000,"outputTokens":85,"cost":0.00174},"conversationUsage":{"inputTokens":3000,"cachedInputTokens":2000,"outputTokens":200,"cost":0.0042},"stopReason":"end_turn"}
}
