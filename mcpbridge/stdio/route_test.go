package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// pipeStream is a Stream whose other end is the test, playing the server.
type pipeStream struct {
	fromServer *io.PipeReader
	toServer   *io.PipeWriter
}

func (p *pipeStream) Read(b []byte) (int, error)        { return p.fromServer.Read(b) }
func (p *pipeStream) Write(b []byte) (int, error)       { return p.toServer.Write(b) }
func (p *pipeStream) SetWriteDeadline(time.Time) error  { return nil }
func (p *pipeStream) ServerPid() int                    { return 42 }
func (p *pipeStream) ExitInfo() (reason, stderr string) { return "", "" }
func (p *pipeStream) Close() error {
	p.fromServer.Close()
	return p.toServer.Close()
}

// server is the test's end of a transport started over a pipeStream: requests reads what the
// transport wrote (as it writes it: a write waits until it has all been read), answer writes one
// line to it.
type server struct {
	t        *testing.T
	requests *io.PipeReader
	answers  *io.PipeWriter
}

func startPiped(t *testing.T) (*Transport, *server) {
	t.Helper()
	requests, toServer := io.Pipe()
	fromServer, answers := io.Pipe()
	tr := NewTransport("/bin/false", nil, nil, "", DefaultMaxFrame, slog.New(slog.DiscardHandler))
	tr.Shared(func(context.Context) (Stream, error) {
		return &pipeStream{fromServer: fromServer, toServer: toServer}, nil
	})
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr, &server{t: t, requests: requests, answers: answers}
}

// read takes the next n bytes the transport writes.
func (s *server) read(n int) string {
	s.t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(s.requests, b); err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

func (s *server) answer(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.answers, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

type roundTrip struct {
	resp *Response
	err  error
}

// start sends a request with id in the background; the server must read it (written, returned
// with its newline).
func start(ctx context.Context, tr *Transport, id mcp.RequestId, timeout time.Duration) (written string, done <-chan roundTrip) {
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call"}`, idJSON(id))
	ch := make(chan roundTrip, 1)
	go func() {
		resp, err := tr.RoundTripLine(ctx, id, []byte(line), timeout)
		ch <- roundTrip{resp, err}
	}()
	return line + "\n", ch
}

func idJSON(id mcp.RequestId) string {
	if s, ok := id.Value().(string); ok {
		return `"` + s + `"`
	}
	return fmt.Sprint(id.Value())
}

// An answer finds its call by its id as the server wrote it: the plain string of our own calls
// (found by its bytes), the same string written with an escape, a number (mcp-go's own requests).
// A string and a number that read alike are different ids; an answer to no call is dropped.
// The answer's ID is the request's.
func TestRoundTripMatchesAnswersByID(t *testing.T) {
	tr, srv := startPiped(t)
	// Bounds a call whose answer went astray, so that the test fails saying which (it does not
	// time anything).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before := AnswersInHand()

	plain := mcp.NewRequestId("sb-1")
	line, done := start(ctx, tr, plain, 0)
	srv.read(len(line))
	srv.answer(`{"jsonrpc":"2.0","id":"sb-9","result":"not this call"}`)
	srv.answer(`{"jsonrpc":"2.0","result":"sb-1's","id":"sb-1"}`)
	srv.answer(`{"jsonrpc":"2.0","id":"sb-1","result":"a second answer"}`)
	rt := <-done
	if rt.err != nil || string(rt.resp.Result) != `"sb-1's"` || rt.resp.ID.String() != "string:sb-1" {
		t.Fatalf("plain id: %+v, %v", rt.resp, rt.err)
	}
	if r := rt.resp; cap(r.Result) > cap(r.Frame.Data) || string(r.Frame.Data[cap(r.Frame.Data)-cap(r.Result):][:len(r.Result)]) != `"sb-1's"` {
		t.Error("the result does not alias its frame")
	}

	escaped := mcp.NewRequestId("sb-2")
	line, done = start(ctx, tr, escaped, 0)
	srv.read(len(line))
	srv.answer(`{"jsonrpc":"2.0","id":"sb\u002d2","result":"sb-2's"}`)
	if rt := <-done; rt.err != nil || string(rt.resp.Result) != `"sb-2's"` || rt.resp.ID.String() != "string:sb-2" {
		t.Fatalf("escaped id: %+v, %v", rt.resp, rt.err)
	}

	number, text := mcp.NewRequestId(int64(7)), mcp.NewRequestId("7")
	nline, ndone := start(ctx, tr, number, 0)
	srv.read(len(nline))
	tline, tdone := start(ctx, tr, text, 0)
	srv.read(len(tline))
	srv.answer(`{"jsonrpc":"2.0","id":"7","result":"the string's"}`)
	srv.answer(`{"jsonrpc":"2.0","id":7,"result":"the number's"}`)
	if rt := <-ndone; rt.err != nil || string(rt.resp.Result) != `"the number's"` || rt.resp.ID.String() != "int64:7" {
		t.Errorf("number id: %+v, %v", rt.resp, rt.err)
	}
	if rt := <-tdone; rt.err != nil || string(rt.resp.Result) != `"the string's"` || rt.resp.ID.String() != "string:7" {
		t.Errorf("string id 7: %+v, %v", rt.resp, rt.err)
	}
	if n := AnswersInHand() - before; n != 0 {
		t.Errorf("AnswersInHand moved by %d; want 0", n)
	}
}

// A call that timed out is gone: its late answer is dropped, not counted as in hand, and does not
// reach the next call.
func TestLateAnswerAfterTimeout(t *testing.T) {
	tr, srv := startPiped(t)
	before := AnswersInHand()
	line, done := start(context.Background(), tr, mcp.NewRequestId("sb-1"), time.Millisecond)
	srv.read(len(line))
	if rt := <-done; !errors.Is(rt.err, ErrCallTimeout) {
		t.Fatalf("call = %+v, %v; want a timeout", rt.resp, rt.err)
	}
	srv.answer(`{"jsonrpc":"2.0","id":"sb-1","result":"late"}`)
	line, done = start(context.Background(), tr, mcp.NewRequestId("sb-2"), 0)
	srv.read(len(line))
	srv.answer(`{"jsonrpc":"2.0","id":"sb-2","result":"sb-2's"}`)
	if rt := <-done; rt.err != nil || string(rt.resp.Result) != `"sb-2's"` {
		t.Fatalf("next call = %+v, %v", rt.resp, rt.err)
	}
	if n := AnswersInHand() - before; n != 0 {
		t.Errorf("AnswersInHand moved by %d; want 0", n)
	}
}

// A call whose context ends while its answer waits in its hand either takes the answer or gives
// up; when it gives up, the answer it leaves is taken off AnswersInHand all the same (the host
// would otherwise wait for a reply that is not coming). The server reads the request only in
// part until the answer is handed over and the context cancelled, so that the call sees both at
// once and picks one at random.
func TestAnswerInHandWhenCancelled(t *testing.T) {
	tr, srv := startPiped(t)
	before := AnswersInHand()
	took, gaveUp := 0, 0
	for i := range 40 {
		ctx, cancel := context.WithCancel(context.Background())
		id := fmt.Sprintf("sb-%d", i)
		line, done := start(ctx, tr, mcp.NewRequestId(id), 0)
		srv.read(10) // the write waits for the rest
		srv.answer(`{"jsonrpc":"2.0","id":"` + id + `","result":{}}`)
		for AnswersInHand() == before { // handed over
			runtime.Gosched()
		}
		cancel()
		srv.read(len(line) - 10)
		switch rt := <-done; {
		case rt.err == nil && string(rt.resp.Result) == `{}`:
			took++
		case errors.Is(rt.err, context.Canceled):
			gaveUp++
		default:
			t.Fatalf("call %d = %+v, %v", i, rt.resp, rt.err)
		}
		if n := AnswersInHand() - before; n != 0 {
			t.Fatalf("call %d: AnswersInHand moved by %d; want 0 (took %d, gave up %d)", i, n, took, gaveUp)
		}
	}
	t.Logf("took the answer %d times, gave up %d times", took, gaveUp)
}
