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
	CmdSignIn       = "switchboard.signIn"
	CmdSignOut      = "switchboard.signOut"
	CmdModels       = "switchboard.models"
	CmdPins         = "switchboard.pins"
	CmdPinsAccept   = "switchboard.pins.accept"

	CmdResources    = "switchboard.resources"    // resources.go
	CmdReadResource = "switchboard.readResource" // resources.go
	CmdUnsubscribe  = "switchboard.unsubscribe"  // resources.go
	CmdPrompts      = "switchboard.prompts"      // resources.go
	CmdGetPrompt    = "switchboard.getPrompt"    // resources.go
	CmdComplete     = "switchboard.complete"     // resources.go
	CmdInput        = "switchboard.input"        // the value of a config file's ${input:ID}
	CmdTasks        = "switchboard.tasks"        // tasks.go
	CmdCancelTask   = "switchboard.cancelTask"   // tasks.go

	CmdView              = "switchboard.view"               // MCP Apps: a view's HTML, CSP, input and result
	CmdViewCallTool      = "switchboard.view.callTool"      // a view's tools/call, through the gate
	CmdViewOpenLink      = "switchboard.view.openLink"      // a view's ui/open-link: the person is asked
	CmdViewOpenInBrowser = "switchboard.view.openInBrowser" // serve the view on 127.0.0.1 and open it
	// CmdViewUpdateModelContext is a view's ui/update-model-context: kept for the next chat turn.
	CmdViewUpdateModelContext = "switchboard.view.updateModelContext"
	// CmdViewMessage is a view's ui/message: the person is asked, then it starts a turn of the
	// view's conversation, quoted as the view's text.
	CmdViewMessage = "switchboard.view.message"
	// CmdChatEnd says the editor is done with a conversation (chat cleared, new conversation,
	// chat closed): its history is forgotten and its views stop being served.
	CmdChatEnd = "switchboard.chat.end"
)

// Commands lists every command, as advertised in executeCommandProvider.commands.
var Commands = []string{
	CmdServers, CmdTools, CmdReconnect, CmdAllowlistGet, CmdAllowlistSet, CmdApprovals,
	CmdApprove, CmdTrust, CmdCallTool, CmdChat, CmdCancel, CmdElicitations, CmdElicit,
	CmdSignIn, CmdSignOut,
	CmdModels,
	CmdPins, CmdPinsAccept,
	CmdResources, CmdReadResource, CmdUnsubscribe, CmdPrompts, CmdGetPrompt, CmdComplete,
	CmdInput,
	CmdTasks, CmdCancelTask,
	CmdView, CmdViewCallTool, CmdViewOpenLink, CmdViewOpenInBrowser,
	CmdViewUpdateModelContext, CmdViewMessage,
	CmdChatEnd,
}

// Notifications from the host (PROTOCOL.md section 6).
const (
	NotifyServersChanged       = "switchboard/serversChanged"
	NotifyApprovalRequested    = "switchboard/approvalRequested"
	NotifyApprovalResolved     = "switchboard/approvalResolved"
	NotifyEvent                = "switchboard/event"
	NotifyElicitationRequested = "switchboard/elicitationRequested"
	NotifyElicitationResolved  = "switchboard/elicitationResolved"
	NotifyPinsChanged          = "switchboard/pinsChanged"

	NotifyResourcesChanged = "switchboard/resourcesChanged" // resources.go
	NotifyInputRequested   = "switchboard/inputRequested"
	NotifyInputResolved    = "switchboard/inputResolved"
	NotifyShowTaskResult   = "switchboard/showTaskResult" // tasks.go
	// NotifyViewMessage says a view's ui/message, sent by the person, started a chat turn.
	NotifyViewMessage = "switchboard/viewMessage"
)

// Notifications lists every switchboard notification.
var Notifications = []string{
	NotifyServersChanged, NotifyApprovalRequested, NotifyApprovalResolved, NotifyEvent,
	NotifyElicitationRequested, NotifyElicitationResolved,
	NotifyPinsChanged,
	NotifyResourcesChanged,
	NotifyInputRequested, NotifyInputResolved,
	NotifyShowTaskResult,
	NotifyViewMessage,
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

// Button titles of the review of changed tool definitions (switchboard/pinsChanged): the first
// prompt offers Review, Accept all and Keep blocked; Review shows the diff with Accept and Keep
// blocked.
const (
	TitleReview      = "Review"
	TitleAcceptAll   = "Accept all"
	TitleAccept      = "Accept"
	TitleKeepBlocked = "Keep blocked"
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

// Button titles of the question a view's ui/message asks (switchboard.view.message).
const (
	TitleSend     = "Send"
	TitleDontSend = "Don't send"
)

// Button titles of the sign-in showMessageRequest (an http or sse server in state needs-auth).
const (
	TitleSignIn = "Sign in"
	TitleNotNow = "Not now"
)

// DecidedByRepeat is ToolCallEvent.DecidedBy for a call that repeats, with the same name and
// arguments, a call of the same turn that was denied or failed twice: it was neither asked again
// nor run, and Reason says why in one sentence.
const DecidedByRepeat = "repeat"

// Button title of the notice that a task ended (a task resumed after a restart, or a long one):
// choosing it shows the task's result (switchboard/showTaskResult or window/showDocument).
const TitleShowResult = "Show result"

// Button title of the showMessageRequest that tells an editor without input boxes how to set a
// config file's input from a terminal (switchboard mcp input set).
const TitleReconnect = "Reconnect"
