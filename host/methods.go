package host

import (
	"encoding/json"

	"github.com/switchboard-dev/switchboard/mcpbridge"
	"github.com/switchboard-dev/switchboard/permissions"
	"github.com/switchboard-dev/switchboard/session"
)

// The protocol-extension mirror: every workspace command and custom notification of
// ../shared/PROTOCOL.md, with its params and result shapes. The editor integrations mirror these
// names (editors/vscode/src/lsp_ext.ts, editors/nvim/lua/switchboard/protocol.lua).

// Workspace commands (PROTOCOL.md section 3), sent with workspace/executeCommand.
const (
	CmdServers      = "switchboard.servers"
	CmdTools        = "switchboard.tools"
	CmdReconnect    = "switchboard.reconnect"
	CmdAllowlistGet = "switchboard.allowlist.get"
	CmdAllowlistSet = "switchboard.allowlist.set"
	CmdApprovals    = "switchboard.approvals"
	CmdApprove      = "switchboard.approve"
	CmdTrust        = "switchboard.trust"
	CmdCallTool     = "switchboard.callTool"
	CmdChat         = "switchboard.chat"
	CmdCancel       = "switchboard.cancel"
	// Protocol additions (README, "Protocol additions"): MCP elicitation.
	CmdElicitations = "switchboard.elicitations"
	CmdElicit       = "switchboard.elicit"
)

// Commands lists every command, as advertised in executeCommandProvider.commands.
var Commands = []string{
	CmdServers, CmdTools, CmdReconnect, CmdAllowlistGet, CmdAllowlistSet, CmdApprovals,
	CmdApprove, CmdTrust, CmdCallTool, CmdChat, CmdCancel, CmdElicitations, CmdElicit,
}

// Notifications from the host (PROTOCOL.md section 6).
const (
	NotifyServersChanged    = "switchboard/serversChanged"
	NotifyApprovalRequested = "switchboard/approvalRequested"
	NotifyApprovalResolved  = "switchboard/approvalResolved"
	NotifyEvent             = "switchboard/event"
	// Protocol additions: MCP elicitation.
	NotifyElicitationRequested = "switchboard/elicitationRequested"
	NotifyElicitationResolved  = "switchboard/elicitationResolved"
)

// Standard LSP methods the host handles or sends.
const (
	MethodInitialize             = "initialize"
	MethodInitialized            = "initialized"
	MethodShutdown               = "shutdown"
	MethodExit                   = "exit"
	MethodDidChangeConfiguration = "workspace/didChangeConfiguration"
	MethodDidChangeFolders       = "workspace/didChangeWorkspaceFolders"
	MethodExecuteCommand         = "workspace/executeCommand"
	MethodDidOpen                = "textDocument/didOpen"
	MethodDidChange              = "textDocument/didChange"
	MethodDidClose               = "textDocument/didClose"
	MethodDidSave                = "textDocument/didSave"
	MethodCodeAction             = "textDocument/codeAction"
	MethodCancelRequest          = "$/cancelRequest"
	MethodSetTrace               = "$/setTrace"

	MethodShowMessage            = "window/showMessage"
	MethodShowMessageRequest     = "window/showMessageRequest"
	MethodLogMessage             = "window/logMessage"
	MethodWorkDoneProgressNew    = "window/workDoneProgress/create"
	MethodWorkDoneProgressCancel = "window/workDoneProgress/cancel"
	MethodProgress               = "$/progress"
	MethodApplyEdit              = "workspace/applyEdit"
	MethodShowDocument           = "window/showDocument"
)

// Answer titles of the approval showMessageRequest (PROTOCOL.md section 4). Kept short: editors
// cut long button labels.
const (
	TitleAllowOnce   = "Allow once"
	TitleAllowTool   = "Allow tool"
	TitleAllowServer = "Allow server"
	TitleDeny        = "Deny"
)

// Answer titles of the workspace-trust showMessageRequest (PROTOCOL.md section 2).
const (
	TitleTrust     = "Trust"
	TitleDontTrust = "Don't trust"
)

// InitOptions is initializationOptions (PROTOCOL.md section 1), and settings.switchboard of
// workspace/didChangeConfiguration. Every field is optional.
type InitOptions struct {
	ConfigFiles            []string                   `json:"configFiles,omitempty"`
	Servers                map[string]json.RawMessage `json:"servers,omitempty"`
	Mode                   string                     `json:"mode,omitempty"`
	ApprovalTimeoutSeconds *float64                   `json:"approvalTimeoutSeconds,omitempty"`
	Provider               *session.ProviderConfig    `json:"provider,omitempty"`
}

// ServerStatus is the wire ServerStatus.
type ServerStatus = mcpbridge.ServerStatus

// ToolResult is the wire ToolResult.
type ToolResult = mcpbridge.Result

// ServersChangedParams is the params of switchboard/serversChanged.
type ServersChangedParams struct {
	Servers []ServerStatus `json:"servers"`
}

// ToolInfo is the wire ToolInfo (switchboard.tools).
type ToolInfo struct {
	Name        string          `json:"name"`
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Allowlisted bool            `json:"allowlisted"`
}

// ToolsParams is arguments[0] of switchboard.tools (optional).
type ToolsParams struct {
	Server string `json:"server,omitempty"`
}

// ReconnectParams is arguments[0] of switchboard.reconnect (optional).
type ReconnectParams struct {
	Server string `json:"server,omitempty"`
}

// AllowlistGetResult is the result of switchboard.allowlist.get. Error is an extra field: the
// allowlist file's parse error, when it has one (the file then grants nothing).
type AllowlistGetResult struct {
	Path    string   `json:"path"`
	Entries []string `json:"entries"`
	Error   string   `json:"error,omitempty"`
}

// AllowlistSetParams is arguments[0] of switchboard.allowlist.set.
type AllowlistSetParams struct {
	Prefix  string    `json:"prefix"`
	Entries *[]string `json:"entries"`
}

// AllowlistSetResult is the result of switchboard.allowlist.set.
type AllowlistSetResult struct {
	Entries []string `json:"entries"`
}

// Approval is the wire Approval: a pending confirm-gate question.
type Approval struct {
	ID          string           `json:"id"`
	Tool        string           `json:"tool"`
	Server      string           `json:"server"`
	Arguments   json.RawMessage  `json:"arguments"`
	Mode        permissions.Mode `json:"mode"`
	Turn        string           `json:"turn,omitempty"`
	RequestedAt string           `json:"requestedAt"`
}

// ApproveParams is arguments[0] of switchboard.approve (also the code actions' command argument).
type ApproveParams struct {
	ID       string `json:"id"`
	Decision string `json:"decision"`
}

// ApprovalResolvedParams is the params of switchboard/approvalResolved.
type ApprovalResolvedParams struct {
	ID       string `json:"id"`
	Decision string `json:"decision"` // once | always | server | deny
	By       string `json:"by"`       // user | timeout | cancelled | disconnect
}

// Who resolved an approval (ApprovalResolvedParams.By).
const (
	ResolvedByUser       = "user"
	ResolvedByTimeout    = "timeout"
	ResolvedByCancelled  = "cancelled"
	ResolvedByDisconnect = "disconnect"
)

// TrustParams is arguments[0] of switchboard.trust.
type TrustParams struct {
	Server   string `json:"server"`
	Decision string `json:"decision"` // trust | deny
}

// CallToolParams is arguments[0] of switchboard.callTool.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Mode      *string         `json:"mode,omitempty"`
}

// ChatParams is arguments[0] of switchboard.chat.
type ChatParams struct {
	Conversation string  `json:"conversation,omitempty"`
	Prompt       string  `json:"prompt"`
	Mode         *string `json:"mode,omitempty"`
}

// ChatResult is the result of switchboard.chat, returned at once.
type ChatResult struct {
	Conversation string `json:"conversation"`
	Turn         string `json:"turn"`
}

// CancelParams is arguments[0] of switchboard.cancel.
type CancelParams struct {
	Turn string `json:"turn"`
}

// EventParams is the params of switchboard/event: a session.Event as is.
type EventParams = session.Event

// Elicitation is the params of switchboard/elicitationRequested: an MCP server asks the user to
// fill in a form (switchboard.elicitations lists the pending ones).
type Elicitation struct {
	ID          string                  `json:"id"`
	Server      string                  `json:"server"`
	Message     string                  `json:"message"` // the server's words (control characters escaped)
	Fields      []mcpbridge.ElicitField `json:"fields"`
	RequestedAt string                  `json:"requestedAt"` // RFC 3339
}

// ElicitParams is arguments[0] of switchboard.elicit.
type ElicitParams struct {
	ID      string         `json:"id"`
	Action  string         `json:"action"`            // accept | decline | cancel
	Content map[string]any `json:"content,omitempty"` // with accept: field name -> value
}

// ElicitationResolvedParams is the params of switchboard/elicitationResolved.
type ElicitationResolvedParams struct {
	ID     string `json:"id"`
	Action string `json:"action"` // accept | decline | cancel
	By     string `json:"by"`     // user | timeout | cancelled | disconnect
}
