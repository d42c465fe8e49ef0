package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// stepsServer has a tool "steps" that reports n progress notifications and then waits to be
// cancelled (mcp-go's servers may write a result before the notifications sent ahead of it, so the
// test ends the call once it has seen the last one); without a progress token it answers at once.
func stepsServer() *server.MCPServer {
	s := server.NewMCPServer("p", "1", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("steps", mcp.WithNumber("n")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
				return mcp.NewToolResultText("no token"), nil
			}
			n := req.GetInt("n", 0)
			for i := 1; i <= n; i++ {
				err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
					map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": n, "message": fmt.Sprintf("step %d of %d", i, n)})
				if err != nil {
					return nil, err
				}
			}
			<-ctx.Done()
			return nil, ctx.Err()
		})
	return s
}

// TestCallProgress: over every transport, a call under WithProgress hands on progress that never
// goes backwards (even when the transport reorders it), reaches the last notification, and never calls back after Call returns; a call without it
// asks for no progress.
func TestCallProgress(t *testing.T) {
	cases := []struct {
		name, tool, args string
		setup            func(t *testing.T) *Registry
	}{
		{"in-process", "mcp__p__steps", `{"n":20}`, func(t *testing.T) *Registry {
			r := newInProcRegistry(t, inProc{"p": stepsServer()}, Options{})
			applyAndWait(t, r, inProcCfg("p"))
			return r
		}},
		{"streamable-http", "mcp__p__steps", `{"n":20}`, func(t *testing.T) *Registry {
			ts := httptest.NewServer(server.NewStreamableHTTPServer(stepsServer()))
			t.Cleanup(ts.Close)
			r := newTestRegistry(t, Options{})
			applyAndWait(t, r, config.ServerConfig{Name: "p", Transport: config.TransportHTTP, URL: ts.URL + "/mcp",
				StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second})
			return r
		}},
		{"stdio", "mcp__p__slow", `{"seconds":60,"steps":20}`, func(t *testing.T) *Registry {
			r := newTestRegistry(t, Options{})
			applyAndWait(t, r, stdioCfg("p"))
			return r
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.setup(t)
			if s := statusMap(r)["p"]; s.State != StateReady {
				t.Fatalf("status = %+v", s)
			}
			var (
				mu       sync.Mutex
				got      []Progress
				returned atomic.Bool
			)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctx = WithProgress(ctx, func(p Progress) {
				if returned.Load() {
					t.Errorf("progress %+v after Call returned", p)
				}
				mu.Lock()
				got = append(got, p)
				mu.Unlock()
				if p.Progress == 20 {
					cancel()
				}
			})
			_, err := r.Call(ctx, tc.tool, json.RawMessage(tc.args))
			returned.Store(true)
			if err != context.Canceled {
				t.Fatalf("Call: err = %v, want it cancelled after the last progress", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) == 0 {
				t.Fatal("no progress")
			}
			for i := 1; i < len(got); i++ {
				if got[i].Progress < got[i-1].Progress {
					t.Errorf("progress goes backwards: %+v", got)
					break
				}
			}
			if last, want := got[len(got)-1], (Progress{Progress: 20, Total: 20, Message: "step 20 of 20"}); last != want {
				t.Errorf("last progress = %+v, want %+v", last, want)
			}
		})
	}
	t.Run("without", func(t *testing.T) {
		r := newInProcRegistry(t, inProc{"p": stepsServer()}, Options{})
		applyAndWait(t, r, inProcCfg("p"))
		if res, err := r.Call(context.Background(), "mcp__p__steps", json.RawMessage(`{"n":3}`)); err != nil || res.Text != "no token" {
			t.Errorf("Call without WithProgress = %+v, %v; want no progress token sent", res, err)
		}
	})
}

// TestProgressSinkLazy: a call that reports no progress starts no goroutine (the sink's channels
// stay nil through the call and its end); the first report starts one, the last value reaches the
// observer before stop returns, and a report after the end is dropped.
func TestProgressSinkLazy(t *testing.T) {
	c := &conn{}
	var got []Progress
	token, stop := c.startProgress(func(p Progress) { got = append(got, p) })
	v, _ := c.progress.Load(token)
	sink := v.(*progressSink)
	stop()
	if sink.signal != nil || sink.done != nil {
		t.Fatal("a call without progress started the delivery goroutine")
	}

	token, stop = c.startProgress(func(p Progress) { got = append(got, p) })
	v, _ = c.progress.Load(token)
	sink = v.(*progressSink)
	sink.put(Progress{Progress: 1, Total: 3})
	sink.put(Progress{Progress: 2, Total: 3})
	stop() // waits for the observer: got is safe to read after it
	if len(got) == 0 || got[len(got)-1].Progress != 2 {
		t.Fatalf("observer saw %+v; want the last value 2 before stop returned", got)
	}
	if _, ok := c.progress.Load(token); ok {
		t.Fatal("stop left the token registered")
	}
	n := len(got)
	sink.put(Progress{Progress: 3, Total: 3})
	if sink.latest != nil || len(got) != n {
		t.Fatal("a report after the end was kept")
	}
}
