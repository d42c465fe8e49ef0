package lsp_test

import (
	"context"
	"encoding/json"
	"github.com/switchboard-dev/switchboard/host/wire"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/host/hosttest"
)

// elicitSession starts a session with an mcptest server "e" that has the elicitation tools.
func elicitSession(t *testing.T, forms bool, extra ...any) *hosttest.Env {
	t.Helper()
	env := runWith(t, hosttest.Config{Elicitation: forms,
		InitOptions: initOpts(map[string]any{"t": server(), "e": server("--elicit")}, extra...)})
	env.AwaitServer("e", "ready")
	return env
}

func awaitElicitation(env *hosttest.Env, n int) hosttest.Elicitation {
	env.T.Helper()
	st := env.Await("elicitation requested", func(s *hosttest.State) bool { return len(s.Elicitations()) >= n })
	return st.Elicitations()[n-1]
}

func awaitElicitationResolved(env *hosttest.Env, id string) hosttest.ElicitationResolved {
	env.T.Helper()
	var r hosttest.ElicitationResolved
	env.Await("elicitation "+id+" resolved", func(s *hosttest.State) bool {
		for _, x := range s.ElicitationsResolved() {
			if x.ID == id {
				r = x
				return true
			}
		}
		return false
	})
	return r
}

// serverGot is what the ask/open_url tools of mcptest report the client answered.
func serverGot(t *testing.T, out callOutcome) map[string]any {
	t.Helper()
	if out.err != nil || out.res.IsError {
		t.Fatalf("call = %+v, %v", out.res, out.err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out.res.Text), &got); err != nil {
		t.Fatalf("tool answer %q: %v", out.res.Text, err)
	}
	return got
}

func TestElicitationForm(t *testing.T) {
	env := elicitSession(t, true)
	ch := callAsync(env, "mcp__e__ask", map[string]any{"message": "Who are you?\u202e"}, "always-allow")
	el := awaitElicitation(env, 1)
	if el.Server != "e" || el.Message != `Who are you?\u202e` {
		t.Errorf("elicitation = %+v; want server e and the message with its bidi control escaped", el)
	}
	var names []string
	for _, f := range el.Fields {
		var field struct {
			Name string `json:"name"`
		}
		json.Unmarshal(f, &field) // ignore error: checked below
		names = append(names, field.Name)
	}
	if strings.Join(names, ",") != "name,count,color,agree" {
		t.Errorf("fields %v, want the server's order name,count,color,agree", names)
	}

	// Content that does not fit: InvalidParams naming the field, and still pending.
	err := env.Command(wire.CmdElicit, map[string]any{"id": el.ID, "action": "accept", "content": map[string]any{"name": "Ada", "agree": true, "count": 11}}, nil)
	if hosttest.ErrorCode(err) != -32602 || !strings.Contains(err.Error(), `"count"`) || !strings.Contains(err.Error(), "at most 10") {
		t.Errorf("elicit with count 11 = %v; want InvalidParams about count", err)
	}
	var pending []wire.Elicitation
	env.MustCommand(wire.CmdElicitations, nil, &pending)
	if len(pending) != 1 || pending[0].ID != el.ID || len(pending[0].Fields) != 4 {
		t.Fatalf("pending after a bad answer = %+v", pending)
	}
	env.MustCommand(wire.CmdElicit, map[string]any{"id": el.ID, "action": "accept", "content": map[string]any{"name": "Ada", "agree": true, "count": 4}}, nil)
	got := serverGot(t, <-ch)
	if got["action"] != "accept" || got["content"].(map[string]any)["name"] != "Ada" || got["content"].(map[string]any)["count"] != 4.0 {
		t.Errorf("the server got %v", got)
	}
	if r := awaitElicitationResolved(env, el.ID); r.Action != "accept" || r.By != "user" {
		t.Errorf("resolved = %+v", r)
	}
	// Answered: a second answer is refused.
	if err := env.Command(wire.CmdElicit, map[string]any{"id": el.ID, "action": "decline"}, nil); hosttest.ErrorCode(err) != -32602 {
		t.Errorf("second answer = %v, want InvalidParams", err)
	}
	env.MustCommand(wire.CmdElicitations, nil, &pending)
	if len(pending) != 0 {
		t.Errorf("pending = %+v", pending)
	}
}

func TestElicitationDeclineAndBadAnswers(t *testing.T) {
	env := elicitSession(t, true)
	ch := callAsync(env, "mcp__e__ask", nil, "always-allow")
	el := awaitElicitation(env, 1)
	for _, bad := range []map[string]any{
		{"action": "accept"},              // no id
		{"id": "e99", "action": "accept"}, // unknown
		{"id": el.ID, "action": "maybe"},  // bad action
		{"id": el.ID, "action": "decline", "content": map[string]any{"name": "x"}},                         // content with decline
		{"id": el.ID, "action": "accept", "content": map[string]any{"name": "x", "agree": true, "zzz": 1}}, // unknown field
	} {
		if err := env.Command(wire.CmdElicit, bad, nil); hosttest.ErrorCode(err) != -32602 {
			t.Errorf("elicit %v = %v, want InvalidParams", bad, err)
		}
	}
	env.MustCommand(wire.CmdElicit, map[string]any{"id": el.ID, "action": "decline"}, nil)
	if got := serverGot(t, <-ch); got["action"] != "decline" {
		t.Errorf("the server got %v", got)
	}
}

func TestElicitationTimeout(t *testing.T) {
	env := elicitSession(t, true, "approvalTimeoutSeconds", 0.05)
	ch := callAsync(env, "mcp__e__ask", nil, "always-allow")
	el := awaitElicitation(env, 1)
	if got := serverGot(t, <-ch); got["action"] != "cancel" {
		t.Errorf("the server got %v, want cancel", got)
	}
	if r := awaitElicitationResolved(env, el.ID); r.Action != "cancel" || r.By != "timeout" {
		t.Errorf("resolved = %+v, want cancel by timeout", r)
	}
}

// TestElicitationWithoutForms: an editor without forms is asked a one-field yes/no or choice with
// showMessageRequest; a bigger form is cancelled with a warning naming the server.
func TestElicitationWithoutForms(t *testing.T) {
	env := elicitSession(t, false)
	var mu sync.Mutex
	var asked []hosttest.ShowMessageRequestParams
	env.Editor.SetResponder(func(ctx context.Context, p hosttest.ShowMessageRequestParams) string {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		if strings.Contains(p.Message, "Proceed") {
			return "Yes"
		}
		return "Blue please"
	})
	yesNo := `{"type":"object","properties":{"ok":{"type":"boolean","title":"Proceed"}},"required":["ok"]}`
	got := serverGot(t, <-callAsync(env, "mcp__e__ask", map[string]any{"message": "Go on?", "schema": yesNo}, "always-allow"))
	if got["action"] != "accept" || got["content"].(map[string]any)["ok"] != true {
		t.Errorf("yes/no: the server got %v", got)
	}
	choice := `{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"b","title":"Blue please"}]}}}`
	got = serverGot(t, <-callAsync(env, "mcp__e__ask", map[string]any{"message": "Colour?", "schema": choice}, "always-allow"))
	if got["action"] != "accept" || got["content"].(map[string]any)["c"] != "b" {
		t.Errorf("choice: the server got %v", got)
	}
	mu.Lock()
	if len(asked) != 2 || asked[0].Message != "MCP server 'e' asks: Go on? (Proceed)" || len(asked[1].Actions) != 3 || asked[1].Actions[2].Title != "Decline" {
		t.Errorf("prompts = %+v", asked)
	}
	mu.Unlock()
	got = serverGot(t, <-callAsync(env, "mcp__e__ask", nil, "always-allow")) // four fields
	if got["action"] != "cancel" {
		t.Errorf("a form this editor cannot show: the server got %v, want cancel", got)
	}
	env.Await("warning", func(s *hosttest.State) bool {
		return len(s.Messages("window/logMessage", "MCP server 'e' asked for input this editor cannot show")) == 1
	})
	if n := len(env.State().Elicitations()); n != 0 {
		t.Errorf("%d elicitationRequested sent to an editor without forms", n)
	}
}

func TestElicitationURL(t *testing.T) {
	env := elicitSession(t, false)
	env.Editor.SetResponder(hosttest.Answer(wire.TitleOpen))
	got := serverGot(t, <-callAsync(env, "mcp__e__open_url", map[string]any{"url": "https://example.com/login?x=1"}, "always-allow"))
	if got["action"] != "accept" {
		t.Errorf("the server got %v", got)
	}
	docs := env.State().RequestParams(wire.MethodShowDocument)
	if len(docs) != 1 || !strings.Contains(string(docs[0]), `"uri":"https://example.com/login?x=1"`) || !strings.Contains(string(docs[0]), `"external":true`) {
		t.Errorf("showDocument requests = %s", docs)
	}
	// Not http(s): declined without asking or opening anything.
	got = serverGot(t, <-callAsync(env, "mcp__e__open_url", map[string]any{"url": "file:///etc/passwd"}, "always-allow"))
	if got["action"] != "decline" {
		t.Errorf("file URL: the server got %v, want decline", got)
	}
	if n := len(env.State().RequestParams(wire.MethodShowDocument)); n != 1 {
		t.Errorf("%d showDocument requests, want still 1", n)
	}
	// A user name before the host, long enough that a question cut at its end would show only
	// "https://github.com:443&login...": declined without asking or opening anything.
	asked := len(env.State().RequestParams("window/showMessageRequest"))
	got = serverGot(t, <-callAsync(env, "mcp__e__open_url", map[string]any{"url": "https://github.com:443&login&oauth&client_id=" + strings.Repeat("0", 480) + "@evil.example/login"}, "always-allow"))
	if got["action"] != "decline" {
		t.Errorf("a URL with a user name: the server got %v, want decline", got)
	}
	if n := len(env.State().RequestParams(wire.MethodShowDocument)); n != 1 {
		t.Errorf("%d showDocument requests, want still 1", n)
	}
	if n := len(env.State().RequestParams("window/showMessageRequest")); n != asked {
		t.Errorf("asked %d time(s) about a URL with a user name", n-asked)
	}
	// The question names the site first, in full, however long the URL.
	env.Editor.SetResponder(hosttest.Answer(wire.TitleDecline))
	serverGot(t, <-callAsync(env, "mcp__e__open_url", map[string]any{"url": "https://example.com/" + strings.Repeat("x", 900)}, "always-allow"))
	prompts := env.State().RequestParams("window/showMessageRequest")
	if p := string(prompts[len(prompts)-1]); !strings.Contains(p, "asks you to open a page on https://example.com (https://example.com/xxx") {
		t.Errorf("question = %s", p)
	}
	if got := serverGot(t, <-callAsync(env, "mcp__e__open_url", map[string]any{"url": "https://example.com/"}, "always-allow")); got["action"] != "decline" {
		t.Errorf("declined: the server got %v", got)
	}
}

// TestElicitationLabelsEscaped: the server's labels reach the editor with control and bidi
// characters escaped (values stay as they are, for the answer); a refusal quoting them too.
func TestElicitationLabelsEscaped(t *testing.T) {
	env := elicitSession(t, true)
	schema := `{"type":"object","properties":{"c":{"type":"string","title":"Pick\u202e one","description":"d\u001b[2J",` +
		`"oneOf":[{"const":"v\u202e1","title":"One\u202e"},{"const":"v2","title":"Two"}]}},"required":["c"]}`
	ch := callAsync(env, "mcp__e__ask", map[string]any{"schema": schema}, "always-allow")
	el := awaitElicitation(env, 1)
	var f struct {
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Enum        []string `json:"enum"`
		EnumTitles  []string `json:"enumTitles"`
	}
	if err := json.Unmarshal(el.Fields[0], &f); err != nil {
		t.Fatal(err)
	}
	if f.Title != `Pick\u202e one` || f.Description != `d\x1b[2J` || f.EnumTitles[0] != `One\u202e` || f.Enum[0] != "v\u202e1" {
		t.Errorf("field as shown = %+v", f)
	}
	err := env.Command(wire.CmdElicit, map[string]any{"id": el.ID, "action": "accept", "content": map[string]any{"c": "v3"}}, nil)
	if err == nil || strings.ContainsAny(err.Error(), "\u202e\u001b") {
		t.Errorf("refusal = %v; want an error with the server's text escaped", err)
	}
	env.MustCommand(wire.CmdElicit, map[string]any{"id": el.ID, "action": "accept", "content": map[string]any{"c": "v\u202e1"}}, nil)
	if got := serverGot(t, <-ch); got["content"].(map[string]any)["c"] != "v\u202e1" {
		t.Errorf("the server got %v", got)
	}
}

// TestElicitationWithoutFormsAmbiguous: choices whose buttons would read the same are not offered
// as buttons (a click must map back to one value): cancel, with the warning.
func TestElicitationWithoutFormsAmbiguous(t *testing.T) {
	env := elicitSession(t, false)
	env.Editor.SetResponder(hosttest.Answer("Same"))
	schema := `{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"a","title":"Same"},{"const":"b","title":"Same"}]}}}`
	if got := serverGot(t, <-callAsync(env, "mcp__e__ask", map[string]any{"schema": schema}, "always-allow")); got["action"] != "cancel" {
		t.Errorf("the server got %v, want cancel", got)
	}
	if n := len(env.State().RequestParams("window/showMessageRequest")); n != 0 {
		t.Errorf("%d prompts, want none", n)
	}
}
