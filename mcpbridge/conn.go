package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/mcpbridge/jsonscan"
	"github.com/switchboard-dev/switchboard/mcpbridge/oauth"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// protocolVersion is what mcp-go's client is pinned to: its Initialize is only the legacy
// handshake (no server/discover probe, which costs a legacy stdio server that ignores unknown
// methods the whole 5 s probe timeout). The era of each server is decided in era.go.
const protocolVersion = mcp.ProtocolVersion20251125

// clientVersion is sent as clientInfo.version.
var clientVersion = "0.1.0"

// dialFunc makes the transport for one server; env is the child's full environment (stdio).
// Tests replace it with in-process transports.
type dialFunc func(cfg config.ServerConfig, env []string, log *slog.Logger) (transport.Interface, error)

// dialer returns the real dialFunc; stdio frames are bounded by maxFrame bytes.
func dialer(maxFrame int) dialFunc {
	return func(cfg config.ServerConfig, env []string, log *slog.Logger) (transport.Interface, error) {
		return dial(cfg, env, maxFrame, nil, log)
	}
}

// dial makes the transport; auth, when set, authorizes an http or sse server's requests.
func dial(cfg config.ServerConfig, env []string, maxFrame int, auth *oauth.Bearer, log *slog.Logger) (transport.Interface, error) {
	switch cfg.Transport {
	case config.TransportStdio:
		t := stdio.NewTransport(cfg.Command, cfg.Args, env, cfg.Cwd, maxFrame, log)
		t.Stall = cfg.CallTimeout
		if t.Stall <= 0 {
			t.Stall = config.DefaultCallTimeout
		}
		return t, nil
	case config.TransportHTTP:
		hc, err := oauth.HTTPClient(cfg.URL, cfg.Headers)
		if err != nil {
			return nil, err
		}
		if auth != nil {
			hc.Transport = auth.Wrap(hc.Transport) // the token only on cfg.URL's origin
		}
		return transport.NewStreamableHTTP(cfg.URL,
			transport.WithHTTPBasicClient(hc), // headers stay on cfg.URL's origin (oauth/origin.go)
			transport.WithHTTPHeaders(cfg.Headers),
			transport.WithContinuousListening(), // list_changed arrives on the GET stream
			transport.WithHTTPLogger(log))
	case config.TransportSSE:
		hc, err := oauth.HTTPClient(cfg.URL, cfg.Headers)
		if err != nil {
			return nil, err
		}
		if auth != nil {
			hc.Transport = auth.Wrap(hc.Transport)
		}
		return transport.NewSSE(cfg.URL, transport.WithHTTPClient(hc), transport.WithHeaders(cfg.Headers), transport.WithSSELogger(log))
	}
	return nil, fmt.Errorf("unknown transport %q", cfg.Transport)
}

// conn is one live connection to a server.
type conn struct {
	cfg          config.ServerConfig // resolved: what runs
	written      config.ServerConfig // as written (templates): what Redact hides in errors; set before the conn is published
	tr           transport.Interface
	auth         *oauth.Bearer // signed-in http/sse server: why it needs a sign-in again (nil: no sign-in)
	client       *client.Client
	instructions string
	caps         mcp.ServerCapabilities // from initialize
	lists        lists                  // resources, templates, prompts (resources.go)
	onResource   func(ResourceEvent)    // Options.OnResource; nil = none
	seq          atomic.Int64
	log          *slog.Logger

	// The protocol era (era.go), set by the handshake before the conn is published.
	era      string          // ProtocolLegacy or ProtocolModern
	relearnt bool            // the remembered era failed and the other one answered
	meta     json.RawMessage // modern: the _meta object of every request
	input    inputHandlers   // modern: who answers the server's input requests (mrtr.go)
	listenS  *listenState    // modern: resource subscriptions and the listen request (listen.go)

	headerToolsMu sync.RWMutex
	headerTools   map[string]*mcp.Tool // modern HTTP: tools with x-mcp-header parameters

	progress sync.Map // progress token -> *progressSink of a running call

	changed chan struct{} // a tools/list_changed arrived (capacity 1: signals coalesce)
	lost    chan struct{} // closed when an HTTP or SSE connection is lost (see lose)
	lostErr error         // why; set before lost is closed
	lostOne sync.Once
	check   chan struct{} // a call failed at the transport: ping now (capacity 1)

	closeOnce sync.Once
	closed    chan struct{}
}

// wireTool is one entry of tools/list, with the schema kept verbatim.
type wireTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Execution    json.RawMessage `json:"execution,omitempty"` // tasks.go: taskSupport; not part of the pin (nothing the person or model reads)
	Meta         json.RawMessage `json:"_meta,omitempty"`

	ui        *ToolUI         // apps.go: set by withViews
	canonical json.RawMessage // pin.go: set by pinTools
	hash      string
}

// dialConn connects, initializes and lists tools, all bounded by ctx (the startup timeout).
// run is the connection's lifetime context (HTTP listeners live on it).
// opts are the MCP client's options (protocol version, capabilities).
func dialConn(ctx, run context.Context, dial dialFunc, cfg config.ServerConfig, env []string, opts []client.ClientOption, plan eraPlan, setup func(*conn), onResource func(ResourceEvent), log *slog.Logger) (*conn, []wireTool, error) {
	tr, err := dial(cfg, env, log)
	if err != nil {
		return nil, nil, err
	}
	c := &conn{
		cfg: cfg, tr: tr, onResource: onResource, log: log,
		client:  client.NewClient(tr, opts...),
		changed: make(chan struct{}, 1),
		listenS: newListenState(),
		lost:    make(chan struct{}),
		check:   make(chan struct{}, 1),
		closed:  make(chan struct{}),
	}
	c.client.OnNotification(func(n mcp.JSONRPCNotification) {
		// Runs on the transport's read goroutine: hand off, never call the server here.
		switch n.Method {
		case string(mcp.MethodNotificationToolsListChanged):
			select {
			case c.changed <- struct{}{}:
			default:
			}
		case string(mcp.MethodNotificationProgress):
			c.onProgress(n)
		case mcp.MethodNotificationSubscriptionsAcknowledged:
			c.listenS.onAck(n)
		default:
			c.onResourceNotification(n, c.onResource)
		}
	})
	c.client.OnConnectionLost(func(err error) {
		if err == nil {
			err = errors.New("connection lost")
		}
		c.lose(err)
	})

	type outcome struct {
		tools []wireTool
		err   error
	}
	if setup != nil {
		setup(c)
	}
	ch := make(chan outcome, 1)
	go func() {
		tools, err := c.handshake(ctx, run, plan)
		ch <- outcome{tools, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			return c, nil, o.err
		}
		return c, o.tools, nil
	case <-ctx.Done():
		// A transport stuck in Start (SSE) may ignore ctx; closing it unblocks the handshake.
		return c, nil, ctx.Err()
	}
}

func (c *conn) handshake(ctx, run context.Context, plan eraPlan) ([]wireTool, error) {
	if err := c.client.Start(run); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if err := c.negotiate(ctx, plan); err != nil { // era.go
		return nil, err
	}
	tools, err := c.listTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	return tools, nil
}

func (c *conn) nextID() mcp.RequestId {
	return mcp.NewRequestId(c.nextIDString())
}

func (c *conn) nextIDString() string {
	// Built in place: one allocation (the string), where "sb-"+FormatInt made two past id 99.
	var b [24]byte // "sb-" and the digits of any int64
	return string(strconv.AppendInt(append(b[:0], "sb-"...), c.seq.Add(1), 10))
}

// appendCallParams appends a tools/call request's params up to the arguments, without the
// closing brace: {"name":tool,"arguments":args. args is checked and compacted (it must fit on the
// stdio line); false: it is not JSON.
func appendCallParams(buf []byte, tool string, args json.RawMessage) ([]byte, bool) {
	buf = append(buf, `{"name":`...)
	buf = jsonscan.AppendString(buf, tool)
	buf = append(buf, `,"arguments":`...)
	// jsonscan checks as json.Valid does, in a fraction of encoding/json's time and without its
	// allocations (json.Compact was 4% of the host's CPU under sbbench's 8 callers).
	if jsonscan.Valid(args) {
		return appendCompact(buf, args), true
	}
	// Not JSON, or nested deeper than jsonscan goes: encoding/json decides.
	w := bytes.NewBuffer(buf)
	if json.Compact(w, args) != nil {
		return nil, false
	}
	return w.Bytes(), true
}

// appendCompact appends the valid JSON src to dst without the white space between its tokens:
// the bytes json.Compact writes.
func appendCompact(dst, src []byte) []byte {
	inString, escaped := false, false
	start := 0
	for i, c := range src {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}

// request sends one raw request; a JSON-RPC error becomes a Go error.
func (c *conn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.requestID(ctx, c.nextID(), method, params)
}

// requestID is request with the id chosen by the caller.
func (c *conn) requestID(ctx context.Context, id mcp.RequestId, method string, params any) (json.RawMessage, error) {
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params}
	if err := c.decorate(&req); err != nil { // era.go: a modern request's _meta and headers
		return nil, err
	}
	resp, err := c.tr.SendRequest(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			c.cancelled(req.ID, ctx.Err())
		}
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error.AsError()
	}
	return resp.Result, nil
}

// cancelled tells the server to stop a request whose context ended (notifications/cancelled).
// Over HTTP the aborted request is the signal, as the protocol says.
func (c *conn) cancelled(id mcp.RequestId, reason error) {
	if _, isHTTP := c.tr.(transport.HTTPConnection); isHTTP {
		return
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationCancelled),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": reason.Error()}},
	}}
	// The stdio transport bounds the write (stdio.Transport.stall): a server that no longer reads
	// its stdin cannot hold the write lock, and every later call, with it.
	go func() { _ = c.tr.SendNotification(context.Background(), n) }() // ignore error: best effort
}

// toolsPage is one tools/list result.
type toolsPage struct {
	Tools      []wireTool `json:"tools"`
	NextCursor string     `json:"nextCursor"`
}

// listTools runs tools/list, following cursors.
func (c *conn) listTools(ctx context.Context) ([]wireTool, error) {
	var all []wireTool
	seen := map[string]bool{}
	cursor := ""
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := c.request(ctx, string(mcp.MethodToolsList), params)
		if err != nil {
			return nil, err
		}
		var page toolsPage
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("malformed tools/list result: %w", err)
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			return c.withViews(ctx, c.paramHeaderTools(all)), nil // apps.go
		}
		if seen[page.NextCursor] {
			return nil, errors.New("tools/list repeats a cursor")
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
}

// call runs tools/call and shapes the result. A call that gets no answer within timeout fails with stdio.ErrCallTimeout
// (the server is told it was cancelled); one whose ctx ends, with ctx's error.
// asTask sends it as a 2025-11-25 task (tasks.go); a result that is a task is followed to its end.
func (c *conn) call(ctx context.Context, name, tool string, outSchema, args json.RawMessage, timeout time.Duration, asTask bool) (Result, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' {
		return errorResult(name, "arguments must be a JSON object"), nil
	}
	// The request is written by hand, not by reflection: it is on every call's way.
	id := c.nextIDString()
	buf := make([]byte, 0, 96+len(id)+len(tool)+len(args)+len(c.meta))
	buf = append(buf, `{"jsonrpc":"2.0","id":"`...)
	buf = append(buf, id...) // "sb-" and digits: nothing to escape
	buf = append(buf, `","method":"tools/call","params":`...)
	p := len(buf)
	buf, ok := appendCallParams(buf, tool, args)
	if !ok {
		return errorResult(name, "arguments must be a JSON object"), nil
	}
	if asTask {
		buf = append(buf, `,"task":{}`...) // the server's default ttl
	}
	var token string
	if fn := progressFunc(ctx); fn != nil {
		var stop func()
		token, stop = c.startProgress(fn)
		defer stop()
	}
	if token != "" || c.isModern() {
		buf = append(buf, `,"_meta":{`...)
		buf = c.appendMetaKeys(buf) // era.go: modern requests carry version, client info, capabilities
		if token != "" {
			if c.isModern() {
				buf = append(buf, ',')
			}
			buf = append(buf, `"progressToken":"`...)
			buf = append(buf, token...) // "sb-progress-" and digits
			buf = append(buf, '"')
		}
		buf = append(buf, '}')
	}
	params := buf[p:]           // without its closing brace: a retry with input appends to it (mrtr.go)
	buf = append(buf, '}', '}') // the params, the request
	resp, fr, err := c.callRound(ctx, tool, id, buf, timeout)
	if err != nil {
		return Result{}, err
	}
	if resp.Error != nil {
		return errorResult(name, resp.Error.Message), nil
	}
	if c.isModern() && inputRequired(resp.Result) { // mrtr.go; a legacy server asks by requests of its own
		return c.callWithInput(ctx, name, tool, outSchema, params, resp.Result, timeout)
	}
	return c.callResult(ctx, name, outSchema, resp.Result, fr, timeout, asTask)
}

// callResult shapes a tools/call result, following it when it is a task (tasks.go).
func (c *conn) callResult(ctx context.Context, name string, outSchema json.RawMessage, result []byte, fr *stdio.Frame, timeout time.Duration, asked bool) (Result, error) {
	t, isTask, err := c.createdTask(result, asked)
	switch {
	case err != nil:
		return errorResult(name, fmt.Sprintf("server %q: %v", c.cfg.Name, err)), nil
	case isTask:
		return c.followTask(ctx, name, outSchema, t, timeout)
	}
	return parseCallResultSchema(name, result, fr, outSchema), nil
}

// callRound sends one tools/call request (line, with id; without its newline) and waits
// for its answer at most timeout. A call that gets no answer within timeout fails with
// stdio.ErrCallTimeout (the server is told it was cancelled); one whose ctx ends, with ctx's error.
func (c *conn) callRound(ctx context.Context, tool, id string, line []byte, timeout time.Duration) (*transport.JSONRPCResponse, *stdio.Frame, error) {
	rid := mcp.NewRequestId(id)
	var (
		resp *transport.JSONRPCResponse
		fr   *stdio.Frame
		err  error
	)
	if s := c.stdio(); s != nil {
		// The stdio transport keeps the deadline with the pending call (one timer for them all),
		// and takes the line as it is: no request value is built for it.
		var sr *stdio.Response
		if sr, err = s.RoundTripLine(ctx, rid, line, timeout); sr != nil {
			resp, fr = &sr.JSONRPCResponse, &sr.Frame
		}
	} else {
		params := line[bytes.Index(line, []byte(`"params":`))+len(`"params":`) : len(line)-1]
		req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: rid, Method: string(mcp.MethodToolsCall),
			Params: json.RawMessage(params), Header: c.callHeaders(tool, params)}
		tctx, cancel := context.WithTimeout(ctx, timeout)
		resp, err = c.tr.SendRequest(tctx, req)
		if tctx.Err() != nil && ctx.Err() == nil {
			// Also when a response arrived: it is the server's reaction to the end of tctx
			// (in-process transports pass it through).
			err = stdio.ErrCallTimeout
		}
		cancel()
	}
	if ctx.Err() != nil {
		// Also when a response arrived: it is the server's reaction to the end of ctx (in-process
		// transports pass ctx through).
		if err != nil {
			c.cancelled(rid, ctx.Err())
		}
		return nil, nil, ctx.Err()
	}
	if errors.Is(err, stdio.ErrCallTimeout) {
		c.cancelled(rid, context.DeadlineExceeded)
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, err
	}
	return resp, fr, nil
}

// stdio returns the stdio transport, or nil.
func (c *conn) stdio() *stdio.Transport {
	s, _ := c.tr.(*stdio.Transport)
	return s
}

// stderrTail is the end of a stdio server's stderr ("" for other transports).
func (c *conn) stderrTail() string {
	if s := c.stdio(); s != nil {
		return s.StderrTail()
	}
	return ""
}

// deathReason refines err with what the transport knows (a stdio child's exit status, why an
// HTTP connection was lost).
func (c *conn) deathReason(err error) error {
	if s := c.stdio(); s != nil {
		if e := s.Err(); e != nil {
			return e
		}
		// A write into a pipe the child closed (EPIPE) usually means it is exiting: its exit
		// status says more than "broken pipe", so give the exit a moment to be seen.
		if errors.Is(err, syscall.EPIPE) {
			select {
			case <-s.Done():
				if e := s.Err(); e != nil {
					return e
				}
			case <-time.After(deathGrace):
			}
		}
	}
	select {
	case <-c.lost:
		return c.lostErr
	default:
	}
	return err
}

// deathGrace bounds how long deathReason waits for a child's exit after a broken pipe.
const deathGrace = 2 * time.Second

// lose marks an HTTP or SSE connection lost, once; watch then marks the server failed.
func (c *conn) lose(err error) {
	c.lostOne.Do(func() {
		c.lostErr = err
		close(c.lost)
	})
}

// ping sends an MCP ping. Only the transport failing is an error: a server that answers, even
// with a JSON-RPC error (say, ping not implemented), is alive.
// 2026-07-28 has no ping: a modern server is asked server/discover instead, which every modern
// server answers, statelessly and cheaply. Any answer, a JSON-RPC error included, means alive.
func (c *conn) ping(ctx context.Context) error {
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: c.nextID(), Method: c.pingMethod()}
	if err := c.decorate(&req); err != nil {
		return err
	}
	_, err := c.tr.SendRequest(ctx, req)
	return err
}

// pingMethod is what ping sends in the connection's era.
func (c *conn) pingMethod() string {
	if c.isModern() {
		return string(mcp.MethodServerDiscover)
	}
	return string(mcp.MethodPing)
}

// close ends the connection (for stdio: the child's whole process group). Idempotent.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		close(c.closed)
		_ = c.client.Close() // ignore error: exit status of a child we are ending
	})
}
