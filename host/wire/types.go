package wire

import "encoding/json"

// Mode is a permission mode: "single-confirm" (the default), "always-allow" or "allowlist-only".
type Mode = string

// InitOptions is initializationOptions (PROTOCOL.md section 1), and settings.switchboard of
// workspace/didChangeConfiguration. Every field is optional.
type InitOptions struct {
	ConfigFiles            []string                   `json:"configFiles,omitempty"`
	Servers                map[string]json.RawMessage `json:"servers,omitempty"`
	Mode                   Mode                       `json:"mode,omitempty"`
	ApprovalTimeoutSeconds *float64                   `json:"approvalTimeoutSeconds,omitempty"`
	Provider               *Provider                  `json:"provider,omitempty"`
	// ToolSearchThreshold: above this many tools the model gets a small set plus search_tools
	// (default 40; negative = never).
	ToolSearchThreshold *float64 `json:"toolSearchThreshold,omitempty"`
	// AlwaysLoadedTools are tools always sent to the model: exact names or "prefix*".
	AlwaysLoadedTools []string `json:"alwaysLoadedTools,omitempty"`
	Pinning           string   `json:"pinning,omitempty"` // enforce (default) | warn | off
	// DaemonIdleSeconds is how long the shared-server daemon a window starts stays after the
	// last window left (default 60; user settings only).
	DaemonIdleSeconds *float64 `json:"daemonIdleSeconds,omitempty"`
}

// Provider is the model provider of initializationOptions.provider (and of config.json).
type Provider struct {
	Type      string `json:"type,omitempty"` // openai (default) | openai-responses | anthropic | openai-compatible | script
	Model     string `json:"model,omitempty"`
	BaseURL   string `json:"baseURL,omitempty"`
	APIKeyEnv string `json:"apiKeyEnv,omitempty"` // the NAME of the environment variable holding the key
	Script    string `json:"script,omitempty"`
	MaxTokens int    `json:"maxTokens,omitempty"`
	// ReasoningEffort (openai-responses): minimal | low | medium | high; "" = the API's default.
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	// Prices per model name, in US dollars per million tokens, for the cost in Usage.
	Prices map[string]Price `json:"prices,omitempty"`
}

// Price is one model's price in US dollars per million tokens (Provider.Prices).
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cachedInput,omitempty"` // default Input
	CacheWrite  float64 `json:"cacheWrite,omitempty"`  // default Input
	Output      float64 `json:"output"`
}

// ServerStatus is one MCP server as switchboard.servers and switchboard/serversChanged show it.
type ServerStatus struct {
	Name         string `json:"name"`
	State        string `json:"state"` // starting | ready | failed | disabled | untrusted | stopped | needs-auth | blocked
	Transport    string `json:"transport"`
	Source       string `json:"source"` // file, or "editor settings"
	Tools        int    `json:"tools"`
	Instructions bool   `json:"instructions"`
	Error        string `json:"error,omitempty"`
	StderrTail   string `json:"stderrTail,omitempty"`
	// Command is what runs (command and arguments, or the URL) as the configuration spells it:
	// ${env:X} templates, never values from the user's environment.
	Command string `json:"command,omitempty"`
	// TrustPrompt is, for an untrusted workspace server, the trust question's full text (what runs,
	// what it reads from the environment, what changed since last trusted), without "Start it?".
	TrustPrompt string `json:"trustPrompt,omitempty"`
	// ProtocolVersion is the MCP revision a ready server speaks: "2025-11-25" (the initialize
	// handshake) or "2026-07-28" (per-request metadata); absent while it is not ready.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Sandbox is, for a sandboxed stdio server, what it may touch in one sentence ("sandboxed: no
	// network, writes only ./build and its own folder"); absent when it runs with the user's rights.
	Sandbox string `json:"sandbox,omitempty"`
	// Blocked are a sandboxed server's latest refusals, oldest first, one plain sentence each
	// ("blocked: read of ~/.ssh/id_rsa (never open to a sandboxed server)").
	Blocked []string `json:"blocked,omitempty"`
	// Policy names the organisation's rule that blocked the server (state blocked); Error is then
	// the sentence for the person.
	Policy *PolicyRef `json:"policy,omitempty"`
	// Shared is set for a server that runs once for several windows in the shared-server daemon
	// (the entry's "shared"); absent for a server this window runs itself.
	Shared *SharedStatus `json:"shared,omitempty"`
}

// PolicyRef is the organisation's policy rule behind a decision: the rule as file#/json/pointer
// and the policy file.
type PolicyRef struct {
	Rule   string `json:"rule"`
	Source string `json:"source"`
}

// SharedStatus is how a shared server is shared: editors show "shared (3 windows)".
type SharedStatus struct {
	Scope string `json:"scope"` // "user": every window; "workspace": windows of the same folders
	// Windows is how many windows use the server now, this one included (serversChanged is sent
	// again when it changes; a daemon of an older build tells it only when this one attached).
	Windows   int `json:"windows"`
	DaemonPid int `json:"daemonPid"`
	// DaemonBuild is the daemon's Switchboard version; Warning, when set, says to restart it.
	DaemonBuild string `json:"daemonBuild,omitempty"`
	Warning     string `json:"warning,omitempty"`
}

// ServersChangedParams is the params of switchboard/serversChanged.
type ServersChangedParams struct {
	Servers []ServerStatus `json:"servers"`
}

// ToolInfo is one tool of switchboard.tools.
type ToolInfo struct {
	Name        string          `json:"name"` // mcp__server__tool
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Allowlisted bool            `json:"allowlisted"`
	// Pin is "changed" (held back under pinning enforce) or "new" when the tool differs from the
	// definition the person approved (switchboard.pins).
	Pin string `json:"pin,omitempty"`
	// TaskSupport is "required" or "optional" for a tool whose calls run as MCP tasks (PROTOCOL.md
	// section 7, "Long calls").
	TaskSupport string `json:"taskSupport,omitempty"`
	// View says the tool declares an MCP Apps view (a call of it leaves one: ViewRef).
	View bool `json:"view,omitempty"`
	// AppOnly says only the server's views may call the tool: it is not offered to the model.
	AppOnly bool `json:"appOnly,omitempty"`
	// Policy is "deny" (refused in every mode, not offered to the model) or "ask" (asked even
	// when allowlisted) when the organisation's policy has a rule for the tool; PolicyRule is the
	// rule as file#/json/pointer.
	Policy     string `json:"policy,omitempty"`
	PolicyRule string `json:"policyRule,omitempty"`
}

// ToolsParams is arguments[0] of switchboard.tools (optional).
type ToolsParams struct {
	Server string `json:"server,omitempty"`
}

// ReconnectParams is arguments[0] of switchboard.reconnect (optional).
type ReconnectParams struct {
	Server string `json:"server,omitempty"`
}

// AllowlistGetResult is the result of switchboard.allowlist.get. Error is the allowlist file's
// problem, when it has one (the file then grants nothing).
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

// PromptAbout is the "switchboard" field of a window/showMessageRequest that asks an approval or
// a trust question: which one it is, so that an editor answering it later (switchboard.approve,
// switchboard.trust) names it exactly, never by matching the message's text (a server's tool
// name can contain another's).
type PromptAbout struct {
	Approval    string `json:"approval,omitempty"`    // the approval's id (switchboard.approve)
	TrustServer string `json:"trustServer,omitempty"` // the server the trust question is about (switchboard.trust)
	// Fingerprint is the trust question's definition: switchboard.trust with it decides for what
	// the prompt showed, or nothing (the file changed since).
	Fingerprint string `json:"fingerprint,omitempty"`
}

// Approval is a pending confirm-gate question.
type Approval struct {
	ID          string          `json:"id"`
	Tool        string          `json:"tool"`
	Server      string          `json:"server"`
	Arguments   json.RawMessage `json:"arguments"`
	Mode        Mode            `json:"mode"`
	Turn        string          `json:"turn,omitempty"`
	RequestedAt string          `json:"requestedAt"` // RFC 3339
}

// ApproveParams is arguments[0] of switchboard.approve (also the code actions' command argument).
type ApproveParams struct {
	ID       string `json:"id"`
	Decision string `json:"decision"` // once | always | server | deny
}

// ApprovalResolvedParams is the params of switchboard/approvalResolved.
type ApprovalResolvedParams struct {
	ID       string `json:"id"`
	Decision string `json:"decision"` // once | always | server | deny
	By       string `json:"by"`       // user | timeout | cancelled | disconnect
}

// TrustParams is arguments[0] of switchboard.trust.
type TrustParams struct {
	Server   string `json:"server"`
	Decision string `json:"decision"` // trust | deny
	// Fingerprint, when set, is the definition the decision is about (a trust prompt's
	// PromptAbout.Fingerprint): should the server's definition have changed since, the command
	// is refused (InvalidParams) and nothing is decided.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// SignInParams is arguments[0] of switchboard.signIn and switchboard.signOut.
type SignInParams struct {
	Server string `json:"server"`
}

// CallToolParams is arguments[0] of switchboard.callTool.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Mode      *Mode           `json:"mode,omitempty"`
}

// ToolResult is the result of switchboard.callTool.
type ToolResult struct {
	Name    string            `json:"name"`
	IsError bool              `json:"isError"`
	Text    string            `json:"text"`    // what the model sees: text blocks joined, capped
	Content []json.RawMessage `json:"content"` // MCP content blocks; text blocks capped
	// Truncated is true when the cap cut the text; Bytes is the text size before the cap.
	Truncated bool `json:"truncated"`
	Bytes     int  `json:"bytes"`
	// Summary is, for a call that was denied, not run or failed, one plain sentence for the person
	// ("Server 'everything' is not running (...); reconnect it."); Text stays what the model sees.
	Summary string `json:"summary,omitempty"`
	// TextOmitted is true when text blocks were left out of Content because the editor declared
	// experimental.switchboard.textOnce: the text is sent once, in Text.
	TextOmitted bool `json:"textOmitted,omitempty"`
	// View names the MCP App view of the result, when the tool declares one (views.go).
	View *ViewRef `json:"view,omitempty"`
	// StructuredContent is the result's structuredContent as the server sent it, in the results
	// of switchboard.view.callTool only (the view reads it).
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
}

// ChatParams is arguments[0] of switchboard.chat.
type ChatParams struct {
	Conversation string `json:"conversation,omitempty"`
	Prompt       string `json:"prompt"`
	Mode         *Mode  `json:"mode,omitempty"`
	// Attachments are resources read and given to the model with the prompt (resources.go).
	Attachments []ResourceRef `json:"attachments,omitempty"`
	// ServerPrompt is a server's prompt run as the turn's request; prompt may then be empty.
	ServerPrompt *GetPromptParams `json:"serverPrompt,omitempty"`
}

// ChatResult is the result of switchboard.chat, returned at once.
type ChatResult struct {
	Conversation string `json:"conversation"`
	Turn         string `json:"turn"`
	// ViewContext is the context MCP Apps views added that went to the model with this turn
	// (PROTOCOL.md, "MCP Apps views"); editors show it in the transcript.
	ViewContext []ViewContextNote `json:"viewContext,omitempty"`
}

// CancelParams is arguments[0] of switchboard.cancel.
type CancelParams struct {
	Turn string `json:"turn"`
}

// Event is the params of switchboard/event: one step of a chat turn.
type Event struct {
	Turn         string           `json:"turn"`
	Conversation string           `json:"conversation"`
	Kind         string           `json:"kind"` // text | toolCall | toolResult | done | error
	Text         string           `json:"text,omitempty"`
	ToolCall     *ToolCallEvent   `json:"toolCall,omitempty"`
	Result       *ToolResultEvent `json:"result,omitempty"`
	Usage        *Usage           `json:"usage,omitempty"` // done: the turn's total
	// ConversationUsage (done) is the conversation's total, this turn included.
	ConversationUsage *Usage `json:"conversationUsage,omitempty"`
	StopReason        string `json:"stopReason,omitempty"` // done
	Error             string `json:"error,omitempty"`      // error: the message
}

// ToolCallEvent is one tool call of a chat turn and its approval state.
type ToolCallEvent struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Approval  string          `json:"approval"`            // pending | allowed | denied
	DecidedBy string          `json:"decidedBy,omitempty"` // empty while pending; "repeat": see DecidedByRepeat
	Reason    string          `json:"reason,omitempty"`
	// Label is the decision for the person, saying which grant: "allowed once by you", "allowed by
	// you, always for this tool", "allowed by you for every tool of server 's'", "denied by you".
	Label string `json:"label,omitempty"`
}

// ToolResultEvent is the outcome of one tool call of a chat turn.
type ToolResultEvent struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	IsError   bool   `json:"isError"`
	Truncated bool   `json:"truncated"`
	Bytes     int    `json:"bytes"`
	Text      string `json:"text"` // a preview
	// Summary is as ToolResult.Summary: one plain sentence for the person when the call was
	// denied, not run or failed (Text is what the model saw).
	Summary string `json:"summary,omitempty"`
	// View names the MCP App view of the result, when the tool declares one.
	View *ViewRef `json:"view,omitempty"`
}

// Usage is token usage (a turn's or a conversation's). InputTokens counts every input token,
// cached ones included; uncached input is InputTokens - CachedInputTokens - CacheWriteTokens.
type Usage struct {
	InputTokens       int `json:"inputTokens"`
	OutputTokens      int `json:"outputTokens"`
	CachedInputTokens int `json:"cachedInputTokens"`          // input read from the prompt cache
	CacheWriteTokens  int `json:"cacheWriteTokens,omitempty"` // input written to the cache (Anthropic)
	// Cost is in US dollars, when the user set prices for the model (Provider.Prices).
	Cost float64 `json:"cost,omitempty"`
}

// ModelsResult is the result of switchboard.models.
type ModelsResult struct {
	Current string      `json:"current"` // the configured model
	Models  []ModelInfo `json:"models"`
}

// ModelInfo is one model the provider offers.
type ModelInfo struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName,omitempty"`
	Created     int64  `json:"created,omitempty"` // Unix seconds, when the API says
}

// Elicitation is the params of switchboard/elicitationRequested: an MCP server asks the user to
// fill in a form (switchboard.elicitations lists the pending ones).
type Elicitation struct {
	ID          string        `json:"id"`
	Server      string        `json:"server"`
	Message     string        `json:"message"` // the server's words, escaped
	Fields      []ElicitField `json:"fields"`  // in the server's order
	RequestedAt string        `json:"requestedAt"`
}

// ElicitField is one field of a server's form.
type ElicitField struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is "string", "number", "integer", "boolean", or "array" (a multi-select of Enum).
	Type       string   `json:"type"`
	Required   bool     `json:"required"`
	Enum       []string `json:"enum,omitempty"`
	EnumTitles []string `json:"enumTitles,omitempty"` // labels of Enum, same length
	Format     string   `json:"format,omitempty"`     // string: email, uri, date, date-time
	MinLength  *int     `json:"minLength,omitempty"`
	MaxLength  *int     `json:"maxLength,omitempty"`
	Minimum    *float64 `json:"minimum,omitempty"`
	Maximum    *float64 `json:"maximum,omitempty"`
	MinItems   *int     `json:"minItems,omitempty"`
	MaxItems   *int     `json:"maxItems,omitempty"`
	Default    any      `json:"default,omitempty"`
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

// PinsParams is arguments[0] of switchboard.pins (optional): one server, or every server.
type PinsParams struct {
	Server string `json:"server,omitempty"`
}

// PinsAcceptParams is arguments[0] of switchboard.pins.accept: accept the current definitions of
// tools of server (none = every changed, new and removed tool of it).
type PinsAcceptParams struct {
	Server string   `json:"server"`
	Tools  []string `json:"tools,omitempty"`
}

// PinsResult is the result of switchboard.pins and switchboard.pins.accept: the tools whose
// definitions differ from what the person approved, per server (servers without changes are not
// listed).
type PinsResult struct {
	Pinning string       `json:"pinning"` // enforce | warn | off
	File    string       `json:"file"`
	Problem string       `json:"problem,omitempty"` // the pin file's error: no tool counts as approved
	Servers []ServerPins `json:"servers"`
}

// ServerPins is one server's changed, new and removed tools.
type ServerPins struct {
	Server  string      `json:"server"`
	Changed []PinChange `json:"changed"`
	New     []PinChange `json:"new"`
	Removed []PinChange `json:"removed"`
}

// PinChange is one tool: Diff says what changed field by field ("- " old, "+ " new); Old and New
// are the approved and current definitions as indented JSON (for a diff editor). All escaped.
type PinChange struct {
	Tool string `json:"tool"`
	Name string `json:"name,omitempty"` // registered name (absent for a removed tool)
	Diff string `json:"diff"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// PinsChangedParams is switchboard/pinsChanged: a server changed tool definitions since the
// person approved them. ID is the pending review's id (answered by the prompt, or ended by
// switchboard.pins.accept); Message is the prompt's text.
type PinsChangedParams struct {
	ID      string   `json:"id"`
	Server  string   `json:"server"`
	Changed []string `json:"changed"`
	New     []string `json:"new"`
	Removed []string `json:"removed"`
	Message string   `json:"message"`
}

// InputRequest is the params of switchboard/inputRequested: a config file's ${input:ID} has no
// value yet (editors that declare capabilities.experimental.switchboard.inputs). The editor asks
// the person (a masked box when Password) and answers with switchboard.input.
type InputRequest struct {
	ID          string   `json:"id"`     // the question's id ("i1")
	Server      string   `json:"server"` // the server that needs it
	Input       string   `json:"input"`  // the input's id in the file
	Message     string   `json:"message"`
	Description string   `json:"description,omitempty"`
	Password    bool     `json:"password"`
	Options     []string `json:"options,omitempty"` // pickString: pick one
	File        string   `json:"file"`              // the file that declares it
	RequestedAt string   `json:"requestedAt"`
}

// InputParams is arguments[0] of switchboard.input: the value, or cancel.
type InputParams struct {
	ID     string `json:"id"`
	Value  string `json:"value,omitempty"`
	Cancel bool   `json:"cancel,omitempty"`
}

// InputResolvedParams is the params of switchboard/inputResolved (never the value).
type InputResolvedParams struct {
	ID string `json:"id"`
	By string `json:"by"` // user | timeout | cancelled | disconnect
}

// ViewRef names the MCP App view of a tool result (ToolResult.view, the chat result's view).
type ViewRef struct {
	ID     string `json:"id"`
	Server string `json:"server"`
	Tool   string `json:"tool"` // the registered name of the tool called
	URI    string `json:"uri"`  // the ui:// resource
	// Error says why the view cannot be shown (the resource could not be read, had the wrong
	// type or was too big); the result's text stands alone then.
	Error string `json:"error,omitempty"`
}

// ViewParams is arguments[0] of switchboard.view and switchboard.view.openInBrowser.
type ViewParams struct {
	ID string `json:"id"`
}

// ViewResult is the result of switchboard.view: what an editor needs to show the view.
type ViewResult struct {
	ID     string `json:"id"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	URI    string `json:"uri"`
	HTML   string `json:"html"`
	// CSP is the Content-Security-Policy the view's document must get: nothing beyond what the
	// view declared. The editor must not widen it.
	CSP string `json:"csp"`
	// DeclaredCSP is the view's _meta.ui.csp as checked (every entry a plain origin).
	DeclaredCSP ViewCSP `json:"declaredCsp"`
	// Permissions are the declared _meta.ui.permissions; Allow the frame's allow attribute.
	Permissions   ViewPermissions `json:"permissions"`
	Allow         string          `json:"allow"`
	PrefersBorder *bool           `json:"prefersBorder,omitempty"`
	// ToolInput is the call's arguments, ToolResult the CallToolResult (content,
	// structuredContent, isError), ToolInfo {tool: {name, description, inputSchema}}: what the
	// view gets as ui/notifications/tool-input, tool-result and hostContext.toolInfo.
	ToolInput  json.RawMessage `json:"toolInput"`
	ToolResult json.RawMessage `json:"toolResult"`
	ToolInfo   json.RawMessage `json:"toolInfo"`
}

// ViewCSP is a view's declared origins (MCP Apps McpUiResourceCsp).
type ViewCSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	FrameDomains    []string `json:"frameDomains,omitempty"`
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
}

// ViewPermissions are a view's declared browser features (MCP Apps McpUiResourcePermissions).
type ViewPermissions struct {
	Camera         bool `json:"camera,omitempty"`
	Microphone     bool `json:"microphone,omitempty"`
	Geolocation    bool `json:"geolocation,omitempty"`
	ClipboardWrite bool `json:"clipboardWrite,omitempty"`
}

// ViewCallToolParams is arguments[0] of switchboard.view.callTool: a tools/call the view id made.
// Name is the server's own tool name (the view knows no other); the result is a ToolResult.
type ViewCallToolParams struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ViewOpenLinkParams is arguments[0] of switchboard.view.openLink.
type ViewOpenLinkParams struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// ViewUpdateModelContextParams is arguments[0] of switchboard.view.updateModelContext: the
// params of the view's ui/update-model-context (MCP content blocks and structured content).
type ViewUpdateModelContextParams struct {
	ID                string            `json:"id"`
	Content           []json.RawMessage `json:"content,omitempty"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
}

// ViewContextNote says that a view's context went to the model with a chat turn: the view's
// tool and server, and the text (escaped, cut) for the person to read.
type ViewContextNote struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Text   string `json:"text"`
}

// ViewOpenLinkResult says whether the person let the page open (the host then opened it).
type ViewOpenLinkResult struct {
	Opened bool `json:"opened"`
}

// ViewOpenInBrowserResult is the result of switchboard.view.openInBrowser: the one-time address
// of the view's page on 127.0.0.1, and whether the editor opened it (window/showDocument).
type ViewOpenInBrowserResult struct {
	URL   string `json:"url"`
	Shown bool   `json:"shown"`
}

// ViewMessageParams is arguments[0] of switchboard.view.message: the params of the view's
// ui/message. Role, when given, must be "user" (the only role MCP Apps has); the text content
// blocks are the message, other blocks are named in it, not passed.
type ViewMessageParams struct {
	ID      string            `json:"id"`
	Role    string            `json:"role,omitempty"`
	Content []json.RawMessage `json:"content"`
}

// ViewMessageResult says whether the message went to the chat: Sent with the turn it started,
// else Reason, one sentence for the view (the person refused, the view may not ask now, its
// conversation ended, its server is gone, ...).
type ViewMessageResult struct {
	Sent         bool   `json:"sent"`
	Reason       string `json:"reason,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	Turn         string `json:"turn,omitempty"`
}

// ViewMessageNotice is the params of switchboard/viewMessage: a view's message that the person
// chose to send started Turn of Conversation. Text is the message as the person was shown it
// (escaped); editors show it in that conversation's transcript as from the view ("From the view
// of mcp__x__y: ..."), never as the person's words, and follow the turn's switchboard/event
// notifications as for a turn they started.
type ViewMessageNotice struct {
	Conversation string            `json:"conversation"`
	Turn         string            `json:"turn"`
	View         ViewRef           `json:"view"`
	Text         string            `json:"text"`
	ViewContext  []ViewContextNote `json:"viewContext,omitempty"`
}

// ChatEndParams is arguments[0] of switchboard.chat.end.
type ChatEndParams struct {
	Conversation string `json:"conversation"`
}
