// Package script is a scripted model provider FOR TESTS and for the editor end-to-end tests: it
// replays a conversation written in a small text format instead of calling a model, so the whole
// stack (host, gate, MCP servers, editor UI) can be driven deterministically. It is selected with
// provider type "script" and the script's path. It is not a model and must not be used otherwise.
//
// # Format
//
// One directive per line; blank lines and lines starting with # are ignored except that a blank
// line ends a reply. Each model call consumes one step: the step's expectations are checked
// against the request, then its reply is streamed.
//
//	chunk 8                                   # reply text is streamed in pieces of at most 8 bytes (default 8)
//	expect last_user ~ "list the files"       # regexp (RE2) on the text of the last user message
//	expect last_tool_result id=c1 ~ "a.go"    # regexp on the latest tool result with that call id
//	expect system ~ "third-party"             # regexp on the system prompt
//	expect tools ~ "read_file"                # regexp on the offered tool names, joined with spaces
//	expect no_tools                           # the call must ask for a final answer (iteration cap)
//	reply text "There are 3 files."           # Go-quoted string, streamed in chunks
//	reply tool_call id=c1 name=mcp__fs__list args={"path":"."}
//	reply usage in=120 out=14 cached=100     # input counts the cached (and written) tokens
//	reply stop max_tokens                     # default: tool_use when the reply has calls, else end_turn
//	reply error "overloaded"                  # the model call fails with this message
//	reply hang                                # block until the call is cancelled
//
// Strings are Go string literals: "..." with escapes, or `...` raw (handy for regexps with
// backslashes). Consecutive reply lines form one model response (so several tool_call lines are several calls in
// one response, run in parallel by the loop); an expect line or a blank line after reply lines
// starts the next step. An unmet expectation ends the model call with an error naming the step and
// the script line; so does a model call after the last step. [Provider.Done] reports unconsumed
// steps (tests check it in t.Cleanup).
package script

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/session/llm"
)

type expectKind int

const (
	expLastUser expectKind = iota
	expLastToolResult
	expSystem
	expTools
	expNoTools
)

type expectation struct {
	line int
	src  string
	kind expectKind
	id   string
	re   *regexp.Regexp
}

type replyKind int

const (
	repText replyKind = iota
	repToolCall
	repUsage
	repStop
	repError
	repHang
)

type reply struct {
	kind  replyKind
	text  string
	call  llm.ToolCall
	usage llm.Usage
}

type step struct {
	line    int // first line of the step
	expects []expectation
	replies []reply
}

// Provider replays a script. It is safe for concurrent use; model calls consume steps in order.
type Provider struct {
	name  string
	chunk int

	mu   sync.Mutex
	next int // guarded by mu
	// steps is immutable after Parse.
	steps []step
}

var _ llm.Provider = (*Provider)(nil)

// Load parses the script file at path.
func Load(path string) (*Provider, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	defer f.Close()
	return Parse(path, f)
}

// Parse parses a script; name is used in error messages (a file name).
func Parse(name string, r io.Reader) (*Provider, error) {
	p := &Provider{name: name, chunk: 8}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var cur *step
	gap := false
	newStep := func(line int) {
		p.steps = append(p.steps, step{line: line})
		cur = &p.steps[len(p.steps)-1]
	}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			gap = true
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		bad := func(format string, args ...any) error {
			return fmt.Errorf("script %s:%d: %s", name, n, fmt.Sprintf(format, args...))
		}
		switch verb {
		case "chunk":
			v, err := strconv.Atoi(rest)
			if err != nil || v < 1 {
				return nil, bad("chunk wants a positive number, got %q", rest)
			}
			p.chunk = v
		case "expect":
			if cur == nil || len(cur.replies) > 0 {
				newStep(n)
			}
			e, err := parseExpect(rest)
			if err != nil {
				return nil, bad("%v", err)
			}
			e.line, e.src = n, line
			cur.expects = append(cur.expects, e)
		case "reply":
			if cur == nil || (len(cur.replies) > 0 && gap) {
				newStep(n)
			}
			rp, err := parseReply(rest)
			if err != nil {
				return nil, bad("%v", err)
			}
			cur.replies = append(cur.replies, rp)
		default:
			return nil, bad("unknown directive %q (want expect, reply or chunk)", verb)
		}
		gap = false
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	for _, s := range p.steps {
		if len(s.replies) == 0 {
			return nil, fmt.Errorf("script %s:%d: step has expectations but no reply", name, s.line)
		}
	}
	return p, nil
}

// quotedOrRegexp parses `~ "regexp"`.
func parseMatch(s string) (*regexp.Regexp, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "~") {
		return nil, fmt.Errorf(`want ~ "regexp", got %q`, s)
	}
	q := strings.TrimSpace(s[1:])
	v, err := strconv.Unquote(q)
	if err != nil {
		return nil, fmt.Errorf("want a Go-quoted string (\"...\" or `...`) after ~, got %s", q)
	}
	return regexp.Compile(v)
}

func parseExpect(s string) (expectation, error) {
	what, rest, _ := strings.Cut(s, " ")
	var e expectation
	var err error
	switch what {
	case "last_user":
		e.kind = expLastUser
	case "system":
		e.kind = expSystem
	case "tools":
		e.kind = expTools
	case "no_tools":
		e.kind = expNoTools
		if strings.TrimSpace(rest) != "" {
			return e, fmt.Errorf("no_tools takes no argument")
		}
		return e, nil
	case "last_tool_result":
		e.kind = expLastToolResult
		idf, r2, _ := strings.Cut(strings.TrimSpace(rest), " ")
		id, ok := strings.CutPrefix(idf, "id=")
		if !ok || id == "" {
			return e, fmt.Errorf("last_tool_result wants id=<call id>")
		}
		e.id, rest = id, r2
	default:
		return e, fmt.Errorf("unknown expectation %q (want last_user, last_tool_result, system, tools or no_tools)", what)
	}
	e.re, err = parseMatch(rest)
	return e, err
}

func parseReply(s string) (reply, error) {
	what, rest, _ := strings.Cut(s, " ")
	rest = strings.TrimSpace(rest)
	switch what {
	case "text", "error":
		v, err := strconv.Unquote(rest)
		if err != nil {
			return reply{}, fmt.Errorf("reply %s wants a Go-quoted string, got %s", what, rest)
		}
		if what == "error" {
			return reply{kind: repError, text: v}, nil
		}
		return reply{kind: repText, text: v}, nil
	case "tool_call":
		var c llm.ToolCall
		for rest != "" {
			if a, ok := strings.CutPrefix(rest, "args="); ok {
				if !json.Valid([]byte(a)) {
					return reply{}, fmt.Errorf("tool_call args is not valid JSON: %s", a)
				}
				c.Args = json.RawMessage(a)
				break
			}
			var tok string
			tok, rest, _ = strings.Cut(rest, " ")
			rest = strings.TrimSpace(rest)
			k, v, _ := strings.Cut(tok, "=")
			switch k {
			case "id":
				c.ID = v
			case "name":
				c.Name = v
			default:
				return reply{}, fmt.Errorf("tool_call: unknown field %q (want id=, name=, args=)", tok)
			}
		}
		if c.Name == "" {
			return reply{}, fmt.Errorf("tool_call wants name=")
		}
		if c.Args == nil {
			c.Args = json.RawMessage("{}")
		}
		return reply{kind: repToolCall, call: c}, nil
	case "usage":
		var u llm.Usage
		for _, f := range strings.Fields(rest) {
			k, v, _ := strings.Cut(f, "=")
			n, err := strconv.Atoi(v)
			if err != nil {
				return reply{}, fmt.Errorf("usage: bad number in %q", f)
			}
			switch k {
			case "in":
				u.InputTokens = n
			case "out":
				u.OutputTokens = n
			case "cached":
				u.CachedInputTokens = n
			case "write":
				u.CacheWriteTokens = n
			default:
				return reply{}, fmt.Errorf("usage: unknown field %q (want in=, out=, cached=, write=)", k)
			}
		}
		return reply{kind: repUsage, usage: u}, nil
	case "stop":
		if rest == "" {
			return reply{}, fmt.Errorf("stop wants a reason")
		}
		return reply{kind: repStop, text: rest}, nil
	case "hang":
		return reply{kind: repHang}, nil
	}
	return reply{}, fmt.Errorf("unknown reply %q (want text, tool_call, usage, stop, error or hang)", what)
}

// Remaining returns the number of unconsumed steps.
func (p *Provider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.steps) - p.next
}

// Done returns an error when steps remain unconsumed.
func (p *Provider) Done() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next < len(p.steps) {
		return fmt.Errorf("script %s: %d of %d steps not consumed; next is step %d (line %d)",
			p.name, len(p.steps)-p.next, len(p.steps), p.next+1, p.steps[p.next].line)
	}
	return nil
}

// Stream consumes the next step: it checks the step's expectations against req and streams the
// step's reply.
func (p *Provider) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		p.mu.Lock()
		n := p.next
		if n >= len(p.steps) {
			p.mu.Unlock()
			yield(llm.Chunk{}, fmt.Errorf("script %s: model call %d but the script has only %d steps (last user message %q)",
				p.name, n+1, len(p.steps), lastUser(req)))
			return
		}
		p.next++
		st := p.steps[n]
		p.mu.Unlock()
		for _, e := range st.expects {
			if err := check(e, req); err != nil {
				yield(llm.Chunk{}, fmt.Errorf("script %s: step %d (line %d): %s: %w", p.name, n+1, e.line, e.src, err))
				return
			}
		}
		calls := false
		stop := ""
		for _, r := range st.replies {
			if err := ctx.Err(); err != nil {
				yield(llm.Chunk{}, err)
				return
			}
			switch r.kind {
			case repText:
				for s := r.text; s != ""; {
					k := min(p.chunk, len(s))
					for k < len(s) && !utf8.RuneStart(s[k]) {
						k++
					}
					if !yield(llm.Chunk{Kind: llm.ChunkText, Text: s[:k]}, nil) {
						return
					}
					s = s[k:]
				}
			case repToolCall:
				calls = true
				if !yield(llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: r.call}, nil) {
					return
				}
			case repUsage:
				if !yield(llm.Chunk{Kind: llm.ChunkUsage, Usage: r.usage}, nil) {
					return
				}
			case repStop:
				stop = r.text
			case repError:
				yield(llm.Chunk{}, fmt.Errorf("script: %s", r.text))
				return
			case repHang:
				<-ctx.Done()
				yield(llm.Chunk{}, ctx.Err())
				return
			}
		}
		if stop == "" {
			stop = llm.StopEndTurn
			if calls {
				stop = llm.StopToolUse
			}
		}
		yield(llm.Chunk{Kind: llm.ChunkStop, StopReason: stop}, nil)
	}
}

func lastUser(req llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Text
		}
	}
	return ""
}

func check(e expectation, req llm.Request) error {
	var got string
	switch e.kind {
	case expNoTools:
		if !req.NoToolCalls {
			return fmt.Errorf("the request allows tool calls (%d tools)", len(req.Tools))
		}
		return nil
	case expLastUser:
		got = lastUser(req)
	case expSystem:
		got = req.System
	case expTools:
		names := make([]string, len(req.Tools))
		for i, t := range req.Tools {
			names[i] = t.Name
		}
		got = strings.Join(names, " ")
	case expLastToolResult:
		found := false
		for i := len(req.Messages) - 1; i >= 0 && !found; i-- {
			if m := req.Messages[i]; m.Role == llm.RoleTool && m.ToolCallID == e.id {
				got, found = m.Text, true
			}
		}
		if !found {
			return fmt.Errorf("no tool result with id %s in the request (%d messages)", e.id, len(req.Messages))
		}
	}
	if !e.re.MatchString(got) {
		return fmt.Errorf("got %q", truncate(got, 2000))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
