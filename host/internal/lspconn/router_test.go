package lspconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// pair connects a router-served conn to a plain client conn over net.Pipe.
func pair(t *testing.T, r *Router) jsonrpc2.Conn {
	t.Helper()
	a, b := net.Pipe()
	server := jsonrpc2.NewConn(NewStream(a, StreamOptions{}), jsonrpc2.WithCodec(Codec{}), jsonrpc2.WithPreempter(r))
	server.Go(context.Background(), r.Handle)
	client := jsonrpc2.NewConn(NewStream(b, StreamOptions{}), jsonrpc2.WithCodec(Codec{}))
	client.Go(context.Background(), jsonrpc2.MethodNotFoundHandler)
	t.Cleanup(func() {
		client.Close()
		b.Close()
		a.Close()
		server.Close()
	})
	return client
}

func code(err error) jsonrpc2.Code {
	var e *jsonrpc2.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func TestRouter(t *testing.T) {
	r := NewRouter(nil)
	var mu sync.Mutex
	var order []int
	r.Notification("note", func(ctx context.Context, p json.RawMessage) error {
		var n int
		if err := json.Unmarshal(p, &n); err != nil {
			return err
		}
		mu.Lock()
		order = append(order, n)
		mu.Unlock()
		return nil
	})
	r.Notification("boom", func(context.Context, json.RawMessage) error { panic("note panic") })
	r.Request("panic", false, func(context.Context, json.RawMessage) (any, error) { panic("req panic") })
	r.Request("count", false, func(context.Context, json.RawMessage) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		return len(order), nil
	})
	release := make(chan struct{})
	started := make(chan struct{})
	r.Request("wait", true, func(ctx context.Context, p json.RawMessage) (any, error) {
		close(started)
		select {
		case <-release:
			return string(p), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	r.Request("params", false, func(ctx context.Context, p json.RawMessage) (any, error) {
		var v struct{ N int }
		if err := Decode("params", p, &v); err != nil {
			return nil, err
		}
		return v.N, nil
	})
	c := pair(t, r)
	ctx := context.Background()

	// A waiting request does not block later ones.
	waitDone := make(chan error, 1)
	var waitRes string
	go func() {
		_, err := c.Call(ctx, "wait", "x", &waitRes)
		waitDone <- err
	}()
	<-started
	for i := range 200 {
		c.Notify(ctx, "note", i)
	}
	c.Notify(ctx, "boom", nil)
	c.Notify(ctx, "unknown", nil)
	c.Notify(ctx, "note", "not a number")
	var n int
	if _, err := c.Call(ctx, "count", nil, &n); err != nil || n != 200 {
		t.Fatalf("count = %d, %v", n, err)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("notification %d applied as %d: order lost", i, v)
		}
	}
	if _, err := c.Call(ctx, "panic", nil, nil); code(err) != jsonrpc2.InternalError {
		t.Errorf("panic: %v, want InternalError", err)
	}
	if _, err := c.Call(ctx, "nope", nil, nil); code(err) != jsonrpc2.MethodNotFound {
		t.Errorf("unknown: %v", err)
	}
	if _, err := c.Call(ctx, "params", map[string]string{"N": "x"}, nil); code(err) != jsonrpc2.InvalidParams {
		t.Errorf("bad params: %v", err)
	}
	close(release)
	if err := <-waitDone; err != nil || waitRes != `"x"` {
		t.Errorf("wait = %q, %v", waitRes, err)
	}
}

func TestRouterCancel(t *testing.T) {
	r := NewRouter(nil)
	started := make(chan struct{})
	r.Request("wait", true, func(ctx context.Context, p json.RawMessage) (any, error) {
		close(started)
		<-ctx.Done()
		return "late", nil
	})
	// Raw client: we choose the id to cancel.
	s := rawClient(t, r)
	ctx := context.Background()
	s.WriteFrame(ctx, []byte(`{"jsonrpc":"2.0","id":7,"method":"wait"}`))
	<-started
	s.WriteFrame(ctx, []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`))
	body, _, err := s.ReadFrame(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	json.Unmarshal(body, &resp)
	if resp.ID != 7 || resp.Error.Code != -32800 {
		t.Errorf("cancelled request answered %s, want -32800", body)
	}
}

func TestStreamRejectsBadFrames(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	srv := NewStream(a, StreamOptions{})
	cli := jsonrpc2.NewHeaderStream(b).(frameRW)
	ctx := context.Background()
	got := make(chan []byte, 1)
	go func() {
		body, _, _ := srv.ReadFrame(ctx)
		got <- append([]byte(nil), body...)
	}()
	for _, bad := range []string{`{"jsonrpc":`, `[1]`, `{"id":3,"x":1}`, `5`} {
		cli.WriteFrame(ctx, []byte(bad))
		reply, _, err := cli.ReadFrame(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			ID    json.RawMessage    `json:"id"`
			Error struct{ Code int } `json:"error"`
		}
		json.Unmarshal(reply, &r)
		want := -32600
		if bad == `{"jsonrpc":` {
			want = -32700
		}
		wantID := "null"
		if bad == `{"id":3,"x":1}` {
			wantID = "3"
		}
		if r.Error.Code != want || string(r.ID) != wantID {
			t.Errorf("%s: reply %s, want code %d id %s", bad, reply, want, wantID)
		}
	}
	good := `{"jsonrpc":"2.0","method":"x"}`
	cli.WriteFrame(ctx, []byte(good))
	if body := <-got; string(body) != good {
		t.Errorf("next good frame = %q", body)
	}
}

// TestRouterAsyncKeepsItsMethod: the method of a request that went async is read again after
// jsonrpc2.Async (its copy), not kept from the frame buffer, which the next frames overwrite:
// the InternalError of a handler that panics after later requests were read names its own
// method.
func TestRouterAsyncKeepsItsMethod(t *testing.T) {
	r := NewRouter(nil)
	started, release := make(chan struct{}), make(chan struct{})
	r.Request("first/panics", true, func(ctx context.Context, p json.RawMessage) (any, error) {
		close(started)
		<-release
		panic("late panic")
	})
	r.Request("other/method", false, func(context.Context, json.RawMessage) (any, error) { return "ok", nil })
	s := rawClient(t, r)
	ctx := context.Background()
	s.WriteFrame(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"first/panics"}`))
	<-started
	// Frames of the same shape, so that each lands where the first one was read.
	for id := 2; id < 5; id++ {
		s.WriteFrame(ctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"other/method"}`, id))
		if body, _, err := s.ReadFrame(ctx); err != nil || !strings.Contains(string(body), `"ok"`) {
			t.Fatalf("other/method = %s, %v", body, err)
		}
	}
	close(release)
	body, _, err := s.ReadFrame(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		ID    int `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(body, &resp)
	if resp.ID != 1 || resp.Error.Code != int(jsonrpc2.InternalError) || !strings.Contains(resp.Error.Message, "first/panics") {
		t.Errorf("the panicking request was answered %s, want an InternalError naming first/panics", body)
	}
}

// FuzzPlainRequest: what check accepts without jsonrpc2.DecodeMessage (plainRequest), jsonrpc2
// accepts (a frame it refuses would end the connection).
func FuzzPlainRequest(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"workspace/executeCommand","params":{"command":"x"}}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`,
		`{"jsonrpc":"2.0","id":"a","method":"m"}`,
		`{"jsonrpc":"2.0","id":null,"method":"m"}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"\u006d"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","result":1}`,
		`{"jsonrpc":"1.0","id":1,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m"} x`,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
		`{"jsonrpc":"2.0","id":99999999999999999999,"method":"m"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !plainRequest(body) {
			return
		}
		if _, err := jsonrpc2.DecodeMessage(body); err != nil {
			t.Fatalf("plainRequest took %q, which jsonrpc2.DecodeMessage refuses: %v", body, err)
		}
	})
}

// TestRouterCancelHandedOn: a handler gets its request's cancel from Cancel (a context derived
// from the request's gets none: it may cover more than one operation, or less than the
// request); cancelling with it gives the context that cause, and the handler's answer is sent:
// only $/cancelRequest answers RequestCancelled.
func TestRouterCancelHandedOn(t *testing.T) {
	r := NewRouter(nil)
	errOwn := errors.New("stopped by the operation")
	r.Request("own", true, func(ctx context.Context, p json.RawMessage) (any, error) {
		derived, stop := context.WithCancel(ctx)
		defer stop()
		if Cancel(derived) != nil || Cancel(context.Background()) != nil {
			return nil, errors.New("Cancel of a context the router did not give the handler is not nil")
		}
		cancel := Cancel(ctx)
		if cancel == nil {
			return nil, errors.New("Cancel of the request's context is nil")
		}
		cancel(errOwn)
		<-derived.Done()
		if ctx.Err() == nil || context.Cause(ctx) != errOwn || context.Cause(derived) != errOwn {
			return nil, fmt.Errorf("after the cancel: err %v, cause %v, derived's cause %v", ctx.Err(), context.Cause(ctx), context.Cause(derived))
		}
		return "answered", nil
	})
	c := pair(t, r)
	var got string
	if _, err := c.Call(t.Context(), "own", nil, &got); err != nil || got != "answered" {
		t.Errorf("own = %q, %v; want the handler's answer", got, err)
	}
}

// TestRouterReply: a result given through Reply goes out as it is, as a json.RawMessage result
// does (not re-encoded: its spacing stays); outside a request's context Reply is the raw
// message itself.
func TestRouterReply(t *testing.T) {
	if got, ok := Reply(context.Background(), []byte(`1`)).(json.RawMessage); !ok || string(got) != `1` {
		t.Errorf("Reply outside a request = %#v", got)
	}
	r := NewRouter(nil)
	r.Request("reply", true, func(ctx context.Context, p json.RawMessage) (any, error) {
		return Reply(ctx, []byte(`{ "spaced" : [1, 2] }`)), nil
	})
	r.Request("null", false, func(ctx context.Context, p json.RawMessage) (any, error) {
		return Reply(ctx, nil), nil
	})
	s := rawClient(t, r)
	ctx := context.Background()
	for _, c := range []struct{ method, want string }{
		{"reply", `{"jsonrpc":"2.0","id":1,"result":{ "spaced" : [1, 2] }}`},
		{"null", `{"jsonrpc":"2.0","id":1,"result":null}`},
	} {
		s.WriteFrame(ctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":%q}`, c.method))
		body, _, err := s.ReadFrame(ctx)
		if err != nil || string(body) != c.want {
			t.Errorf("%s answered %s, %v; want %s", c.method, body, err, c.want)
		}
	}
}

// rawClient serves r on one end of a pipe and returns the other end's stream, for a test that
// writes frames as it chooses (its own ids, a $/cancelRequest).
func rawClient(t *testing.T, r *Router) *Stream {
	t.Helper()
	a, b := net.Pipe()
	server := jsonrpc2.NewConn(NewStream(a, StreamOptions{}), jsonrpc2.WithCodec(Codec{}), jsonrpc2.WithPreempter(r))
	server.Go(context.Background(), r.Handle)
	s := NewStream(b, StreamOptions{})
	t.Cleanup(func() {
		s.Close()
		a.Close()
		server.Close()
	})
	return s
}
