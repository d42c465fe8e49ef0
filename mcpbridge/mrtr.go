package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/jsonscan"
	"github.com/switchboard-dev/switchboard/mcpbridge/stdio"
)

// Multi round-trip requests (2026-07-28, SEP-2322). A modern server that needs something while
// it serves tools/call, prompts/get or resources/read answers with a result of resultType
// "input_required": inputRequests (a map of keys to embedded requests: elicitation/create,
// sampling/createMessage or roots/list) and an opaque requestState. Each embedded request goes
// to the same handler as a legacy server's server-to-client request (elicitation: the editor's
// question; sampling: the same consent and provider; roots: the workspace folders, without
// asking), then the same request is sent again with a new JSON-RPC id, inputResponses and the
// requestState echoed byte for byte. A result without resultType, or any other resultType, is
// complete.
//
// At most maxInputRounds results asking for input are answered in one exchange; the next one ends
// it with an error. Each request of the exchange is bounded by the server's call timeout; the
// time the person takes to answer is not (the server holds nothing meanwhile). A cancel (ctx)
// ends the whole exchange, an open question included.

// maxInputRounds bounds the input_required results answered in one exchange.
const maxInputRounds = 8

// maxInputRequests bounds the requests one input_required result may carry: each may be a
// question to the person, and the bound on rounds bounds their questions only if a round cannot
// hold any number of them. A result with more is not answered at all.
const maxInputRequests = 8

// inputHandlers answer a modern server's input requests; a nil one refuses its method.
type inputHandlers struct {
	elicit *elicitHandler
	sample *sampleHandler
	roots  rootsHandler
}

// inputHandlers are the registry's handlers for server (the same as a legacy server's).
func (r *Registry) inputHandlers(server string) inputHandlers {
	var h inputHandlers
	if r.opts.Elicit != nil {
		h.elicit = &elicitHandler{server: server, fn: r.opts.Elicit}
	}
	if r.opts.Sample != nil {
		h.sample = &sampleHandler{server: server, fn: r.opts.Sample}
	}
	if r.opts.Roots != nil {
		h.roots = rootsHandler(r.opts.Roots)
	}
	return h
}

// inputRequired reports whether a result's top-level resultType is "input_required". The scan
// looks at the result's own members only (a tool's text saying "input_required" is not one).
func inputRequired(result []byte) bool {
	if !bytes.Contains(result, []byte(`input_required`)) {
		return false // the usual case, at the cost of one scan
	}
	return isResultType(result, string(mcp.ResultTypeInputRequired)) // tasks.go
}

// inputAsk is an input_required result as sent.
type inputAsk struct {
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  json.RawMessage            `json:"requestState"` // echoed as sent
}

// errInputRounds ends an exchange in which the server kept asking for input.
var errInputRounds = fmt.Errorf("the server asked for input %d times in one request; stopped", maxInputRounds)

// answerInput fulfils one input_required result and returns the members to add to the retried
// request's params: ,"inputResponses":{...}[,"requestState":<as sent>].
func (c *conn) answerInput(ctx context.Context, result []byte) ([]byte, error) {
	var ask inputAsk
	if err := json.Unmarshal(result, &ask); err != nil {
		return nil, fmt.Errorf("malformed input_required result: %w", err)
	}
	if len(ask.InputRequests) == 0 && (len(ask.RequestState) == 0 || string(ask.RequestState) == "null") {
		return nil, errors.New("malformed input_required result: neither inputRequests nor requestState")
	}
	if len(ask.RequestState) > 0 && ask.RequestState[0] != '"' && string(ask.RequestState) != "null" {
		return nil, errors.New("malformed input_required result: requestState is not a string")
	}
	if n := len(ask.InputRequests); n > maxInputRequests {
		return nil, fmt.Errorf("the server asked %d questions at once (at most %d are answered); none was put to the user", n, maxInputRequests)
	}
	out := []byte(`,"inputResponses":{`)
	first := true
	keys := make([]string, 0, len(ask.InputRequests))
	for k := range ask.InputRequests {
		keys = append(keys, k)
	}
	slices.Sort(keys) // one question at a time, in a stable order
	for _, key := range keys {
		answer, err := c.answerOne(ctx, ask.InputRequests[key])
		if err != nil {
			return nil, fmt.Errorf("input request %s: %w", strconv.Quote(Cut(key, 64)), err)
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = jsonscan.AppendString(out, key)
		out = append(out, ':')
		out = append(out, answer...)
	}
	out = append(out, '}')
	if len(ask.RequestState) > 0 && string(ask.RequestState) != "null" {
		out = append(out, `,"requestState":`...)
		out = append(out, ask.RequestState...)
	}
	return out, nil
}

// answerOne runs one embedded request through the handler of its method.
func (c *conn) answerOne(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var req struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, fmt.Errorf("malformed: %w", err)
	}
	h := c.input
	var res any
	var err error
	switch req.Method {
	case string(mcp.MethodElicitationCreate):
		if h.elicit == nil {
			return nil, errors.New("the server asked the user a question (elicitation), which this client does not offer")
		}
		var p mcp.ElicitationParams
		if len(req.Params) > 0 {
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, fmt.Errorf("elicitation/create params: %w", err)
			}
		}
		// The raw params keep the form's field order (elicit.go reads them like a stdio request's).
		ectx := context.WithValue(ctx, stdio.RawParamsKey{}, req.Params)
		res, err = h.elicit.Elicit(ectx, mcp.ElicitationRequest{Request: mcp.Request{Method: req.Method}, Params: p})
	case string(mcp.MethodSamplingCreateMessage):
		if h.sample == nil {
			return nil, errors.New("the server asked for the user's model (sampling), which this client does not offer")
		}
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, fmt.Errorf("sampling/createMessage params: %w", err)
		}
		res, err = h.sample.CreateMessage(ctx, mcp.CreateMessageRequest{Request: mcp.Request{Method: req.Method}, CreateMessageParams: p})
	case string(mcp.MethodListRoots):
		roots := []mcp.Root{}
		if h.roots != nil {
			roots = Roots(h.roots())
		}
		res = map[string]any{"roots": roots}
	default:
		return nil, fmt.Errorf("the server asked for input by method %s, which this client does not answer", strconv.Quote(Cut(req.Method, 64)))
	}
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return json.Marshal(res)
}

// withInput is params (a JSON object without its closing brace) with the answer members added,
// closed.
func withInput(params, answer []byte) []byte {
	out := make([]byte, 0, len(params)+len(answer)+1)
	out = append(out, params...)
	out = append(out, answer...)
	return append(out, '}')
}

// callWithInput goes on with a tools/call whose first result asked for input.
func (c *conn) callWithInput(ctx context.Context, name, tool string, outSchema json.RawMessage, params, result []byte, timeout time.Duration) (Result, error) {
	for round := 1; ; round++ {
		if round > maxInputRounds {
			return errorResult(name, fmt.Sprintf("server %q: %v", c.cfg.Name, errInputRounds)), nil
		}
		answer, err := c.answerInput(ctx, result)
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		if err != nil {
			return errorResult(name, fmt.Sprintf("server %q: %v", c.cfg.Name, err)), nil
		}
		id := c.nextIDString() // a new id for each retry
		line := make([]byte, 0, 64+len(params)+len(answer))
		line = append(line, `{"jsonrpc":"2.0","id":"`...)
		line = append(line, id...)
		line = append(line, `","method":"tools/call","params":`...)
		line = append(line, withInput(params, answer)...)
		line = append(line, '}')
		resp, fr, err := c.callRound(ctx, tool, id, line, timeout)
		if err != nil {
			return Result{}, err
		}
		if resp.Error != nil {
			return errorResult(name, resp.Error.Message), nil
		}
		if !inputRequired(resp.Result) {
			return c.callResult(ctx, name, outSchema, resp.Result, fr, timeout, false) // it may answer with a task
		}
		result = resp.Result
	}
}

// requestWithInput is rawRequest for prompts/get and resources/read: on a modern server a result
// asking for input is answered and the request sent again (as callWithInput).
func (c *conn) requestWithInput(ctx context.Context, method string, params any) ([]byte, *stdio.Frame, error) {
	raw, fr, err := c.rawRequest(ctx, method, params)
	if err != nil || !c.isModern() || !inputRequired(raw) {
		return raw, fr, err
	}
	base, err := json.Marshal(params)
	if err != nil {
		return nil, nil, err
	}
	base = bytes.TrimSuffix(bytes.TrimSpace(base), []byte("}"))
	for round := 1; ; round++ {
		if round > maxInputRounds {
			return nil, nil, errInputRounds
		}
		answer, err := c.answerInput(ctx, raw)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if err != nil {
			return nil, nil, err
		}
		p := base
		if len(bytes.TrimSpace(p)) == 1 { // "{": no members before the answer's leading comma
			answer = answer[1:]
		}
		raw, fr, err = c.rawRequest(ctx, method, json.RawMessage(withInput(p, answer)))
		if err != nil || !inputRequired(raw) {
			return raw, fr, err
		}
	}
}
