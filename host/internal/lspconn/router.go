package lspconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// RequestFunc handles a call; params are the raw JSON params (nil when absent). Return a
// *jsonrpc2.Error for protocol errors; a plain error becomes an InternalError reply.
type RequestFunc func(ctx context.Context, params json.RawMessage) (any, error)

// NotificationFunc handles a notification. Its error is logged, never fatal.
type NotificationFunc func(ctx context.Context, params json.RawMessage) error

type requestEntry struct {
	fn    RequestFunc
	async bool
}

// Router is the jsonrpc2.Handler and jsonrpc2.Preempter of the host connection:
//   - notifications run inline on the read loop, in wire order; errors and panics are logged;
//     unknown notifications are ignored;
//   - requests registered async release the read loop (jsonrpc2.Async) before running, so a request
//     that waits (the confirm gate, a call to the editor) never blocks later messages;
//   - $/cancelRequest is handled in Preempt, ahead of dispatch, and cancels the request's context;
//     a request cancelled that way is answered with RequestCancelled (-32800);
//   - unknown requests get MethodNotFound; a panic becomes an InternalError reply.
//
// Register everything before the connection starts; registration is not synchronised with
// dispatch.
type Router struct {
	log   *slog.Logger
	reqs  map[string]requestEntry
	notes map[string]NotificationFunc

	// Before, when set, runs before every registered request and notification (for lifecycle
	// checks). A non-nil error answers the call with it (or drops the notification).
	Before func(method string, isCall bool) error

	inflightMu sync.Mutex
	inflight   map[jsonrpc2.ID]*request
}

// request is the context a request's handler gets: the request's own, under the connection's,
// cancelled when the request ends or by $/cancelRequest; Cancel hands its cancel to the handler.
type request struct {
	context.Context
	cancel    context.CancelCauseFunc
	cancelled bool            // by $/cancelRequest; guarded by Router.inflightMu
	reply     json.RawMessage // the handler's result, when it gave it through Reply
}

// Reply is b as the result of the request whose handler got ctx: kept in the request's context
// when ctx is the one the Router gave (a pointer to it goes into the handler's any without an
// allocation, where the slice itself would take one), else b as a json.RawMessage. Codec sends
// either as it is.
func Reply(ctx context.Context, b []byte) any {
	if rq, ok := ctx.(*request); ok {
		rq.reply = b
		return &rq.reply
	}
	return json.RawMessage(b)
}

// Cancel is the cancel of ctx when ctx is the context the Router gave a request's handler (not
// one derived from it), else nil. A handler that runs one operation for the request can hand
// it on, so that the operation stops itself (with a cause of its own) without a context of its
// own under ctx, which costs allocations per request. Such a cancel does not make the request
// a cancelled one: the handler's answer is sent (only $/cancelRequest answers RequestCancelled),
// and the handler tells the operation's stop from the request's end by context.Cause.
func Cancel(ctx context.Context) context.CancelCauseFunc {
	if rq, ok := ctx.(*request); ok {
		return rq.cancel
	}
	return nil
}

// NewRouter returns an empty router.
func NewRouter(log *slog.Logger) *Router {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Router{
		log:      log,
		reqs:     map[string]requestEntry{},
		notes:    map[string]NotificationFunc{},
		inflight: map[jsonrpc2.ID]*request{},
	}
}

// Request registers a call handler. async requests run concurrently with later messages.
func (r *Router) Request(method string, async bool, fn RequestFunc) {
	r.reqs[method] = requestEntry{fn: fn, async: async}
}

// Notification registers a notification handler.
func (r *Router) Notification(method string, fn NotificationFunc) { r.notes[method] = fn }

// Preempt implements jsonrpc2.Preempter: $/cancelRequest is consumed here.
func (r *Router) Preempt(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	if req.Method() != protocol.MethodCancelRequest || req.IsCall() {
		return nil, jsonrpc2.ErrNotHandled
	}
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(req.Params(), &p); err != nil {
		r.log.Warn("lsp: malformed $/cancelRequest", "error", err)
		return struct{}{}, nil
	}
	var id jsonrpc2.ID
	var n int64
	var s string
	switch {
	case json.Unmarshal(p.ID, &n) == nil:
		id = jsonrpc2.NewNumberID(n)
	case json.Unmarshal(p.ID, &s) == nil:
		id = jsonrpc2.NewStringID(s)
	default:
		r.log.Warn("lsp: $/cancelRequest with a bad id", "id", string(p.ID))
		return struct{}{}, nil
	}
	r.inflightMu.Lock()
	if f := r.inflight[id]; f != nil {
		f.cancelled = true
		f.cancel(nil)
	}
	r.inflightMu.Unlock()
	return struct{}{}, nil // handled: never reaches Handle
}

// Handle implements jsonrpc2.Handler.
func (r *Router) Handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	// The method is borrowed from the frame buffer, like Params: it is looked up here and kept
	// (by the handler's logs) only as a copy, below.
	method := req.Method()
	// Handlers never see jsonrpc2's per-request context: it is pooled and recycled when Handle
	// returns, so a context derived from it (context.WithCancel starts a goroutine that watches the
	// parent) would touch a recycled value and panic. They get a context of their own under the
	// connection's, cancelled when the request ends or by $/cancelRequest.
	reqCtx := ctx
	ctx = jsonrpc2.DetachContext(ctx)
	if !req.IsCall() {
		r.notify(ctx, strings.Clone(method), json.RawMessage(req.Params()))
		return nil, nil // a notification error would end the connection
	}
	e, ok := r.reqs[method]
	if !ok {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %s", method)
	}
	if r.Before != nil {
		if err := r.Before(method, true); err != nil {
			return nil, err
		}
	}
	id := req.ID()
	f := &request{}
	f.Context, f.cancel = context.WithCancelCause(ctx)
	defer f.cancel(nil)
	r.inflightMu.Lock()
	r.inflight[id] = f
	r.inflightMu.Unlock()
	defer func() {
		r.inflightMu.Lock()
		delete(r.inflight, id)
		r.inflightMu.Unlock()
	}()
	if e.async {
		jsonrpc2.Async(reqCtx) // clones the request in place: req.Params() is valid until we return
		growStack()
		method = req.Method() // Async's copy: the frame's may be overwritten by the next read
	} else {
		method = strings.Clone(method)
	}
	params := json.RawMessage(req.Params()) // read after Async: the pre-release slice is the frame buffer
	res, err := r.call(f, method, e.fn, params)
	r.inflightMu.Lock()
	cancelled := f.cancelled
	r.inflightMu.Unlock()
	if cancelled {
		return nil, protocol.ErrRequestCancelled
	}
	if err != nil {
		var werr *jsonrpc2.Error
		if !errors.As(err, &werr) {
			r.log.Warn("lsp: request failed", "method", method, "error", err)
			return nil, jsonrpc2.NewError(jsonrpc2.InternalError, safetext.NoLinks(err.Error()))
		}
		if msg := safetext.NoLinks(werr.Message); msg != werr.Message {
			// Error messages quote servers (a read's error, a form's titles) and editors show them
			// to people: VS Code in notifications, where "[label](command:...)" is a link that runs
			// the command when clicked, as in the host's own messages (safetext.NoLinks).
			return nil, &jsonrpc2.Error{Code: werr.Code, Message: msg, Data: werr.Data}
		}
	}
	return res, err
}

func (r *Router) call(ctx context.Context, method string, fn RequestFunc, params json.RawMessage) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("lsp: request handler panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error handling %s: %v", method, p)
		}
	}()
	return fn(ctx, params)
}

func (r *Router) notify(ctx context.Context, method string, params json.RawMessage) {
	fn, ok := r.notes[method]
	if !ok {
		r.log.Debug("lsp: ignoring unknown notification", "method", method)
		return
	}
	if r.Before != nil {
		if err := r.Before(method, false); err != nil {
			r.log.Debug("lsp: dropping notification", "method", method, "reason", err)
			return
		}
	}
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("lsp: notification handler panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	if err := fn(ctx, params); err != nil {
		r.log.Warn("lsp: notification failed", "method", method, "error", err)
	}
}

// InvalidParams returns a -32602 error with a message that says what is wrong.
func InvalidParams(format string, args ...any) *jsonrpc2.Error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, format, args...)
}

// Decode unmarshals params into v with encoding/json, mapping failures to InvalidParams. Absent
// params decode as {} (every field zero).
func Decode(method string, params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return InvalidParams("%s: bad params: %s", method, describe(err))
	}
	return nil
}

func describe(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s must be %s, not %s", te.Field, kind(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("expected %s, not %s", kind(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func kind(k string) string {
	switch k {
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "a number"
	}
	return k
}

// handlerStack is the stack a request handler grows to (tool calls: decoding, the gate, the
// registry, encoding). An async request runs on the goroutine jsonrpc2 started as a reader when
// the previous request went async, so its stack starts small. A tool call fits in 16 KiB since
// its JSON no longer goes through encoding/json's reflection (8 KiB does not: the stack grows
// again in session's callOne), and 16 KiB is the largest stack the runtime keeps in its per-P
// cache: a 32 KiB one came from the heap and went back to it with every call.
const handlerStack = 16 << 10

// stackIndex is read at run time so that growStack's array is not optimised away.
var stackIndex = 0

// growStack grows the calling goroutine's stack to handlerStack in one step, while the stack is
// still shallow. Grown later, from deep inside the handler, the stack is copied several times and
// every copy walks all the frames on it (runtime.copystack was 16% of the host's CPU per tool
// call); one copy of a shallow stack costs far less than that, and nothing once the goroutine's
// stack is big enough.
//
//go:noinline
func growStack() byte {
	var b [handlerStack / 2]byte // a frame of half the size cannot fit in a smaller stack
	return b[stackIndex]
}
