package session_test

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/session"
)

func TestHistoryInvariant(t *testing.T) {
	call := func(ids ...string) session.Message {
		m := session.Message{Role: "assistant"}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, session.ToolCall{ID: id, Name: "x"})
		}
		return m
	}
	res := func(id string) session.Message { return session.Message{Role: "tool", ToolCallID: id} }
	user := session.Message{Role: "user", Text: "hi"}
	for _, tc := range []struct {
		msgs []session.Message
		want string // "" = valid
	}{
		{[]session.Message{user, call("a", "b"), res("a"), res("b"), {Role: "assistant", Text: "ok"}}, ""},
		{[]session.Message{user, call("a", "b"), res("a")}, "2 tool calls but only 1 messages follow"},
		{[]session.Message{user, call("a", "b"), res("b"), res("a")}, `answers "b"`},
		{[]session.Message{user, call("a"), res("a"), res("a")}, "without its tool-call message"},
		{[]session.Message{user, call("a", "a"), res("a"), res("a")}, "duplicate"},
		{[]session.Message{user, call("a"), user, res("a")}, `role user`},
	} {
		err := session.ValidateMessages(tc.msgs)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: err = %v, want %q", tc.msgs, err, tc.want)
		}
	}
	var h session.History
	h.AppendUser("x")
	if err := h.AppendToolRound(call("a", "b"), []session.Message{res("a")}); err == nil || h.Len() != 1 {
		t.Errorf("incomplete round accepted (err %v, len %d)", err, h.Len())
	}
	if err := h.AppendToolRound(call("a"), []session.Message{res("a")}); err != nil || h.Validate() != nil {
		t.Errorf("complete round: %v / %v", err, h.Validate())
	}
}
