package config

import (
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/sandbox"
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
	// Shared is the entry's "shared" (issue 32): "" (false, the default: the server runs in the
	// window), SharedUser (true: one process for all of the user's windows with identical
	// launches, through the broker daemon) or SharedWorkspace ("workspace": one per folder set).
	// Only stdio servers are shared; a workspace-defined server at workspace scope at most.
	Shared string `json:"shared,omitempty"`
	// Protocol is the entry's "protocol": ProtocolAuto ("" too), ProtocolLegacy or ProtocolModern
	// (protocol.go; the eras themselves are mcpbridge/era.go).
	Protocol string `json:"protocol,omitempty"`
	// Registry is the entry's "registry": the MCP Registry server it was installed from
	// (`switchboard mcp add --from-registry`), nil for an entry written by hand.
	Registry *RegistryRef `json:"registry,omitempty"`
	// StartupTimeout bounds connect + initialize + list tools (default 30 s).
	StartupTimeout time.Duration `json:"-"`
	// CallTimeout bounds one tools/call (default 60 s).
	CallTimeout time.Duration `json:"-"`
	// EnabledTools, when set, keeps only these tools; DisabledTools drops these (original tool names).
	EnabledTools  []string `json:"enabledTools,omitempty"`
	DisabledTools []string `json:"disabledTools,omitempty"`
	// Sandbox is the entry's "sandbox" (stdio only): nil runs the server with the user's rights;
	// see mcpbridge/sandbox. SandboxBase is the folder its relative paths are relative to (the
	// workspace folder of a workspace file, else the file's folder).
	Sandbox     *sandbox.Profile `json:"-"`
	SandboxBase string           `json:"-"`
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
	// Folder is, for an entry of a workspace file, the workspace folder the file belongs to. The
	// entry runs there when it has no cwd (mcpbridge.RunDir), and its fingerprint covers it: the
	// same words in another repository's file ("node server.js") run that repository's files, so
	// trust and grants given in one folder do not carry to another.
	Folder string `json:"-"`
}
