package lsp

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/switchboard-dev/switchboard/host/internal/lspconn"
	"github.com/switchboard-dev/switchboard/host/wire"
)

// WarmCodecs builds, ahead of need, the per-type encoders and decoders (encoding/json's and
// json/v2's, made by reflection on a type's first use) of what the host reads and writes between
// an editor's initialize and its first tool call: initialize's params and answer, its
// initializationOptions and serversChanged. Built on the path, they held initialize's
// answer and the first server's spawn back (perf over cmd/sbbench's first-call runs, with
// mcpbridge's: about 1.5 ms together); serve runs this on a goroutine of its own at start-up, while
// the host is made. The caches are safe for concurrent use: a type the start reaches first is
// simply built there. It does nothing else.
// Each step yields first, as mcpbridge.WarmCodecs's do.
func WarmCodecs() {
	for _, step := range warmSteps {
		runtime.Gosched()
		_ = step() // ignore error: only the tests care (TestWarmCodecs)
	}
}

// warmSteps are WarmCodecs's steps, in the order a start needs them. Each reports whether its
// sample decoded (TestWarmCodecs).
var warmSteps = []func() error{
	func() error { return jsonv2.Unmarshal([]byte(warmInitialize), new(initializeParams), lenient) },
	func() error {
		o, warns := parseInitOptions(json.RawMessage(warmInitOptions))
		if len(warns) > 0 {
			return errors.New(strings.Join(warns, "; "))
		}
		if o.Servers["warm"] == nil || o.Provider == nil || o.Mode == "" || o.DaemonIdleSeconds == nil {
			return errors.New("initializationOptions sample: a field was not read")
		}
		return nil
	},
	func() error { _, err := lspconn.Codec{}.Marshal(initializeResult("warm")); return err },
	func() error {
		_, err := json.Marshal(wire.ServersChangedParams{Servers: []wire.ServerStatus{{Name: "warm"}}})
		return err
	},
}

// warmInitialize is an initialize request's params with the parts the host reads.
const warmInitialize = `{"processId":1,"rootUri":"file:///warm","rootPath":"/warm",` +
	`"workspaceFolders":[{"uri":"file:///warm","name":"warm"}],` +
	`"capabilities":{"window":{"workDoneProgress":true},"experimental":{"switchboard":{"elicitation":true,` +
	`"pinReview":true,"inputs":true,"textOnce":true,"taskResults":true,"viewMessages":true}}},` +
	`"initializationOptions":{}}`

// warmInitOptions are initializationOptions with one server and the settings editors send.
const warmInitOptions = `{"configFiles":["/warm/mcp.json"],"servers":{"warm":{"command":"warm","args":["warm"],` +
	`"env":{"WARM":"warm"}}},"mode":"single-confirm","approvalTimeoutSeconds":120,` +
	`"provider":{"type":"openai","model":"warm","prices":{"warm":{"input":1,"output":1}}},"toolSearchThreshold":40,` +
	`"alwaysLoadedTools":["warm"],"pinning":"enforce","daemonIdleSeconds":60}`
