package lsp_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
)

// TestNoFalseAPIKeyWarning: with a provider configured in the editor's settings, the session does
// not start with "API key missing" about the default provider the settings replace.
func TestNoFalseAPIKeyWarning(t *testing.T) {
	env := scriptSession(t, "reply text \"hi\"\n")
	var res chatResult
	env.MustCommand("switchboard.chat", map[string]any{"prompt": "hi"}, &res)
	awaitDone(env, res.Turn)
	if m := env.State().Messages("window/logMessage", "API key missing"); len(m) != 0 {
		t.Errorf("false warning with a configured provider: %+v", m)
	}
}

// TestAPIKeyWarningWhenNoneUsable: without a usable provider the warning is a true one: told once.
func TestAPIKeyWarningWhenNoneUsable(t *testing.T) {
	env := runWith(t, hosttest.Config{})
	st := env.Await("the provider warning", func(s *hosttest.State) bool {
		return len(s.Messages("window/logMessage", "API key missing")) > 0
	})
	if n := len(st.Messages("window/logMessage", "API key missing")); n != 1 {
		t.Errorf("%d provider warnings, want 1", n)
	}
}
