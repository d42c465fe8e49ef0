package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/permissions"
)

// TestTerminalElicitation: `switchboard call` asks an MCP server's questions on the terminal, field
// by field, refusing what does not fit with the reason, and the server gets the typed values.
func TestTerminalElicitation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	if fBins.err != nil {
		t.Fatal(fBins.err)
	}
	for _, tc := range []struct {
		name, tool, args, input string
		want                    string   // the tool's report of what the server got
		says                    []string // in the terminal output
	}{
		{"accept", "ask", `{"message":"Who are you?"}`,
			"\nAda\n11\n\nGreen\nmaybe\ny\na\n",
			`{"action":"accept","content":{"agree":true,"color":"green","count":3,"name":"Ada"}}`,
			[]string{"MCP server 'e' asks: Who are you?", "Your name (text, required)", "an answer is required",
				"How many (whole number 1..10, optional: empty to skip, default 3)", `"count" (How many): must be at most 10`,
				"Colour (one of red, green, blue, optional: empty to skip)", "answer y or n"}},
		{"skip optional, then decline", "ask", `{}`, "Bo\n\n\nn\nd\n",
			`{"action":"decline","content":null}`, nil},
		{"end of input cancels", "ask", `{}`, "Bo\n",
			`{"action":"cancel","content":null}`, nil},
		{"a page to open", "open_url", `{"url":"https://example.com/x"}`, "a\n",
			`{"action":"accept","content":null}`, []string{"MCP server 'e' asks you to open a page on https://example.com (https://example.com/x)", "Sign in to continue."}},
		// A user name before the host makes the URL read as another site's where it is cut.
		{"a page whose host hides behind a user name", "open_url", `{"url":"https://github.com:443&login&oauth&client_id=` + strings.Repeat("0", 480) + `@evil.example/login"}`, "a\n",
			`{"action":"decline","content":null}`, []string{"hides the site it opens; declined."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			term := newTerminal(strings.NewReader(tc.input), &out)
			r := mcpbridge.NewRegistry(mcpbridge.Options{Elicit: term.elicit})
			defer r.Close()
			ctx, cancel := context.WithTimeout(context.Background(), faultBound())
			defer cancel()
			r.Apply(ctx, []config.ServerConfig{{Name: "e", Transport: config.TransportStdio, Command: fBins.mcptest,
				Args: []string{"--elicit"}, StartupTimeout: time.Minute, CallTimeout: time.Minute}})
			if err := r.WaitIdle(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := r.Call(ctx, "mcp__e__"+tc.tool, json.RawMessage(tc.args))
			if err != nil || res.IsError {
				t.Fatalf("call = %+v, %v", res, err)
			}
			if res.Text != tc.want {
				t.Errorf("the server got %s, want %s\nterminal:\n%s", res.Text, tc.want, out.String())
			}
			for _, s := range tc.says {
				if !strings.Contains(out.String(), s) {
					t.Errorf("terminal output lacks %q:\n%s", s, out.String())
				}
			}
		})
	}
}

// promptWriter is the terminal's output: it signals every question put ("...(default): ").
type promptWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	prompts chan struct{}
}

func (w *promptWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	w.mu.Unlock()
	if bytes.Contains(p, []byte("(default): ")) {
		w.prompts <- struct{}{}
	}
	return len(p), nil
}

func (w *promptWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestTerminalConfirm: the answers; a question that ended unanswered leaves no reader behind, and
// what was typed after it and before the next question is not taken as the next answer.
func TestTerminalConfirm(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	out := &promptWriter{prompts: make(chan struct{}, 16)}
	term := newTerminal(pr, out)
	req := permissions.Request{Tool: "mcp__e__ask", Server: "e", Arguments: json.RawMessage(`{"a":"\u001b[2J"}`)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ans, err := term.Confirm(ctx, req); ans != permissions.AnswerDeny || err != context.Canceled {
		t.Errorf("cancelled Confirm = %v, %v", ans, err)
	}
	<-out.prompts
	// Typed for the question that ended: must not answer the next one.
	fmt.Fprintln(pw, "o")
	for i := 0; term.read.Load() < 1; i++ {
		if i == 1e8 {
			t.Fatal("the line was never read")
		}
		runtime.Gosched()
	}
	for _, tc := range []struct {
		lines []string // one per prompt shown
		want  permissions.Answer
	}{
		{[]string{"t"}, permissions.AnswerAlways}, {[]string{"o"}, permissions.AnswerOnce}, {[]string{"s"}, permissions.AnswerServer},
		{[]string{""}, permissions.AnswerDeny}, {[]string{"d"}, permissions.AnswerDeny},
		// Not one of the choices: asked again, never taken as Deny (or anything else).
		{[]string{"whatever", "o"}, permissions.AnswerOnce},
		{[]string{"yes please", "ok", "s"}, permissions.AnswerServer},
	} {
		go func() {
			for _, line := range tc.lines {
				<-out.prompts
				fmt.Fprintln(pw, line)
			}
		}()
		if ans, err := term.Confirm(context.Background(), req); ans != tc.want || err != nil {
			t.Errorf("answers %q: Confirm = %v, %v; want %v", tc.lines, ans, err, tc.want)
		}
	}
	if !strings.Contains(out.String(), `"whatever" is not one of the choices`) {
		t.Errorf("an answer that is not a choice was not refused:\n%s", out.String())
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("an escape sequence from the arguments reached the terminal: %q", out.String())
	}
}

// TestTerminalFormEscapes: what a server sends (labels, choices, defaults, formats) reaches the
// terminal with control characters replaced.
func TestTerminalFormEscapes(t *testing.T) {
	bad := "x\u001b[2Ky"
	fields := []mcpbridge.ElicitField{
		{Name: "c", Title: bad, Type: "string", Enum: []string{bad, "ok"}, EnumTitles: []string{bad, "ok"}, Default: bad, Required: true},
		{Name: "f", Type: "string", Format: bad},
	}
	var out bytes.Buffer
	term := newTerminal(strings.NewReader("nope\nok\n\n\n"), &out)
	res := term.elicit(context.Background(), mcpbridge.Elicitation{Server: "e", Mode: "form", Message: bad, Fields: fields})
	if res.Action != mcpbridge.ElicitAccept || res.Content["c"] != "ok" {
		t.Errorf("elicit = %+v", res)
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("an escape sequence from the server reached the terminal: %q", out.String())
	}
}

// TestTerminalConfirmPreview: a long first value does not hide a later key in the question, and
// "v" shows the whole call (escaped) and asks again.
func TestTerminalConfirmPreview(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	out := &promptWriter{prompts: make(chan struct{}, 16)}
	term := newTerminal(pr, out)
	args := `{"text":"` + strings.Repeat("x", 190) + `","then":"rm -rf ~","more":"` + strings.Repeat("y", 190) + `","force":"\u202e"}`
	req := permissions.Request{Tool: "mcp__e__run", Server: "e", Arguments: json.RawMessage(args)}
	go func() {
		<-out.prompts
		fmt.Fprintln(pw, "v")
		<-out.prompts
		fmt.Fprintln(pw, "o")
	}()
	if ans, err := term.Confirm(context.Background(), req); ans != permissions.AnswerOnce || err != nil {
		t.Fatalf("Confirm = %v, %v; want once", ans, err)
	}
	got := out.String()
	question, _, _ := strings.Cut(got, "\n")
	for _, want := range []string{`"then":"rm -rf ~"`, "(+2 more keys: more, force; answer v to see the whole call)", "…(+112 more characters)"} {
		if !strings.Contains(question, want) {
			t.Errorf("question lacks %q:\n%s", want, question)
		}
	}
	if !strings.Contains(got, `"more": "`+strings.Repeat("y", 190)+`"`) || !strings.Contains(got, `"force": "\u202e"`) {
		t.Errorf("v did not show the whole call:\n%s", got)
	}
	if strings.Contains(got, "\u202e") {
		t.Errorf("RLO reached the terminal raw: %q", got)
	}
}
