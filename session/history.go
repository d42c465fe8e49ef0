package session

import (
	"encoding/json"
	"fmt"

	"github.com/switchboard-dev/switchboard/session/llm"
)

// History is a conversation's append-only message list. Its invariant: every assistant message
// with tool calls is immediately followed by exactly one tool message per call, in call order,
// and tool messages appear nowhere else. The loop appends a tool-call message and its results in
// one AppendToolRound so the invariant holds after every append. Not safe for concurrent use (a
// conversation runs one turn at a time).
type History struct {
	msgs []Message
}

// Messages returns the messages. The caller must not modify them; appends never touch them.
func (h *History) Messages() []Message { return h.msgs[:len(h.msgs):len(h.msgs)] }

// Len returns the number of messages.
func (h *History) Len() int { return len(h.msgs) }

// AppendUser appends a user message.
func (h *History) AppendUser(text string) {
	h.msgs = append(h.msgs, Message{Role: llm.RoleUser, Text: text})
}

// AppendAssistant appends an assistant message without tool calls, with the provider's reasoning
// items when it gave some (nothing when text is empty: an answer without text carries no turn).
func (h *History) AppendAssistant(text string, reasoning ...json.RawMessage) {
	if text != "" {
		h.msgs = append(h.msgs, Message{Role: llm.RoleAssistant, Text: text, Reasoning: reasoning})
	}
}

// AppendToolRound appends an assistant message with tool calls and their results. It refuses (and
// appends nothing) when results do not answer the calls one to one, in order.
func (h *History) AppendToolRound(assistant Message, results []Message) error {
	if err := checkRound(assistant, results); err != nil {
		return err
	}
	h.msgs = append(h.msgs, assistant)
	h.msgs = append(h.msgs, results...)
	return nil
}

func checkRound(a Message, results []Message) error {
	if a.Role != llm.RoleAssistant || len(a.ToolCalls) == 0 {
		return fmt.Errorf("session: history: tool round must start with an assistant message with tool calls")
	}
	if len(results) != len(a.ToolCalls) {
		return fmt.Errorf("session: history: %d tool calls but %d results", len(a.ToolCalls), len(results))
	}
	seen := make(map[string]bool, len(a.ToolCalls))
	for i, c := range a.ToolCalls {
		if c.ID == "" || seen[c.ID] {
			return fmt.Errorf("session: history: tool call %d has an empty or duplicate id %q", i, c.ID)
		}
		seen[c.ID] = true
		r := results[i]
		if r.Role != llm.RoleTool || r.ToolCallID != c.ID {
			return fmt.Errorf("session: history: result %d answers %q (role %s), want call %q", i, r.ToolCallID, r.Role, c.ID)
		}
	}
	return nil
}

// Validate checks the invariant over the whole history.
func (h *History) Validate() error { return ValidateMessages(h.msgs) }

// ValidateMessages checks the History invariant over msgs.
func ValidateMessages(msgs []Message) error {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch {
		case m.Role == llm.RoleTool:
			return fmt.Errorf("session: history: message %d: tool result %q without its tool-call message", i, m.ToolCallID)
		case m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0:
			n := len(m.ToolCalls)
			if i+n > len(msgs)-1 {
				return fmt.Errorf("session: history: message %d: %d tool calls but only %d messages follow", i, n, len(msgs)-1-i)
			}
			if err := checkRound(m, msgs[i+1:i+1+n]); err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
			i += n
		case m.Role != llm.RoleUser && m.Role != llm.RoleAssistant:
			return fmt.Errorf("session: history: message %d: unknown role %q", i, m.Role)
		}
	}
	return nil
}
