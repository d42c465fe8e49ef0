package mcpbridge

import (
	"encoding/json"
	"time"
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
)

// Transports.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// ServerConfig is one MCP server after parsing, ${VAR} expansion and merging of all sources.
type ServerConfig struct {
	Name      string            `json:"name"`
	Transport string            `json:"type"` // stdio, http or sse (inferred when the file omits it)
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	// OAuth is the entry's "oauth" object (a pre-registered client); nil = dynamic registration.
	OAuth *OAuthSettings `json:"oauth,omitempty"`
	// EnvFile is a file of KEY=VALUE lines added to Env when the server starts (VS Code's
	// "envFile"): only the path is kept; its values are secrets like ${env:X} references.
	EnvFile string `json:"envFile,omitempty"`
	// EnvFileRoot, when set, is the workspace folder EnvFile must stay inside. EnvFileKeys are the
	// keys EnvFile set when it was read (for the trust prompt); EnvFileDigest, for a workspace
	// file, the sha256 of its content then (part of the fingerprint: Resolve refuses a changed
	// file). LoadConfig sets all three.
	EnvFileRoot   string   `json:"-"`
	EnvFileKeys   []string `json:"-"`
	EnvFileDigest string   `json:"-"`
	// Inputs are the file's "inputs" this definition uses (${input:ID}), in order of use; their
	// values are read by Resolve through its getenv under InputVar(Key) (inputs.go).
	Inputs   []Input `json:"-"`
	Disabled bool    `json:"disabled,omitempty"`
	// Protocol is the entry's "protocol": ProtocolAuto ("" too), ProtocolLegacy or ProtocolModern
	// (era.go).
	Protocol string `json:"protocol,omitempty"`
	// StartupTimeout bounds connect + initialize + list tools (default 30 s).
	StartupTimeout time.Duration `json:"-"`
	// CallTimeout bounds one tools/call (default 60 s).
	CallTimeout time.Duration `json:"-"`
	// EnabledTools, when set, keeps only these tools; DisabledTools drops these (original tool names).
	EnabledTools  []string `json:"enabledTools,omitempty"`
	DisabledTools []string `json:"disabledTools,omitempty"`
	// Source is the file the entry came from, or "editor settings".
	Source string `json:"-"`
	// WorkspaceOnly is true when the server comes only from workspace files, or takes what it runs
	// from the open folder (FromFolder): it needs the user's trust.
	WorkspaceOnly bool `json:"-"`
	// FromFolder is the open folder that a user-level definition (the user's file, a --config file,
	// editor settings) took ${workspaceFolder} from. What runs then comes from the repository the
	// user opened, which the user's own file cannot vouch for: it needs the user's trust, per
	// folder (the resolved path is part of the definition's fingerprint).
	FromFolder string `json:"-"`
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
	// TrustPrompt is, for an untrusted workspace server, the full text of the trust question
	// (what runs, what it reads from the environment, what changed); set by the host.
	TrustPrompt string `json:"trustPrompt,omitempty"`
	// ProtocolVersion is the protocol revision a ready server speaks: "2025-11-25" (the
	// initialize handshake) or "2026-07-28" (era.go).
	ProtocolVersion string `json:"protocolVersion,omitempty"`
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
	// Definition is the fingerprint ([ServerConfig.Fingerprint]) of the server's definition when
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
}
