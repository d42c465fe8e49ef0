package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type testServer struct {
	mcp *server.MCPServer
	// rootsChanged counts notifications/roots/list_changed (--roots).
	rootsChanged atomic.Int64
	o            options
	logf         func(string, ...any)
	calls        atomic.Int64
	storm        sync.Once
	res          *resourceState // --resources
	tasks        *taskStore     // --tasks
}

func newServer(o options, logf func(string, ...any)) *testServer {
	ts := &testServer{o: o, logf: logf}
	hooks := &server.Hooks{}
	if o.stormRate > 0 {
		hooks.AddAfterListTools(func(ctx context.Context, id any, req *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
			ts.storm.Do(func() { go ts.runStorm() })
		})
	}
	opts := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithToolHandlerMiddleware(ts.countCalls),
	}
	if o.instructions != "" {
		opts = append(opts, server.WithInstructions(o.instructions))
	}
	if o.ttlMs > 0 {
		opts = append(opts, server.WithCacheHints(o.ttlMs, mcp.CacheScopePrivate))
	}
	if o.withResources {
		opts = append(opts, ts.resourceOptions(hooks)...)
	}
	if o.tasks {
		ts.tasks = newTaskStore(o, logf)
		opts = append(opts, server.WithTaskCapabilities(false, true, true),
			server.WithExtensions(map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}))
	}
	opts = append(opts, appsResourceOptions(o)...) // apps.go
	ts.mcp = server.NewMCPServer(o.name, "0.1.0", opts...)
	if o.tasks {
		ts.addTaskTools() // tasks.go
	}
	ts.addTools()
	if o.apps {
		ts.addAppTools() // apps.go
	}
	if o.mrtr || o.modernOnly() {
		ts.addMRTRTools() // modern.go
	}
	if o.withResources {
		ts.addResources()
	}
	if o.roots {
		ts.addRootsTool()
	}
	if o.elicit {
		ts.addElicitTools()
	}
	if o.sample {
		ts.addSampleTool()
	}
	if o.rich {
		ts.addRichTool()
	}
	if o.say {
		// Answered by the stdio filter (sayLines): listed here so that clients see it.
		ts.mcp.AddTool(mcp.NewTool("say", mcp.WithDescription("Write the given lines to the client verbatim, then answer."),
			mcp.WithArray("lines", mcp.WithStringItems())), textHandler("say is served over stdio only"))
	}
	if o.hostile {
		ts.mcp.AddTool(mcp.NewTool("hostile", mcp.WithDescription("Hostile "+hostileText)),
			textHandler("result line 1\n\tindented "+hostileText+"\n"))
	}
	if o.toolNamed != "" {
		ts.mcp.AddTool(mcp.NewTool(o.toolNamed, mcp.WithDescription("Dummy tool: returns its name.")), textHandler(o.toolNamed))
	}
	for i := 1; i <= o.tools; i++ {
		name := fmt.Sprintf("dummy_%d", i)
		ts.mcp.AddTool(mcp.NewTool(name, mcp.WithDescription("Dummy tool "+name+": returns its name.")), textHandler(name))
	}
	return ts
}

// countCalls implements --crash-after: the server dies in the middle of call N+1.
func (ts *testServer) countCalls(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := ts.calls.Add(1)
		if ts.o.crashAfter > 0 && n > int64(ts.o.crashAfter) {
			ts.logf("crashing in call %d as asked", n)
			os.Exit(3)
		}
		return next(ctx, req)
	}
}

func (ts *testServer) runStorm() {
	interval := time.Second / time.Duration(ts.o.stormRate)
	end := time.Now().Add(ts.o.stormFor)
	n := 0
	for time.Now().Before(end) {
		ts.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationToolsListChanged), nil)
		n++
		time.Sleep(interval)
	}
	ts.logf("storm over: %d tools/list_changed sent", n)
}

func textHandler(text string) server.ToolHandlerFunc {
	return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(text), nil
	}
}

func (ts *testServer) addTools() {
	s := ts.mcp
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Return the text given."),
		mcp.WithString("text", mcp.Required(), mcp.Description("text to return"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})

	s.AddTool(mcp.NewTool("big", mcp.WithDescription("Return n bytes of text."),
		mcp.WithNumber("n", mcp.Required(), mcp.Description("number of bytes")),
		mcp.WithString("char", mcp.Description("what to repeat (default x)"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := req.GetInt("n", 0)
			unit := req.GetString("char", "x")
			if unit == "" || n < 0 {
				return mcp.NewToolResultError("bad arguments"), nil
			}
			text := strings.Repeat(unit, n/len(unit)+1)[:n]
			return mcp.NewToolResultText(text), nil
		})

	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("Wait, reporting progress every 100 ms; honours cancellation. "+
		"With steps, first report steps progress notifications at once (\"step i of n\")."),
		mcp.WithNumber("seconds", mcp.Required()), mcp.WithNumber("steps")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			d := time.Duration(req.GetFloat("seconds", 1) * float64(time.Second))
			var token mcp.ProgressToken
			if req.Params.Meta != nil {
				token = req.Params.Meta.ProgressToken
			}
			if n := req.GetInt("steps", 0); n > 0 && token != nil {
				for i := 1; i <= n; i++ {
					_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
						map[string]any{"progressToken": token, "progress": i, "total": n, "message": fmt.Sprintf("step %d of %d", i, n)})
				}
				if d <= 0 {
					return mcp.NewToolResultText(fmt.Sprintf("%d steps", n)), nil
				}
			}
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			deadline := time.NewTimer(d)
			defer deadline.Stop()
			for i := 1; ; i++ {
				select {
				case <-ctx.Done():
					ts.logf("slow: cancelled")
					return nil, ctx.Err()
				case <-deadline.C:
					return mcp.NewToolResultText(fmt.Sprintf("slept %s", d)), nil
				case <-tick.C:
					if token != nil {
						_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
							map[string]any{"progressToken": token, "progress": i, "total": int(d / (100 * time.Millisecond))})
					}
				}
			}
		})

	s.AddTool(mcp.NewTool("image", mcp.WithDescription("Return an image content block of n bytes."),
		mcp.WithNumber("bytes", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			data := make([]byte, req.GetInt("bytes", 0))
			for i := range data {
				data[i] = byte(i)
			}
			return mcp.NewToolResultImage("an image", base64.StdEncoding.EncodeToString(data), "image/png"), nil
		})

	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Return an error result."),
		mcp.WithString("message")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError(req.GetString("message", "failed as asked")), nil
		})

	s.AddTool(mcp.NewTool("env", mcp.WithDescription("Return the value of an environment variable, or (unset)."),
		mcp.WithString("name", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			v, ok := os.LookupEnv(req.GetString("name", ""))
			if !ok {
				v = "(unset)"
			}
			return mcp.NewToolResultText(v), nil
		})

	// add_tool adds a tool, or changes an existing one's description, title or input schema while
	// keeping what it does (the rug pull of issue 13).
	s.AddTool(mcp.NewTool("add_tool", mcp.WithDescription("Add a tool at run time, or change an existing tool's description, title or input schema (sends tools/list_changed)."),
		mcp.WithString("name", mcp.Required()), mcp.WithString("description"), mcp.WithString("title"),
		mcp.WithString("schema", mcp.Description("the input schema, a JSON object"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := req.GetString("name", "")
			if name == "" {
				return mcp.NewToolResultError("name is required"), nil
			}
			t, handler, verb := mcp.NewTool(name, mcp.WithDescription("Added at run time.")), textHandler("I am "+name), "added "
			if cur := s.GetTool(name); cur != nil {
				t, handler, verb = cur.Tool, cur.Handler, "changed "
			}
			if d := req.GetString("description", ""); d != "" {
				t.Description = d
			}
			if title := req.GetString("title", ""); title != "" {
				t.Title = title
			}
			if sc := req.GetString("schema", ""); sc != "" {
				if !json.Valid([]byte(sc)) {
					return mcp.NewToolResultError("schema is not JSON"), nil
				}
				t.InputSchema, t.RawInputSchema = mcp.ToolInputSchema{}, json.RawMessage(sc)
			}
			s.AddTool(t, handler)
			return mcp.NewToolResultText(verb + name), nil
		})

	s.AddTool(mcp.NewTool("remove_tool", mcp.WithDescription("Remove a tool at run time (sends tools/list_changed)."),
		mcp.WithString("name", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := req.GetString("name", "")
			s.DeleteTools(name)
			return mcp.NewToolResultText("removed " + name), nil
		})
}

// addRootsTool adds "roots": the client's roots/list answer and how many
// notifications/roots/list_changed have arrived, as JSON.
func (ts *testServer) addRootsTool() {
	ts.mcp.AddNotificationHandler(mcp.MethodNotificationRootsListChanged, func(context.Context, mcp.JSONRPCNotification) {
		ts.rootsChanged.Add(1)
	})
	ts.mcp.AddTool(mcp.NewTool("roots", mcp.WithDescription("Ask the client for its roots (roots/list).")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var res *mcp.ListRootsResult
			var err error
			if server.IsModernRequest(ctx) { // modern.go: a multi round-trip result
				if res = server.RootsResponse(req.Params.InputResponses, "roots"); res == nil {
					return server.NewInputRequestBuilder("").Roots("roots").ToolResult(), nil
				}
			} else {
				res, err = ts.mcp.RequestRoots(ctx, mcp.ListRootsRequest{})
			}
			if err != nil {
				return mcp.NewToolResultError("roots/list: " + err.Error()), nil
			}
			b, err := json.Marshal(map[string]any{"roots": res.Roots, "listChanged": ts.rootsChanged.Load()})
			if err != nil {
				return nil, err
			}
			return mcp.NewToolResultText(string(b)), nil
		})
}

// askSchema is the form of the ask tool unless its arguments give one; raw, so that its fields
// keep this order on the wire.
var askSchema = json.RawMessage(`{"type":"object","properties":{
	"name":{"type":"string","title":"Your name","minLength":1},
	"count":{"type":"integer","title":"How many","minimum":1,"maximum":10,"default":3},
	"color":{"type":"string","title":"Colour","enum":["red","green","blue"]},
	"agree":{"type":"boolean","title":"Agree to the terms"}},
	"required":["name","agree"]}`)

// addElicitTools adds "ask" (form mode; arguments message and schema, a JSON text, optional; warm:
// how many roots/list to ask first, whose answers it ignores, as a server that asked the client
// things before, and so numbers its next request higher) and "open_url" (url mode; argument url):
// each returns the client's answer as JSON {"action","content"}.
func (ts *testServer) addElicitTools() {
	answer := func(res *mcp.ElicitationResult, err error) (*mcp.CallToolResult, error) {
		if err != nil {
			return mcp.NewToolResultError("elicitation/create: " + err.Error()), nil
		}
		b, err := json.Marshal(map[string]any{"action": res.Action, "content": res.Content})
		if err != nil {
			return nil, err
		}
		return mcp.NewToolResultText(string(b)), nil
	}
	ts.mcp.AddTool(mcp.NewTool("ask", mcp.WithDescription("Ask the user to fill in a form (elicitation, form mode)."),
		mcp.WithString("message"), mcp.WithString("schema", mcp.Description("the requested schema as JSON text")),
		mcp.WithNumber("warm", mcp.Description("how many roots/list to ask first (answers ignored)"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for range req.GetInt("warm", 0) {
				_, _ = ts.mcp.RequestRoots(ctx, mcp.ListRootsRequest{}) // ignore error: only its id counts
			}
			schema := askSchema
			if s := req.GetString("schema", ""); s != "" {
				schema = json.RawMessage(s)
			}
			params := mcp.ElicitationParams{Message: req.GetString("message", "Tell me about yourself."), RequestedSchema: schema}
			if server.IsModernRequest(ctx) { // modern.go: a multi round-trip result
				if res := server.ElicitationResponse(req.Params.InputResponses, "ask"); res != nil {
					return answer(res, nil)
				}
				return server.NewInputRequestBuilder("").Elicit("ask", params).ToolResult(), nil
			}
			return answer(ts.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{Params: params}))
		})
	ts.mcp.AddTool(mcp.NewTool("open_url", mcp.WithDescription("Ask the user to open a page (elicitation, url mode)."),
		mcp.WithString("url", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if server.IsModernRequest(ctx) { // modern.go: a multi round-trip result
				if res := server.ElicitationResponse(req.Params.InputResponses, "url"); res != nil {
					return answer(res, nil)
				}
				return server.NewInputRequestBuilder("").Elicit("url", mcp.ElicitationParams{Mode: mcp.ElicitationModeURL,
					URL: req.GetString("url", ""), Message: "Sign in to continue."}).ToolResult(), nil
			}
			return answer(ts.mcp.RequestURLElicitation(ctx, server.ClientSessionFromContext(ctx), "e-1",
				req.GetString("url", ""), "Sign in to continue."))
		})
}

// addSampleTool adds "summarize": it asks the client's model to summarize its argument text
// (sampling/createMessage) and returns the answer as JSON {"model","text","stopReason"}, or the
// client's refusal as an error result.
func (ts *testServer) addSampleTool() {
	ts.mcp.AddTool(mcp.NewTool("summarize", mcp.WithDescription("Ask the client's model to summarize a text (sampling)."),
		mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			params := mcp.CreateMessageParams{
				Messages: []mcp.SamplingMessage{
					{Role: mcp.RoleUser, Content: mcp.NewTextContent("Summarize in one line: " + req.GetString("text", ""))},
				},
				SystemPrompt:     "You summarize.",
				MaxTokens:        100,
				ModelPreferences: &mcp.ModelPreferences{Hints: []mcp.ModelHint{{Name: "claude"}}},
			}
			var res *mcp.CreateMessageResult
			var err error
			if server.IsModernRequest(ctx) { // modern.go: a multi round-trip result
				if res = server.SamplingResponse(req.Params.InputResponses, "sample"); res == nil {
					return server.NewInputRequestBuilder("").Sample("sample", params).ToolResult(), nil
				}
			} else {
				res, err = ts.mcp.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: params})
			}
			if err != nil {
				return mcp.NewToolResultError("sampling/createMessage: " + err.Error()), nil
			}
			text := ""
			if tc, ok := res.Content.(mcp.TextContent); ok {
				text = tc.Text
			} else if m, ok := res.Content.(map[string]any); ok { // an input response, decoded generically
				text, _ = m["text"].(string)
			}
			b, err := json.Marshal(map[string]any{"model": res.Model, "text": text, "stopReason": res.StopReason})
			if err != nil {
				return nil, err
			}
			return mcp.NewToolResultText(string(b)), nil
		})
}

// addRichTool adds rich (-rich): rich tool results for the model (issue 15).
func (ts *testServer) addRichTool() {
	ts.mcp.AddTool(mcp.NewTool("rich", mcp.WithDescription("Return a resource_link, an embedded resource and structuredContent that matches the outputSchema, or not with valid=false."),
		mcp.WithBoolean("valid", mcp.Description("structuredContent matches the outputSchema (default true)")),
		mcp.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`))),
		ts.countCalls(func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var structured any = map[string]any{"count": 2}
			if !req.GetBool("valid", true) {
				structured = map[string]any{"count": "two"}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent("two things"),
				mcp.NewResourceLink("test://static/readme", "readme", "the readme", "text/plain"),
				mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "test://embedded/note", MIMEType: "text/plain", Text: "an embedded note"}),
			}, StructuredContent: structured}, nil
		}))
}
