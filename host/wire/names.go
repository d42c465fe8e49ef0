package wire

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
	CmdElicitations = "switchboard.elicitations"
	CmdElicit       = "switchboard.elicit"

	CmdResources    = "switchboard.resources"    // resources.go
	CmdReadResource = "switchboard.readResource" // resources.go
	CmdUnsubscribe  = "switchboard.unsubscribe"  // resources.go
	CmdPrompts      = "switchboard.prompts"      // resources.go
	CmdGetPrompt    = "switchboard.getPrompt"    // resources.go
	CmdComplete     = "switchboard.complete"     // resources.go
)

// Commands lists every command, as advertised in executeCommandProvider.commands.
var Commands = []string{
	CmdServers, CmdTools, CmdReconnect, CmdAllowlistGet, CmdAllowlistSet, CmdApprovals,
	CmdApprove, CmdTrust, CmdCallTool, CmdChat, CmdCancel, CmdElicitations, CmdElicit,
	CmdResources, CmdReadResource, CmdUnsubscribe, CmdPrompts, CmdGetPrompt, CmdComplete,
}

// Notifications from the host (PROTOCOL.md section 6).
const (
	NotifyServersChanged       = "switchboard/serversChanged"
	NotifyApprovalRequested    = "switchboard/approvalRequested"
	NotifyApprovalResolved     = "switchboard/approvalResolved"
	NotifyEvent                = "switchboard/event"
	NotifyElicitationRequested = "switchboard/elicitationRequested"
	NotifyElicitationResolved  = "switchboard/elicitationResolved"

	NotifyResourcesChanged = "switchboard/resourcesChanged" // resources.go
)

// Notifications lists every switchboard notification.
var Notifications = []string{
	NotifyServersChanged, NotifyApprovalRequested, NotifyApprovalResolved, NotifyEvent,
	NotifyElicitationRequested, NotifyElicitationResolved,
	NotifyResourcesChanged,
}

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

// Button titles of the approval showMessageRequest (PROTOCOL.md section 4). Kept short: editors
// cut long button labels.
const (
	TitleAllowOnce   = "Allow once"
	TitleAllowTool   = "Allow tool"
	TitleAllowServer = "Allow server"
	TitleDeny        = "Deny"
)

// Button titles of the workspace-trust showMessageRequest (PROTOCOL.md section 2).
const (
	TitleTrust     = "Trust"
	TitleDontTrust = "Don't trust"
)

// Button titles of the showMessageRequest forms of a server's question (elicitation).
const (
	TitleOpen    = "Open"
	TitleDecline = "Decline"
	TitleYes     = "Yes"
	TitleNo      = "No"
)

// Who or what resolved a question (ApprovalResolvedParams.By, ElicitationResolvedParams.By).
const (
	ResolvedByUser       = "user"
	ResolvedByTimeout    = "timeout"
	ResolvedByCancelled  = "cancelled"
	ResolvedByDisconnect = "disconnect"
)
