package lsptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestReadFrame(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "Content-Length: 2\r\n\r\n{}", want: "{}"},
		{in: "content-length:2\r\nContent-Type: x\r\n\r\n[]", want: "[]"},
		{in: "Content-Length: 2\n\n{}", wantErr: "CRLF"},
		{in: "Content-Length: x\r\n\r\n", wantErr: "bad Content-Length"},
		{in: "Content-Type: x\r\n\r\n", wantErr: "without Content-Length"},
		{in: "garbage\r\n\r\n", wantErr: "no colon"},
		{in: "Content-Length: 7\r\n\r\n{}", wantErr: "body"},
		{in: "Content-Length: 9\r\n\r\n123456789", wantErr: "over the bound"},
	} {
		got, err := ReadFrame(bufio.NewReader(strings.NewReader(tc.in)), 8)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ReadFrame(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("ReadFrame(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := ReadFrame(bufio.NewReader(strings.NewReader("")), 0); err != io.EOF {
		t.Errorf("ReadFrame at a clean end = %v, want io.EOF", err)
	}
	body := `{"jsonrpc":"2.0","method":"x"}`
	if got, err := ReadFrame(bufio.NewReader(strings.NewReader(string(Frame([]byte(body))))), 0); err != nil || string(got) != body {
		t.Errorf("ReadFrame(Frame(b)) = %q, %v; want b back", got, err)
	}
}

// server is the other end of a Client: it reads the client's frames and writes scripted ones.
type server struct {
	t  *testing.T
	r  *bufio.Reader
	w  io.Writer
	in chan map[string]json.RawMessage
}

func pair(t *testing.T, opts Options) (*Client, *server) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	c := New(cr, cw, opts)
	s := &server{t: t, r: bufio.NewReader(sr), w: sw, in: make(chan map[string]json.RawMessage, 16)}
	go func() {
		for {
			b, err := ReadFrame(s.r, 0)
			if err != nil {
				close(s.in)
				return
			}
			var m map[string]json.RawMessage
			json.Unmarshal(b, &m) // ignore error: the test sees an empty map
			s.in <- m
		}
	}()
	t.Cleanup(func() { sw.Close(); sr.Close() })
	return c, s
}

func (s *server) write(body string) {
	if err := WriteFrame(s.w, []byte(body)); err != nil {
		s.t.Fatal(err)
	}
}

func (s *server) next() map[string]json.RawMessage {
	s.t.Helper()
	select {
	case m := <-s.in:
		return m
	case <-time.After(10 * time.Second):
		s.t.Fatal("the client wrote nothing")
	}
	return nil
}

func TestClientCallNotifyAnswer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var seen []string
	c, s := pair(t, Options{OnMessage: func(m Message) { seen = append(seen, m.Method) }})

	var got struct{ N int }
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "echo", map[string]int{"n": 1}, &got) }()
	req := s.next()
	if string(req["method"]) != `"echo"` || string(req["params"]) != `{"n":1}` {
		t.Fatalf("request = %v", req)
	}
	// A notification and a request from the server before the response.
	s.write(`{"jsonrpc":"2.0","method":"note","params":{"a":1}}`)
	s.write(`{"jsonrpc":"2.0","id":"q","method":"workspace/configuration","params":{"items":[{},{}]}}`)
	reply := s.next()
	if string(reply["id"]) != `"q"` || string(reply["result"]) != `[null,null]` {
		t.Errorf("answer to workspace/configuration = %v, want [null,null] with id \"q\"", reply)
	}
	s.write(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"result":{"n":7}}`)
	if err := <-errc; err != nil || got.N != 7 {
		t.Fatalf("Call = %+v, %v; want n=7", got, err)
	}

	go func() { errc <- c.Call(ctx, "fail", nil, nil) }()
	req = s.next()
	if _, ok := req["params"]; ok {
		t.Errorf("nil params were sent: %v", req)
	}
	s.write(`[{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"error":{"code":-32601,"message":"no"}}]`)
	var rpcErr *Error
	if err := <-errc; !errors.As(err, &rpcErr) || rpcErr.Code != -32601 {
		t.Fatalf("Call with an error response = %v, want *Error -32601", err)
	}

	msgs, err := c.Await(ctx, func(ms []Message) bool { return len(ms) == 2 })
	if err != nil || !msgs[0].IsNotification() || !msgs[1].IsRequest() || string(msgs[0].Params) != `{"a":1}` {
		t.Fatalf("Await = %+v, %v", msgs, err)
	}
	if strings.Join(seen, ",") != "note,workspace/configuration,," {
		t.Errorf("OnMessage saw %q", seen)
	}
	if c.Err() != nil {
		t.Errorf("Err = %v on good output", c.Err())
	}
}

func TestClientBadOutputAndEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bad := make(chan error, 4)
	c, s := pair(t, Options{OnBadOutput: func(err error) { bad <- err }})
	_, ch, err := c.Send("pending", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.next()
	s.write(`not json`)
	if err := <-bad; !strings.Contains(err.Error(), "not a JSON-RPC message") {
		t.Errorf("bad output = %v", err)
	}
	if _, err := s.w.Write([]byte("Content-Length: 2\n\n{}")); err != nil {
		t.Fatal(err)
	}
	if err := <-bad; !strings.Contains(err.Error(), "malformed frame") {
		t.Errorf("bad output = %v", err)
	}
	s.w.(*io.PipeWriter).Close()
	if _, err := c.Wait(ctx, "pending", ch); err == nil {
		t.Error("Wait after the stream ended = nil error, want one")
	}
	<-c.Done()
	if c.Err() == nil {
		t.Error("Err = nil after bad output")
	}
}

// TestClientAnswerAsync: a blocking answer does not hold reading (a second request is answered
// meanwhile), its ctx ends on $/cancelRequest for its id (and only that one), an *Error result is
// sent as a JSON-RPC error, and the remaining answers end when the stream does.
func TestClientAnswerAsync(t *testing.T) {
	ended := make(chan string, 4)
	c, s := pair(t, Options{AnswerAsync: func(ctx context.Context, m Message) (any, bool) {
		switch m.Method {
		case "block":
			<-ctx.Done()
			ended <- string(m.ID)
			return "cancelled", true
		case "fail":
			return &Error{Code: -32601, Message: "no"}, true
		}
		return "quick", true
	}})
	s.write(`{"jsonrpc":"2.0","id":1,"method":"block"}`)
	s.write(`{"jsonrpc":"2.0","id":2,"method":"block"}`)
	s.write(`{"jsonrpc":"2.0","id":3,"method":"other"}`)
	if m := s.next(); string(m["id"]) != `3` || string(m["result"]) != `"quick"` {
		t.Fatalf("reply = %v, want id 3 answered while 1 and 2 block", m)
	}
	s.write(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":2}}`)
	if m := s.next(); string(m["id"]) != `2` || string(m["result"]) != `"cancelled"` {
		t.Fatalf("reply = %v, want id 2 ended by $/cancelRequest", m)
	}
	if id := <-ended; id != "2" {
		t.Fatalf("ended %s, want 2", id)
	}
	s.write(`{"jsonrpc":"2.0","id":4,"method":"fail"}`)
	if m := s.next(); string(m["id"]) != `4` || !strings.Contains(string(m["error"]), `-32601`) || m["result"] != nil {
		t.Fatalf("reply = %v, want a -32601 error", m)
	}
	s.w.(*io.PipeWriter).Close()
	<-c.Done()
	if id := <-ended; id != "1" {
		t.Fatalf("ended %s after the stream ended, want 1", id)
	}
}
