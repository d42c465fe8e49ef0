package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
	"github.com/switchboard-dev/switchboard/permissions"
)

// terminal asks the user questions on a terminal, one at a time: the confirm question and MCP
// elicitations. One goroutine reads lines for all of them, so a question that ended (timeout,
// cancel) never leaves a reader behind to swallow the next answer; and after such a question,
// what was typed before the next one is shown is dropped, not taken as its answer.
type terminal struct {
	mu    sync.Mutex // one question at a time; guards stale, from
	out   io.Writer
	lines chan typedLine // closed at the end of input
	read  atomic.Int64   // lines read so far

	stale bool  // the last question ended unanswered: lines typed since were meant for it
	from  int64 // lines numbered up to this were typed before the current question
}

type typedLine struct {
	text string
	n    int64 // its number, from 1
}

func newTerminal(in io.Reader, out io.Writer) *terminal {
	t := &terminal{out: out, lines: make(chan typedLine)}
	go func() {
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadString('\n')
			if err == nil || line != "" {
				t.lines <- typedLine{strings.TrimRight(line, "\r\n"), t.read.Add(1)}
			}
			if err != nil {
				close(t.lines) // end of input
				return
			}
		}
	}()
	return t
}

// begin starts a question (t.mu held).
func (t *terminal) begin() {
	t.from = 0
	if t.stale {
		t.from = t.read.Load()
		t.stale = false
	}
}

// readLine waits for the next line meant for this question; ok is false at ctx's end (the question
// is then stale) or at the end of input.
func (t *terminal) readLine(ctx context.Context) (string, bool) {
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(t.out)
			t.stale = true
			return "", false
		case line, open := <-t.lines:
			if !open {
				fmt.Fprintln(t.out)
				return "", false
			}
			if line.n <= t.from {
				continue // typed before this question was shown
			}
			return line.text, true
		}
	}
}

// Confirm is permissions.Prompter.
func (t *terminal) Confirm(ctx context.Context, req permissions.Request) (permissions.Answer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.begin()
	args := safetext.Arguments(req.Arguments, 200, "answer v to see the whole call")
	fmt.Fprintf(t.out, "Allow %s? %s\n", safetext.Line(req.Tool), args)
	for {
		fmt.Fprint(t.out, "  [o] Allow once  [t] Allow tool  [s] Allow server  [v] View the whole call  [d] Deny (default): ")
		line, ok := t.readLine(ctx)
		if !ok {
			if ctx.Err() != nil {
				return permissions.AnswerDeny, ctx.Err()
			}
			return permissions.AnswerDeny, permissions.ErrNoAnswer{By: permissions.ByDisconnect} // end of input: nobody answered
		}
		switch a := strings.ToLower(strings.TrimSpace(line)); a {
		case "v", "view":
			fmt.Fprintf(t.out, "%s\n", wholeCall(req.Arguments))
		case "o", "once", "y", "yes":
			return permissions.AnswerOnce, nil
		case "t", "tool", "always":
			return permissions.AnswerAlways, nil
		case "s", "server":
			return permissions.AnswerServer, nil
		case "", "d", "deny", "n", "no":
			return permissions.AnswerDeny, nil
		default:
			// A typo is not a decision: ask again rather than deny (or allow) what was not chosen.
			fmt.Fprintf(t.out, "  %q is not one of the choices; type o, t, s, v or d (Enter denies).\n", safetext.Bounded(line, 40))
		}
	}
}

// wholeCall is the arguments indented for reading, escaped (block form: lines and tabs kept).
func wholeCall(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "  ", "  ") == nil {
		return "  " + safetext.Block(buf.String())
	}
	return "  " + safetext.Line(string(raw))
}

// elicit asks an MCP server's question: a page to open, or a form field by field. An answer that
// does not fit a field is refused with the reason and asked again; the end of input or of ctx
// cancels.
func (t *terminal) elicit(ctx context.Context, e mcpbridge.Elicitation) mcpbridge.ElicitResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.begin()
	cancel := mcpbridge.ElicitResult{Action: mcpbridge.ElicitCancel}
	if e.Mode == "url" {
		u, err := host.ElicitURL(e.URL)
		if err != nil {
			fmt.Fprintf(t.out, "MCP server '%s' asked to open %s: %v; declined.\n", safetext.Line(e.Server), safetext.Bounded(e.URL, 200), err)
			return mcpbridge.ElicitResult{Action: mcpbridge.ElicitDecline}
		}
		fmt.Fprintf(t.out, "MCP server '%s' asks you to open %s\n  %s\n  Open it in your browser, then: ",
			safetext.Line(e.Server), host.ShownURL(u), safetext.Bounded(e.Message, 2000))
		a, ok := t.choose(ctx, "[a] Done  [d] Decline (default): ", []string{"a", "done", "y", "yes"}, []string{"", "d", "decline", "n", "no"})
		switch {
		case !ok:
			return cancel
		case a == 0:
			return mcpbridge.ElicitResult{Action: mcpbridge.ElicitAccept}
		}
		return mcpbridge.ElicitResult{Action: mcpbridge.ElicitDecline}
	}
	fmt.Fprintf(t.out, "MCP server '%s' asks: %s\n", safetext.Line(e.Server), safetext.Bounded(e.Message, 2000))
	content := map[string]any{}
	for _, f := range e.Fields {
		for {
			fmt.Fprintf(t.out, "  %s: ", fieldPrompt(f))
			line, ok := t.readLine(ctx)
			if !ok {
				return cancel
			}
			v, skip, err := parseField(f, strings.TrimSpace(line))
			if err == nil && !skip {
				err = mcpbridge.ValidateElicitation([]mcpbridge.ElicitField{f}, map[string]any{f.Name: v})
			}
			if err != nil {
				fmt.Fprintf(t.out, "    %s\n", safetext.Bounded(err.Error(), 500)) // it quotes the server's titles and values
				continue
			}
			if !skip {
				content[f.Name] = v
			}
			break
		}
	}
	fmt.Fprintf(t.out, "  Send these answers to '%s'? ", safetext.Line(e.Server))
	a, ok := t.choose(ctx, "[a] Accept (default)  [d] Decline  [c] Cancel: ", []string{"", "a", "accept", "y", "yes"}, []string{"d", "decline", "n", "no"}, []string{"c", "cancel"})
	switch {
	case !ok || a == 2:
		return cancel
	case a == 1:
		return mcpbridge.ElicitResult{Action: mcpbridge.ElicitDecline}
	}
	return mcpbridge.ElicitResult{Action: mcpbridge.ElicitAccept, Content: content}
}

// choose shows prompt and reads answers until one is among a choice's words (any case); it
// returns that choice's index. An answer that is no choice is refused and asked again. ok is
// false at the end of input or of ctx.
func (t *terminal) choose(ctx context.Context, prompt string, choices ...[]string) (int, bool) {
	for {
		fmt.Fprint(t.out, prompt)
		line, ok := t.readLine(ctx)
		if !ok {
			return 0, false
		}
		a := strings.ToLower(strings.TrimSpace(line))
		for i, words := range choices {
			if slices.Contains(words, a) {
				return i, true
			}
		}
		fmt.Fprintf(t.out, "  %q is not one of the choices.\n", safetext.Bounded(line, 40))
	}
}

// fieldPrompt is "Title (what it takes, required|optional[, default D])".
func fieldPrompt(f mcpbridge.ElicitField) string {
	label := f.Title
	if label == "" {
		label = f.Name
	}
	var kind string
	switch f.Type {
	case "boolean":
		kind = "y/n"
	case "integer":
		kind = "whole number" + rangeText(f.Minimum, f.Maximum)
	case "number":
		kind = "number" + rangeText(f.Minimum, f.Maximum)
	case "array":
		kind = "one or more of " + safetext.Bounded(strings.Join(f.Enum, ", "), 300) + ", separated by commas"
	default:
		kind = "text"
		if f.Format != "" {
			kind = safetext.Bounded(f.Format, 40)
		}
		if len(f.Enum) > 0 {
			kind = "one of " + safetext.Bounded(strings.Join(f.Enum, ", "), 300)
		}
	}
	need := "optional: empty to skip"
	if f.Required {
		need = "required"
	}
	s := fmt.Sprintf("%s (%s, %s", safetext.Bounded(label, 80), kind, need)
	if f.Default != nil {
		s += ", default " + safetext.Bounded(fmt.Sprint(f.Default), 100)
	}
	s += ")"
	if f.Description != "" {
		s += " " + safetext.Bounded(f.Description, 200)
	}
	return s
}

func rangeText(lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf(" %g..%g", *lo, *hi)
	case lo != nil:
		return fmt.Sprintf(" ≥ %g", *lo)
	case hi != nil:
		return fmt.Sprintf(" ≤ %g", *hi)
	}
	return ""
}

// parseField reads one typed answer; empty takes the default, or skips an optional field.
func parseField(f mcpbridge.ElicitField, s string) (v any, skip bool, err error) {
	if s == "" {
		switch {
		case f.Default != nil:
			return f.Default, false, nil
		case !f.Required:
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("an answer is required")
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, false, nil
		case "n", "no", "false":
			return false, false, nil
		}
		return nil, false, fmt.Errorf("answer y or n")
	case "number", "integer":
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, false, fmt.Errorf("not a number")
		}
		return x, false, nil
	case "array":
		var out []any
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, enumValue(f, part))
			}
		}
		return out, false, nil
	}
	if len(f.Enum) > 0 {
		return enumValue(f, s), false, nil
	}
	return s, false, nil
}

// enumValue maps a typed choice to its value: the value itself, or its title (any case).
func enumValue(f mcpbridge.ElicitField, s string) string {
	for i, v := range f.Enum {
		if strings.EqualFold(s, v) || i < len(f.EnumTitles) && strings.EqualFold(s, f.EnumTitles[i]) {
			return v
		}
	}
	return s
}
