package main

import "testing"

// switchboard check --json and daemon --json escape what hides text as the prompts do: a
// presentation selector after a letter or another selector (a hidden payload) is written as \u,
// one after a symbol (an emoji) stays; the JSON means the same to a program either way.
func TestJSONForTerminalSelectors(t *testing.T) {
	for in, want := range map[string]string{
		"{\"d\":\"Reads a file.\ufe0f\ufe0e\"}": `{"d":"Reads a file.\ufe0f\ufe0e"}`,
		"{\"d\":\"ok \u2764\ufe0f\"}":           "{\"d\":\"ok \u2764\ufe0f\"}",
		"{\"d\":\"a\u202eb\"}":                  `{"d":"a\u202eb"}`,
	} {
		if got := string(jsonForTerminal([]byte(in))); got != want {
			t.Errorf("jsonForTerminal(%+q) = %+q, want %+q", in, got, want)
		}
	}
}
