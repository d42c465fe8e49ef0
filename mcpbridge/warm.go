package mcpbridge

import (
	"encoding/json"
	"runtime"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-dev/switchboard/mcpbridge/config"
)

// WarmCodecs builds, ahead of need, what encoding/json keeps per type (its encoders, decoders and
// field lists, built by reflection on a type's first use) for what a server's start and its first
// call encode and decode: a definition's identity and fingerprint, the initialize request mcp-go
// sends and its answer, a tools/list page, a server's notification. Built on the path they took
// about 1.5 ms of a host's start, between its exec and its first call answered, mostly while the
// first server waited to be spawned or answered (perf over cmd/sbbench's first-call runs); built
// here, on a goroutine of its own while the host reads its editor's initialize, they are ready
// when the start needs them. The caches are encoding/json's own, safe for concurrent use: a type
// the start reaches first is simply built there. It does nothing else and can run at any time.
//
// Each step yields first (runtime.Gosched): on two cores the host's own start has two goroutines
// that can run at once (initialize's answer and the servers' start), and neither should wait for
// a P behind this.
func WarmCodecs() {
	for _, step := range warmSteps {
		runtime.Gosched()
		_ = step() // ignore error: only the tests care (TestWarmCodecs)
	}
}

// warmSteps are WarmCodecs's steps, in the order a start needs them. Each reports whether its
// sample decoded (the tests hold them to it: a sample that no longer fits its type warms nothing).
var warmSteps = []func() error{
	func() error {
		cfg := config.ServerConfig{Name: "warm", Transport: config.TransportStdio, Command: "warm", Args: []string{"warm"},
			Env: map[string]string{"WARM": "warm"}}
		_ = cfg.Identity()
		_ = cfg.Fingerprint()
		_ = ServerIdentity(cfg)
		return nil
	},
	func() error { _ = (&Registry{}).clientMeta(); return nil },
	func() error {
		// mcp-go's initialize request, as the stdio transport encodes it. The params are the
		// unnamed type client.initializeLegacy sends: the same fields, so the same type.
		_, err := json.Marshal(transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("sb-0"), Method: "initialize",
			Params: struct {
				ProtocolVersion string                 `json:"protocolVersion"`
				ClientInfo      mcp.Implementation     `json:"clientInfo"`
				Capabilities    mcp.ClientCapabilities `json:"capabilities"`
			}{}})
		return err
	},
	func() error { return json.Unmarshal([]byte(warmInitializeResult), new(mcp.InitializeResult)) }, // as mcp-go decodes it
	func() error {
		if _, err := json.Marshal(mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION,
			Notification: mcp.Notification{Method: "notifications/initialized"}}); err != nil {
			return err
		}
		return json.Unmarshal([]byte(warmNotification), new(mcp.JSONRPCNotification))
	},
	func() error { return json.Unmarshal([]byte(warmToolsList), new(toolsPage)) }, // conn.listTools
}

// warmInitializeResult is an initialize answer with every part a server commonly sends.
const warmInitializeResult = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},` +
	`"resources":{"subscribe":true,"listChanged":true},"prompts":{"listChanged":true},"logging":{},"completions":{},` +
	`"experimental":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},` +
	`"serverInfo":{"name":"warm","title":"warm","version":"1"},"instructions":"warm"}`

// warmNotification is a server's log message.
const warmNotification = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"warm","data":"warm"}}`

// warmToolsList is a tools/list page with one tool that has every field.
const warmToolsList = `{"tools":[{"name":"warm","title":"warm","description":"warm",` +
	`"inputSchema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},` +
	`"outputSchema":{"type":"object"},"annotations":{"title":"warm","readOnlyHint":true},` +
	`"execution":{"taskSupport":"optional"},"_meta":{"ui":{"resourceUri":"ui://warm"}}}],"nextCursor":""}`
