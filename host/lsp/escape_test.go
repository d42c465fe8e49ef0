package lsp_test

import (
	"encoding/json"
	"github.com/switchboard-dev/switchboard/host/wire"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// rawIn walks decoded JSON and returns the first string that holds a character that could act on
// a terminal or hide text (lines and tabs aside).
func rawIn(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		for _, r := range v {
			if r != '\n' && r != '\t' && safetext.Needs(r) {
				return v, true
			}
		}
	case []any:
		for _, e := range v {
			if s, bad := rawIn(e); bad {
				return s, true
			}
		}
	case map[string]any:
		for _, e := range v {
			if s, bad := rawIn(e); bad {
				return s, true
			}
		}
	}
	return "", false
}

// TestHostileServerTextReachesTheEditorEscaped: a server that puts ESC[2J, OSC 52, BEL, CR and RLO
// in its stderr, its failure, its args and its tool descriptions: what the editor is shown
// (showMessage, logMessage, serversChanged, switchboard.servers and switchboard.tools) holds none.
func TestHostileServerTextReachesTheEditorEscaped(t *testing.T) {
	evil := "\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\r\u202e"
	env := hosttest.Run(t, hosttest.Config{InitOptions: initOpts(map[string]any{
		"h":      server("--hostile", "--", "arg"+evil),
		"broken": server("--hostile", "--exit-at-start"),
	})})
	env.AwaitServer("h", "ready")
	env.AwaitServer("broken", "failed")
	env.Await("the failure shown", func(s *hosttest.State) bool { return len(s.Messages("window/showMessage", "broken")) > 0 })
	var servers, tools json.RawMessage
	env.MustCommand(wire.CmdServers, nil, &servers)
	env.MustCommand(wire.CmdTools, nil, &tools)
	st := env.State()
	check := func(what string, raws ...json.RawMessage) {
		for _, raw := range raws {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if s, bad := rawIn(v); bad {
				t.Errorf("%s shows %q raw", what, s)
			}
		}
	}
	check("window/showMessage", st.Params("window/showMessage")...)
	check("window/logMessage", st.Params("window/logMessage")...)
	check("switchboard/serversChanged", st.Params(wire.NotifyServersChanged)...)
	check("switchboard.servers", servers)
	check("switchboard.tools", tools)
	if !strings.Contains(string(tools), `Hostile clear\\x1b[2J`) {
		t.Errorf("the hostile tool's description is not shown escaped: %s", tools)
	}
}
