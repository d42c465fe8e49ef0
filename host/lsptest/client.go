package lsptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Message is one JSON-RPC message read from the server.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
	// Raw is the whole message as the server wrote it.
	Raw json.RawMessage `json:"-"`
}

// IsRequest reports a request from the server (a method and an id).
func (m Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 }

// IsNotification reports a notification from the server.
func (m Message) IsNotification() bool { return m.Method != "" && len(m.ID) == 0 }

// Error is a JSON-RPC error object.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Options configures a Client. The zero value is a plain editor.
type Options struct {
	// MaxFrame bounds one frame's body (0: DefaultMaxFrame). A larger frame is bad output.
	MaxFrame int
	// Answer answers a request from the server: the result to send, and reply=false to leave it
	// unanswered. It runs on the read goroutine, so it must not block. Nil: DefaultAnswer.
	Answer func(m Message) (result any, reply bool)
	// AnswerAsync, when set, answers every request from the server instead of Answer, each on a
	// goroutine of its own, so it may block (a person thinking) while reading goes on. Its ctx
	// ends when the server cancels that request ($/cancelRequest with its id) or the stream ends.
	// A result of type *Error is sent as the JSON-RPC error; reply=false leaves it unanswered.
	AnswerAsync func(ctx context.Context, m Message) (result any, reply bool)
	// OnMessage sees every message from the server, on the read goroutine, before it is recorded.
	OnMessage func(m Message)
	// OnBadOutput is told of every problem with what the server wrote: a malformed frame (reading
	// stops and the rest is drained), or a frame that is not a JSON-RPC message (reading goes on).
	OnBadOutput func(err error)
	// NoRecord keeps notifications and requests from the server out of Messages (long benchmark
	// runs); responses still reach their callers.
	NoRecord bool
}

// DefaultAnswer answers like an editor with nothing to offer: an array of nulls for
// workspace/configuration, null for everything else.
func DefaultAnswer(m Message) (any, bool) {
	if m.Method == "workspace/configuration" {
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		json.Unmarshal(m.Params, &p) // ignore error: no items, answer []
		return make([]any, len(p.Items)), true
	}
	return nil, true
}

// Client is the editor end of an LSP stream. Safe for concurrent use.
type Client struct {
	opts Options
	w    io.Writer

	wmu sync.Mutex // serialises frames on w

	mu        sync.Mutex // guards the fields below
	nextID    int64
	pending   map[string]chan Message // id key -> the caller waiting for that response
	msgs      []Message               // requests and notifications from the server, in order
	responses []Message               // responses nobody was waiting for
	changed   chan struct{}           // closed and replaced whenever msgs or responses grow
	firstBad  error
	readErr   error
	answering map[string]context.CancelFunc // id key -> cancels the AnswerAsync of that request

	// readCtx ends when reading ends; every AnswerAsync ctx derives from it.
	readCtx    context.Context
	readCancel context.CancelFunc

	done chan struct{} // closed when reading ends
}

// New starts reading r (the server's output) on a goroutine; frames go to w (the server's input).
func New(r io.Reader, w io.Writer, opts Options) *Client {
	c := &Client{opts: opts, w: w, pending: map[string]chan Message{}, changed: make(chan struct{}), done: make(chan struct{}),
		answering: map[string]context.CancelFunc{}}
	c.readCtx, c.readCancel = context.WithCancel(context.Background())
	go c.readLoop(bufio.NewReaderSize(r, 1<<16))
	return c
}

// Done is closed when the server's output has ended (or was malformed).
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns the first problem with the server's output (see Options.OnBadOutput), or nil.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.firstBad
}

func (c *Client) bad(err error) {
	c.mu.Lock()
	if c.firstBad == nil {
		c.firstBad = err
	}
	c.mu.Unlock()
	if c.opts.OnBadOutput != nil {
		c.opts.OnBadOutput(err)
	}
}

func (c *Client) readLoop(r *bufio.Reader) {
	defer func() {
		c.mu.Lock()
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		c.mu.Unlock()
		c.readCancel()
		close(c.done)
	}()
	for {
		body, err := ReadFrame(r, c.opts.MaxFrame)
		if err != nil {
			if err != io.EOF {
				c.mu.Lock()
				c.readErr = err
				c.mu.Unlock()
				c.bad(fmt.Errorf("the server wrote a malformed frame: %w", err))
				io.Copy(io.Discard, r) // ignore error: keep draining so the server never blocks
			}
			return
		}
		var raws []json.RawMessage
		if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
			if err := json.Unmarshal(body, &raws); err != nil {
				c.bad(fmt.Errorf("the server wrote a batch that is not an array of messages: %.200q", body))
				continue
			}
		} else {
			raws = []json.RawMessage{body}
		}
		for _, raw := range raws {
			c.dispatch(raw)
		}
	}
}

func (c *Client) dispatch(raw json.RawMessage) {
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil {
		c.bad(fmt.Errorf("the server wrote a frame that is not a JSON-RPC message: %v: %.200q", err, raw))
		return
	}
	m.Raw = raw
	if c.opts.OnMessage != nil {
		c.opts.OnMessage(m)
	}
	if m.Method == "" { // a response
		key := IDKey(m.ID)
		c.mu.Lock()
		ch := c.pending[key]
		delete(c.pending, key)
		if ch == nil {
			c.responses = append(c.responses, m)
			c.signalLocked()
		}
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
		return
	}
	if !c.opts.NoRecord {
		c.mu.Lock()
		c.msgs = append(c.msgs, m)
		c.signalLocked()
		c.mu.Unlock()
	}
	if m.IsNotification() && m.Method == "$/cancelRequest" {
		c.cancelAnswer(m.Params)
	}
	if m.IsRequest() && c.opts.AnswerAsync != nil {
		c.answerAsync(m)
		return
	}
	if m.IsRequest() {
		answer := c.opts.Answer
		if answer == nil {
			answer = DefaultAnswer
		}
		if result, reply := answer(m); reply {
			c.Reply(m.ID, result) // ignore error: a server that is gone fails the caller's waits
		}
	}
}

// answerAsync runs Options.AnswerAsync for request m on a goroutine of its own.
func (c *Client) answerAsync(m Message) {
	ctx, cancel := context.WithCancel(c.readCtx)
	key := IDKey(m.ID)
	c.mu.Lock()
	c.answering[key] = cancel
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			delete(c.answering, key)
			c.mu.Unlock()
			cancel()
		}()
		result, reply := c.opts.AnswerAsync(ctx, m)
		if !reply {
			return
		}
		if e, ok := result.(*Error); ok && e != nil {
			c.WriteMessage(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": e}) // ignore error: as Reply
			return
		}
		c.Reply(m.ID, result) // ignore error: a server that is gone fails the caller's waits
	}()
}

// cancelAnswer ends the ctx of the AnswerAsync answering the request named by a $/cancelRequest.
func (c *Client) cancelAnswer(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	c.mu.Lock()
	cancel := c.answering[IDKey(p.ID)]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (c *Client) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Reply answers the server's request id with result.
func (c *Client) Reply(id json.RawMessage, result any) error {
	return c.WriteMessage(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// WriteMessage marshals v and writes it as one frame.
func (c *Client) WriteMessage(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("lsptest: %w", err)
	}
	return c.WriteRaw(Frame(body))
}

// WriteRaw writes b as it is (malformed-input tests).
func (c *Client) WriteRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(b)
	return err
}

// Notify sends a notification; nil params are left out.
func (c *Client) Notify(method string, params any) error {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = rawParams(params)
	}
	return c.WriteMessage(m)
}

// Expect registers interest in the response with this id, for a request the test writes itself
// (WriteRaw); register before writing. The channel is closed if the stream ends first.
func (c *Client) Expect(id json.RawMessage) <-chan Message {
	ch := make(chan Message, 1)
	key := IDKey(id)
	c.mu.Lock()
	select {
	case <-c.done:
		close(ch)
	default:
		c.pending[key] = ch
	}
	c.mu.Unlock()
	return ch
}

// Send writes a request with the next numeric id and returns that id and the channel its
// response arrives on (closed if the stream ends first). Nil params are left out.
func (c *Client) Send(method string, params any) (int64, <-chan Message, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	rawID := json.RawMessage(strconv.FormatInt(id, 10))
	ch, err := c.SendID(rawID, method, params)
	return id, ch, err
}

// SendID writes a request with the given raw JSON id (e.g. `"c1"`) and returns the channel its
// response arrives on.
func (c *Client) SendID(id json.RawMessage, method string, params any) (<-chan Message, error) {
	ch := c.Expect(id)
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = rawParams(params)
	}
	if err := c.WriteMessage(m); err != nil {
		c.mu.Lock()
		if p := c.pending[IDKey(id)]; p != nil {
			delete(c.pending, IDKey(id))
			close(p)
		}
		c.mu.Unlock()
		return nil, fmt.Errorf("lsptest: %s: writing the request: %w", method, err)
	}
	return ch, nil
}

// Wait waits for a response from Send or SendID, bounded by ctx.
func (c *Client) Wait(ctx context.Context, method string, ch <-chan Message) (Message, error) {
	select {
	case m, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.readErr
			c.mu.Unlock()
			return Message{}, fmt.Errorf("lsptest: %s: the server closed its output before answering (%v)", method, err)
		}
		return m, nil
	case <-ctx.Done():
		return Message{}, fmt.Errorf("lsptest: %s: no answer: %w", method, ctx.Err())
	}
}

// Call sends a request and waits for its response, bounded by ctx. A JSON-RPC error comes back as
// *Error; result (may be nil) receives the decoded result.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	_, ch, err := c.Send(method, params)
	if err != nil {
		return err
	}
	m, err := c.Wait(ctx, method, ch)
	if err != nil {
		return err
	}
	if m.Error != nil {
		return m.Error
	}
	if result != nil && len(m.Result) > 0 {
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("lsptest: decoding the %s result %.200s: %w", method, m.Result, err)
		}
	}
	return nil
}

// Messages returns the requests and notifications received so far, and a channel closed when
// more (or an unclaimed response) arrive.
func (c *Client) Messages() ([]Message, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.msgs...), c.changed
}

// Responses returns the responses that no Send, SendID or Expect was waiting for.
func (c *Client) Responses() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.responses...)
}

// Await waits until cond holds for the requests and notifications received so far, bounded by
// ctx and by the end of the stream.
func (c *Client) Await(ctx context.Context, cond func([]Message) bool) ([]Message, error) {
	for {
		msgs, changed := c.Messages()
		if cond(msgs) {
			return msgs, nil
		}
		select {
		case <-changed:
		case <-c.done:
			if msgs, _ := c.Messages(); cond(msgs) {
				return msgs, nil
			}
			return msgs, fmt.Errorf("lsptest: the server closed its output")
		case <-ctx.Done():
			return msgs, ctx.Err()
		}
	}
}

// IDKey is a canonical form of a JSON-RPC id (an integer or a string; `1` and `"1"` differ), ""
// for anything else.
func IDKey(raw json.RawMessage) string {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return "s:" + x
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return "n:" + strconv.FormatInt(n, 10)
		}
	}
	return ""
}

// rawParams passes json.RawMessage and string params through as JSON text.
func rawParams(v any) any {
	if s, ok := v.(string); ok {
		return json.RawMessage(s)
	}
	return v
}
