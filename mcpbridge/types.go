package mcpbridge

import (
	"encoding/json"
)

// Server states (PROTOCOL.md ServerStatus.state).
const (
	StateStarting  = "starting"
	StateReady     = "ready"
	StateFailed    = "failed"
	StateDisabled  = "disabled"
	StateUntrusted = "untrusted"
	StateStopped   = "stopped"
	// StateNeedsAuth: an http or sse server that wants the person to sign in (OAuth); Error says why.
	StateNeedsAuth = "needs-auth"
	// StateBlocked: the organisation's policy forbids the server (Options.Admit); Error is the
	// person's sentence and Policy names the rule. It is never started.
	StateBlocked = "blocked"
)

// Blocked is why the organisation's policy keeps a server from starting (Options.Admit).
type Blocked struct {
	// Message is one sentence for the person: the rule, the file, whom to ask (escaped).
	Message string
	// Rule is the deciding rule as file#/json/pointer; Source its policy file.
	Rule, Source string
}

// PolicyRef is ServerStatus.policy: the rule that blocked a server.
type PolicyRef struct {
	Rule   string `json:"rule"`
	Source string `json:"source"`
}

// ServerStatus is the wire ServerStatus of PROTOCOL.md section 3.
type ServerStatus struct {
	Name         string `json:"name"`
	State        string `json:"state"`
	Transport    string `json:"transport"`
	Source       string `json:"source"`
	Tools        int    `json:"tools"`
	Instructions bool   `json:"instructions"`
	Error        string `json:"error,omitempty"`
	StderrTail   string `json:"stderrTail,omitempty"`
	// Command is a one-line summary of what runs (command and args, or URL) as written: with
	// ${env:X} references, never their values.
	Command string `json:"command,omitempty"`
	// Sandbox is, for a sandboxed stdio server, what it may touch in one sentence ("sandboxed: no
	// network, writes only ./build and its own folder"); empty when it runs with the user's rights.
	Sandbox string `json:"sandbox,omitempty"`
	// Blocked are a sandboxed server's latest refusals, oldest first, one plain sentence each
	// ("blocked: read of ~/.ssh/id_rsa (never open to a sandboxed server)"), so a person can widen
	// the profile knowingly. They are in the stderr tail too.
	Blocked []string `json:"blocked,omitempty"`
	// TrustPrompt is, for an untrusted workspace server, the full text of the trust question
	// (what runs, what it reads from the environment, what changed); set by the host.
	TrustPrompt string `json:"trustPrompt,omitempty"`
	// ProtocolVersion is the protocol revision a ready server speaks: "2025-11-25" (the
	// initialize handshake) or "2026-07-28" (era.go).
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Policy names the organisation's rule that blocked the server (state blocked).
	Policy *PolicyRef `json:"policy,omitempty"`
	// Shared is set when the server is the shared-server daemon's copy (issue 32).
	Shared *SharedStatus `json:"shared,omitempty"`
}

// SharedStatus is how a shared server is shared.
type SharedStatus struct {
	Scope string `json:"scope"` // "user" (every window) or "workspace" (windows of the same folders)
	// Windows is how many windows are attached to the server, this one included, as the daemon
	// last said (a daemon of an older build says it only when this window attached).
	Windows   int `json:"windows"`
	DaemonPid int `json:"daemonPid"`
	// DaemonBuild is the daemon's Switchboard version; Warning says what to do when it is not
	// this window's, or that the daemon is being replaced (`switchboard daemon restart`).
	DaemonBuild string `json:"daemonBuild,omitempty"`
	Warning     string `json:"warning,omitempty"`
}

// Tool is one registered tool.
type Tool struct {
	Name        string          `json:"name"`   // registered name: mcp__<server>__<tool>, made safe if needed
	Server      string          `json:"server"` // server name
	Tool        string          `json:"tool"`   // the server's own tool name
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the tool's declared outputSchema, nil when it declares none: its results'
	// structuredContent is validated against it.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Definition is the fingerprint ([config.ServerConfig.Fingerprint]) of the server's definition when
	// it comes only from a workspace file, "" for servers the user defined. The gate binds grants
	// for such a server to this definition.
	Definition string `json:"-"`
	// Canonical is the tool's canonical form and Hash its sha256 (CanonicalTool): what the
	// person's pin of this tool is compared with.
	Canonical json.RawMessage `json:"-"`
	Hash      string          `json:"-"`
	// Held is set by the host on a tool whose definition changed since the person approved it:
	// it is not offered to the model, and a call to it is refused.
	Held bool `json:"-"`
	// TaskSupport is the tool's execution.taskSupport ("required", "optional", or "" for a plain
	// call): a call of it may run as a task (tasks.go).
	TaskSupport string `json:"taskSupport,omitempty"`
	// UI is the tool's MCP Apps declaration (apps.go): its view and who may call it; nil when it
	// declares none. Shared: do not modify.
	UI *ToolUI `json:"-"`
}

// Result is one tool call's outcome, shaped like the wire ToolResult (PROTOCOL.md section 3).
type Result struct {
	Name    string            `json:"name"`
	IsError bool              `json:"isError"`
	Text    string            `json:"text"`    // what the model sees: text blocks joined, capped
	Content []json.RawMessage `json:"content"` // MCP content blocks; text blocks capped
	// Truncated is true when the cap cut the text; Bytes is the text size before the cap.
	Truncated bool `json:"truncated"`
	Bytes     int  `json:"bytes"`
	// StructuredError says why the structuredContent does not match the tool's outputSchema
	// (or is missing), "" when it matches or the tool declares none. Text carries it too.
	StructuredError string `json:"structuredError,omitempty"`
	// StructuredContent is the result's structuredContent as the server sent it (up to
	// MaxResultText bytes), for an MCP App's view; the model sees it through Text.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
}
