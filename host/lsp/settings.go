package lsp

import (
	"github.com/switchboard-dev/switchboard/host"
	"github.com/switchboard-dev/switchboard/mcpbridge/config"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
)

// The editor settings that mirror initializationOptions (PROTOCOL.md section 1). settings_test.go
// generates the VS Code settings between the "$generated-start" and "$generated-end" markers of
// editors/vscode/package.json from InitOptions and settingDocs (STYLE.md section 5); after a change
// here, run `go test ./host/lsp -run TestPackageJSONSettings -update` and commit package.json.

// settingDoc documents one InitOptions field as the VS Code setting "switchboard.<Key>". The JSON
// schema's types come from the field's Go type (or Shape's).
type settingDoc struct {
	Key         string // the field's json name in InitOptions
	Description string // markdownDescription
	// Scope is the VS Code configuration scope. Every setting here chooses what runs, where secrets
	// go or how the gate decides, so each is "machine": user (or remote machine) settings only, never
	// a repository's .vscode/settings.json (TestSettingsUserOnly; the extension also reads the
	// user-level value only, for editors that do not honour scope).
	Scope   string
	Default any
	Minimum *float64   // numbers only
	Enum    []enumDoc  // a string setting's values, in the order the settings UI shows them
	Shape   any        // when set, its Go type replaces the field's (json.RawMessage has no schema)
	Enums   []propEnum // the values of string properties inside the setting's objects
}

// enumDoc is one allowed value and its enumDescription.
type enumDoc struct{ Value, Description string }

// propEnum lists the allowed values of every property named Property within a setting.
type propEnum struct {
	Property string
	Values   []string
}

func minimum(v float64) *float64 { return &v }

// settingDocs, in the order package.json lists the settings.
var settingDocs = []settingDoc{
	{
		Key:     "servers",
		Scope:   "machine",
		Default: map[string]any{},
		Description: "MCP servers given by the editor, by name: " +
			"`{ \"github\": { \"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-github\"] } }`. " +
			"Same fields as an `mcp.json` entry (`command`, `args`, `env`, `cwd`, `type`, `url`, `headers`, " +
			"`disabled`, `startupTimeoutSeconds`, `callTimeoutSeconds`). " +
			"Servers given here are trusted; they override servers of the same name from config files. " +
			"Read from user settings only: a workspace cannot add servers here.",
		Shape: map[string]editorServer(nil),
		Enums: []propEnum{{"type", []string{config.TransportStdio, config.TransportHTTP, config.TransportSSE}}},
	},
	{
		Key:     "configFiles",
		Scope:   "machine",
		Default: []string{},
		Description: "Extra MCP configuration files (absolute paths), read after `~/.config/switchboard/mcp.json` " +
			"and the workspace's `.vscode/mcp.json`, `.mcp.json`, `.switchboard/mcp.json`.",
	},
	{
		Key:         "mode",
		Scope:       "machine",
		Default:     permissions.SingleConfirm.String(),
		Description: "How the confirm gate treats tool calls. Read from user settings only: a workspace cannot change it.",
		Enum: []enumDoc{
			{permissions.SingleConfirm.String(), "Ask before every tool call that the allowlist does not match."},
			{permissions.AlwaysAllow.String(), "Run every tool call without asking."},
			{permissions.AllowlistOnly.String(), "Run allowlisted tool calls; deny the rest without asking."},
		},
	},
	{
		Key:     "pinning",
		Scope:   "machine",
		Default: host.PinningEnforce,
		Description: "Tool definitions are pinned when first seen: a server that later changes a tool's description or " +
			"schema (to instruct the model, or to take more input) cannot use your earlier approval. " +
			"Read from user settings only: a workspace cannot change it.",
		Enum: []enumDoc{
			{host.PinningEnforce, "Hold back a changed tool (not offered to the model, calls refused) until you review and accept it; a new tool asks before its first run."},
			{host.PinningWarn, "Show changed tools, but let them run."},
			{host.PinningOff, "Do not compare tool definitions."},
		},
	},
	{
		Key:         "approvalTimeoutSeconds",
		Scope:       "machine",
		Default:     120,
		Minimum:     minimum(1),
		Description: "Seconds an approval prompt waits for an answer before the call is denied; also how long a question from an MCP server waits before it is cancelled.",
	},
	{
		Key:     "provider",
		Scope:   "machine",
		Default: map[string]any{},
		Description: "The model the agent uses: " +
			"`{ \"type\": \"anthropic\", \"model\": \"...\", \"apiKeyEnv\": \"ANTHROPIC_API_KEY\" }`. " +
			"Types: `openai`, `openai-responses` (the Responses API, with `reasoningEffort`), `anthropic`, " +
			"`openai-compatible` (with `baseURL`), `script` (tests). " +
			"`prices` (US dollars per million tokens, by model) shows the cost of each turn: " +
			"`{ \"claude-sonnet-4-5\": { \"input\": 3, \"cachedInput\": 0.3, \"cacheWrite\": 3.75, \"output\": 15 } }`. " +
			"Empty: the host's `~/.config/switchboard/config.json`. Read from user settings only: a workspace cannot " +
			"send your API key elsewhere.",
		Enums: []propEnum{{"type", []string{
			session.ProviderOpenAI, session.ProviderOpenAIResponses, session.ProviderAnthropic, session.ProviderOpenAICompatible,
			session.ProviderScript,
		}}, {"reasoningEffort", []string{"minimal", "low", "medium", "high"}}},
	},
	{
		Key:     "toolSearchThreshold",
		Scope:   "machine",
		Default: session.DefaultToolSearchThreshold,
		Description: "With more tools than this (built-in tools included), the model gets the built-in tools, " +
			"`alwaysLoadedTools` and a `search_tools` tool instead of every tool; tools it finds or uses are added " +
			"for its next step, and every tool stays callable. A negative number turns this off. " +
			"Read from user settings only: a workspace cannot change what the model sees.",
	},
	{
		Key:     "daemonIdleSeconds",
		Scope:   "machine",
		Default: 60,
		Minimum: minimum(0),
		Description: "Seconds the shared-server daemon stays after the last editor window using it closed, so that a " +
			"window reload finds its servers running (servers marked `\"shared\"` in an `mcp.json` entry); 0: it exits, " +
			"and its servers stop, as soon as the last window closes. " +
			"Read from user settings only; the window that starts the daemon sets it.",
	},
	{
		Key:     "alwaysLoadedTools",
		Scope:   "machine",
		Default: []string{},
		Description: "Tools always sent to the model when tool search is on (`toolSearchThreshold`): exact names " +
			"(`mcp__github__create_issue`) or a server's tools (`mcp__github__*`). This grants nothing: calls still " +
			"pass the confirm gate. Read from user settings only: a workspace cannot change what the model sees.",
	},
}

// editorServer is the shape of one initializationOptions.servers entry (an mcp.json entry, which
// the host passes on raw to config.LoadConfig), for the settings schema only.
type editorServer struct {
	Command               string            `json:"command"`
	Args                  []string          `json:"args"`
	Env                   map[string]string `json:"env"`
	Cwd                   string            `json:"cwd"`
	Type                  string            `json:"type"`
	URL                   string            `json:"url"`
	Headers               map[string]string `json:"headers"`
	Disabled              bool              `json:"disabled"`
	StartupTimeoutSeconds float64           `json:"startupTimeoutSeconds"`
	CallTimeoutSeconds    float64           `json:"callTimeoutSeconds"`
}
