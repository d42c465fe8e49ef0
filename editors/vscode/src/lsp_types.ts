// Params and result shapes of the Switchboard protocol extensions (host/wire/PROTOCOL.md), typed
// against the names in lsp_ext.ts.

import { NotificationType } from "vscode-languageserver-protocol";
import { Cmd, Notify } from "./lsp_ext";

export { Cmd, Notify } from "./lsp_ext";
export type { CommandName, NotificationName } from "./lsp_ext";

// ---- Shapes ----

export type Mode = "single-confirm" | "always-allow" | "allowlist-only";
export const modes: readonly Mode[] = ["single-confirm", "always-allow", "allowlist-only"];

export type ServerState = "starting" | "ready" | "failed" | "disabled" | "untrusted" | "stopped" | "needs-auth" | "blocked";

export interface ServerStatus {
    name: string;
    state: ServerState;
    transport: "stdio" | "http" | "sse";
    source: string;
    tools: number;
    instructions: boolean;
    error?: string;
    stderrTail?: string;
    /** What runs: the command line or URL, with ${env:X} templates, never values. */
    command?: string;
    /** An untrusted workspace server: the trust question's full text. */
    trustPrompt?: string;
    /** The MCP revision a ready server speaks ("2025-11-25" or "2026-07-28"). */
    protocolVersion?: string;
    /** A sandboxed stdio server: what it may touch, one sentence ("sandboxed: no network, ..."). */
    sandbox?: string;
    /** A sandboxed server's latest refusals, one plain sentence each ("blocked: read of ~/.ssh/id_rsa ..."). */
    blocked?: string[];
    /** A server the organisation's policy blocks (state "blocked"): the rule; error says it for people. */
    policy?: PolicyRef;
    /** Set when the server runs once for several windows in the shared-server daemon. */
    shared?: SharedStatus;
}

/** An organisation policy rule: file#/json/pointer, and the policy file. */
export interface PolicyRef {
    rule: string;
    source: string;
}

/** How a shared server is shared (ServerStatus.shared). */
export interface SharedStatus {
    scope: "user" | "workspace";
    /** Windows using it now, this one included (serversChanged comes again when it changes). */
    windows: number;
    daemonPid: number;
    daemonBuild?: string;
    /** Set when the daemon runs another build: what to do. */
    warning?: string;
}

export interface ToolInfo {
    name: string;
    server: string;
    tool: string;
    description: string;
    inputSchema: object;
    allowlisted: boolean;
    /** "changed" (held back under pinning enforce) or "new": differs from the approved definition. */
    pin?: string;
    /** "required" or "optional": the tool's calls run as MCP tasks. */
    taskSupport?: string;
    /** The tool declares an MCP Apps view. */
    view?: boolean;
    /** Only its server's views may call it: it is not offered to the model. */
    appOnly?: boolean;
    /** The organisation's policy denies it or asks for it every time; policyRule is file#/json/pointer. */
    policy?: "deny" | "ask";
    policyRule?: string;
}

export interface Approval {
    id: string;
    tool: string;
    server: string;
    arguments: Record<string, unknown>;
    mode: Mode;
    turn?: string;
    requestedAt: string;
}

export type Decision = "once" | "always" | "server" | "deny";

export interface ToolResult {
    name: string;
    isError: boolean;
    text: string;
    content: object[];
    truncated: boolean;
    bytes: number;
    /** For a denied, unrun or failed call: one plain sentence for the person (text is the model's). */
    summary?: string;
    /** A big result's text blocks are left out of content: its text is in text only. */
    textOmitted?: boolean;
    /** The tool's MCP App view, when it declares one (views.ts). */
    view?: ViewRef;
    /** switchboard.view.callTool only: the result's structuredContent as the server sent it. */
    structuredContent?: object;
}

export interface AllowlistGetResult {
    path: string;
    entries: string[];
    /** The allowlist file's problem, when it has one (the file then grants nothing). */
    error?: string;
}

export interface AllowlistSetParams {
    prefix: string;
    entries: string[];
}

export interface AllowlistSetResult {
    entries: string[];
}

export interface ApproveParams {
    id: string;
    decision: Decision;
}

export interface TrustParams {
    server: string;
    decision: "trust" | "deny";
    /** The definition a trust prompt showed (its params' switchboard.fingerprint): a changed one is refused. */
    fingerprint?: string;
}

export interface SignInParams {
    server: string;
}

export interface CallToolParams {
    name: string;
    arguments: Record<string, unknown>;
    mode?: Mode;
}

export interface ChatParams {
    conversation?: string;
    prompt: string;
    mode?: Mode;
    /** Resources read and given to the model with the prompt. */
    attachments?: ResourceRef[];
    /** A server's prompt run as the turn's request (prompt may then be empty). */
    serverPrompt?: GetPromptParams;
}

export interface ChatResult {
    conversation: string;
    turn: string;
    /** What MCP Apps views added to the model's context with this turn (shown in the transcript). */
    viewContext?: ViewContextNote[];
}

/** A view's context that went to the model with a turn: text is escaped and cut by the host. */
export interface ViewContextNote {
    server: string;
    tool: string;
    text: string;
}

export interface CancelParams {
    turn: string;
}

// ---- MCP elicitation (host/wire/PROTOCOL.md section 7) ----

export type ElicitAction = "accept" | "decline" | "cancel";
export type ElicitFieldType = "string" | "number" | "integer" | "boolean" | "array";
export type ElicitFormat = "email" | "uri" | "date" | "date-time";

/** One field of a form, in the server's order. An array is several choices out of enum. */
export interface ElicitField {
    name: string;
    title?: string;
    description?: string;
    type: ElicitFieldType;
    required: boolean;
    enum?: string[];
    /** Labels of enum, same length. */
    enumTitles?: string[];
    format?: ElicitFormat;
    minLength?: number;
    maxLength?: number;
    minimum?: number;
    maximum?: number;
    minItems?: number;
    maxItems?: number;
    default?: unknown;
}

/** A question from an MCP server (switchboard/elicitationRequested, switchboard.elicitations). */
export interface Elicitation {
    id: string;
    server: string;
    /** The server's words: third-party text, always shown with the server's name. */
    message: string;
    fields: ElicitField[];
    /** RFC 3339. */
    requestedAt: string;
}

/** A value of one field: numbers as numbers, booleans as booleans, an array as string[]. */
export type ElicitValue = string | number | boolean | string[];

export interface ElicitParams {
    id: string;
    action: ElicitAction;
    /** Only with accept: field name -> value. */
    content?: Record<string, ElicitValue>;
}

/** A config file's ${input:ID} without a value yet (switchboard/inputRequested). */
export interface InputRequest {
    id: string;
    server: string;
    /** The input's id in the file. */
    input: string;
    message: string;
    description?: string;
    /** Ask with a masked box. */
    password: boolean;
    /** pickString: pick one of these. */
    options?: string[];
    /** The file that declares the input. */
    file: string;
    /** RFC 3339. */
    requestedAt: string;
}

export interface InputParams {
    id: string;
    value?: string;
    cancel?: boolean;
}

export interface InputResolvedParams {
    id: string;
    /** One of ResolvedBy; other strings are passed through. */
    by: string;
}

/** Arguments and result of each workspace command, for typed calls. */
export interface CommandSignatures {
    [Cmd.servers]: { params: undefined; result: ServerStatus[] };
    [Cmd.tools]: { params: { server: string } | undefined; result: ToolInfo[] };
    [Cmd.reconnect]: { params: { server: string } | undefined; result: ServerStatus[] };
    [Cmd.allowlistGet]: { params: undefined; result: AllowlistGetResult };
    [Cmd.allowlistSet]: { params: AllowlistSetParams; result: AllowlistSetResult };
    [Cmd.approvals]: { params: undefined; result: Approval[] };
    [Cmd.approve]: { params: ApproveParams; result: Record<string, never> };
    [Cmd.trust]: { params: TrustParams; result: ServerStatus[] };
    [Cmd.callTool]: { params: CallToolParams; result: ToolResult };
    [Cmd.chat]: { params: ChatParams; result: ChatResult };
    [Cmd.cancel]: { params: CancelParams; result: Record<string, never> };
    [Cmd.elicitations]: { params: undefined; result: Elicitation[] };
    [Cmd.elicit]: { params: ElicitParams; result: Record<string, never> };
    [Cmd.signIn]: { params: SignInParams; result: ServerStatus[] };
    [Cmd.signOut]: { params: SignInParams; result: ServerStatus[] };
    [Cmd.models]: { params: undefined; result: ModelsResult };
    [Cmd.pins]: { params: PinsParams | undefined; result: PinsResult };
    [Cmd.pinsAccept]: { params: PinsAcceptParams; result: PinsResult };
    [Cmd.resources]: { params: ResourcesParams | undefined; result: ResourcesResult };
    [Cmd.readResource]: { params: ReadResourceParams; result: ReadResourceResult };
    [Cmd.unsubscribe]: { params: UnsubscribeParams; result: Record<string, never> };
    [Cmd.prompts]: { params: ResourcesParams | undefined; result: Prompt[] };
    [Cmd.getPrompt]: { params: GetPromptParams; result: GetPromptResult };
    [Cmd.complete]: { params: CompleteParams; result: CompleteResult };
    [Cmd.input]: { params: InputParams; result: Record<string, never> };
    [Cmd.tasks]: { params: undefined; result: TasksResult };
    [Cmd.cancelTask]: { params: CancelTaskParams; result: TasksResult };
    [Cmd.view]: { params: ViewParams; result: ViewResult };
    [Cmd.viewCallTool]: { params: ViewCallToolParams; result: ToolResult };
    [Cmd.viewOpenLink]: { params: ViewOpenLinkParams; result: ViewOpenLinkResult };
    [Cmd.viewOpenInBrowser]: { params: ViewParams; result: ViewOpenInBrowserResult };
    [Cmd.viewUpdateModelContext]: { params: ViewUpdateModelContextParams; result: Record<string, never> };
    [Cmd.viewMessage]: { params: ViewMessageParams; result: ViewMessageResult };
    [Cmd.chatEnd]: { params: ChatEndParams; result: Record<string, never> };
}

// MCP Apps views (issue 31; PROTOCOL.md "MCP Apps views").

/** Names the MCP App view of a tool result. */
export interface ViewRef {
    id: string;
    server: string;
    tool: string;
    uri: string;
    /** Why the view cannot be shown (the result's text stands alone then). */
    error?: string;
}

export interface ViewParams {
    id: string;
}

export interface ViewCSP {
    connectDomains?: string[];
    resourceDomains?: string[];
    frameDomains?: string[];
    baseUriDomains?: string[];
}

export interface ViewPermissions {
    camera?: boolean;
    microphone?: boolean;
    geolocation?: boolean;
    clipboardWrite?: boolean;
}

/** What the extension needs to show a view: the HTML and the policy its frame must get. */
export interface ViewResult {
    id: string;
    server: string;
    tool: string;
    uri: string;
    html: string;
    /** The view document's Content-Security-Policy; never widen it. */
    csp: string;
    declaredCsp: ViewCSP;
    permissions: ViewPermissions;
    /** The frame's allow attribute. */
    allow: string;
    prefersBorder?: boolean;
    toolInput: Record<string, unknown>;
    /** CallToolResult: content, structuredContent, isError. */
    toolResult: Record<string, unknown>;
    toolInfo: Record<string, unknown>;
}

export interface ViewCallToolParams {
    id: string;
    /** The server's own tool name, as the view knows it. */
    name: string;
    arguments?: Record<string, unknown>;
}

export interface ViewUpdateModelContextParams {
    id: string;
    content?: unknown[];
    structuredContent?: Record<string, unknown>;
}

export interface ViewOpenLinkParams {
    id: string;
    url: string;
}

export interface ViewOpenLinkResult {
    opened: boolean;
}

export interface ViewOpenInBrowserResult {
    url: string;
    shown: boolean;
}

/** A view's ui/message (view_message.ts): the person is asked, then it starts a chat turn. */
export interface ViewMessageParams {
    id: string;
    /** "user", the only role MCP Apps has. */
    role?: string;
    content: unknown[];
}

export interface ViewMessageResult {
    sent: boolean;
    /** Why not, one sentence. */
    reason?: string;
    conversation?: string;
    turn?: string;
}

/** switchboard/viewMessage: a view's message, sent by the person, started turn of conversation. */
export interface ViewMessageNotice {
    conversation: string;
    turn: string;
    view: ViewRef;
    /** The message as the person was shown it (escaped by the host). */
    text: string;
    viewContext?: ViewContextNote[];
}

export interface ChatEndParams {
    conversation: string;
}

/** The result of switchboard.models: the configured model and the provider's models. */
export interface ModelsResult {
    current: string;
    models: ModelInfo[];
}

export interface ModelInfo {
    id: string;
    displayName?: string;
    /** Unix seconds, when the API says. */
    created?: number;
}

// ---- Tool definitions pinned (issue 13), PROTOCOL.md section 7 ----

export interface PinsParams {
    server?: string;
}

export interface PinsAcceptParams {
    server: string;
    /** None: every change of the server. */
    tools?: string[];
}

export interface PinChange {
    tool: string;
    name?: string;
    /** Field by field: "- " approved, "+ " now. */
    diff: string;
    /** The approved and current definitions as indented JSON (absent for a new / removed tool). */
    old?: string;
    new?: string;
}

export interface ServerPins {
    server: string;
    changed: PinChange[];
    new: PinChange[];
    removed: PinChange[];
}

export interface PinsResult {
    pinning: string;
    file: string;
    problem?: string;
    servers: ServerPins[];
}

export interface PinsChangedParams {
    id: string;
    server: string;
    changed: string[];
    new: string[];
    removed: string[];
    message: string;
}

// ---- Long calls: MCP tasks, PROTOCOL.md section 7 ----

export interface TaskInfo {
    id: string;
    server: string;
    tool: string;
    taskId: string;
    startedBy: string;
    started: string;
    updated: string;
    /** running, completed, failed, cancelled or lost */
    state: string;
    status: string;
    message: string;
    /** The result (escaped) of a task that ended after a restart of the host, or of a long one the person was told of. */
    result?: string;
    isError?: boolean;
    /** The result waits for the agent: the next chat turn in its workspace gets it. */
    forAgent?: boolean;
    /** This host follows it: it can be cancelled here. */
    here: boolean;
}
export interface TasksResult {
    tasks: TaskInfo[];
}
export interface CancelTaskParams {
    id: string;
}

// ---- MCP resources and prompts, PROTOCOL.md section 7 ----

export interface ResourcesParams {
    server?: string;
}
export interface Resource {
    server: string;
    uri: string;
    name: string;
    title?: string;
    description?: string;
    mimeType?: string;
    size?: number;
}
export interface ResourceTemplate {
    server: string;
    /** RFC 6570 */
    uriTemplate: string;
    name: string;
    title?: string;
    description?: string;
    mimeType?: string;
}
export interface ResourcesResult {
    resources: Resource[];
    templates: ResourceTemplate[];
}
export interface ReadResourceParams {
    server?: string;
    uri: string;
    subscribe?: boolean;
}
export interface ResourceContent {
    uri: string;
    mimeType?: string;
    text?: string;
    /** base64 */
    blob?: string;
    truncated?: boolean;
    bytes: number;
}
export interface ReadResourceResult {
    server: string;
    uri: string;
    contents: ResourceContent[];
}
export interface UnsubscribeParams {
    server: string;
    uri: string;
}
export interface PromptArgument {
    name: string;
    description?: string;
    required: boolean;
}
export interface Prompt {
    server: string;
    name: string;
    title?: string;
    description?: string;
    arguments: PromptArgument[];
}
export interface GetPromptParams {
    server: string;
    name: string;
    arguments?: Record<string, string>;
}
export interface PromptMessage {
    role: string;
    text: string;
    content: unknown;
}
export interface GetPromptResult {
    server: string;
    name: string;
    description?: string;
    messages: PromptMessage[];
    truncated?: boolean;
}
export interface CompleteParams {
    server: string;
    prompt?: string;
    template?: string;
    argument: string;
    value: string;
    context?: Record<string, string>;
}
export interface CompleteResult {
    values: string[];
}
export interface ResourceRef {
    server?: string;
    uri: string;
}
export interface ResourcesChangedParams {
    server: string;
    kind: "resourcesChanged" | "promptsChanged" | "resourceUpdated";
    uri?: string;
}

// ---- Notifications from the host, PROTOCOL.md section 6 ----

export interface ServersChangedParams {
    servers: ServerStatus[];
}

export type ResolvedBy = "user" | "timeout" | "cancelled" | "disconnect";

export interface ApprovalResolvedParams {
    id: string;
    decision: Decision;
    /** One of ResolvedBy; other strings are passed through. */
    by: string;
}

export interface ElicitationResolvedParams {
    id: string;
    action: ElicitAction;
    /** One of ResolvedBy; other strings are passed through. */
    by: string;
}

export type EventKind = "text" | "toolCall" | "toolResult" | "done" | "error";

/** A tool call as the host reports it inside a switchboard/event. */
export interface EventToolCall {
    id: string;
    name: string;
    arguments: unknown;
    /** pending | allowed | denied */
    approval: string;
    /** "repeat": a repeat of a denied or twice-failed call of this turn, neither asked nor run. */
    decidedBy?: string;
    reason?: string;
    /** The decision for the person, saying which grant ("allowed once by you"). */
    label?: string;
}

export interface EventToolResult {
    id: string;
    name: string;
    isError: boolean;
    /** A preview of the result text. */
    text: string;
    truncated: boolean;
    bytes: number;
    /** For a denied, unrun or failed call: one plain sentence for the person (text is the model's). */
    summary?: string;
    /** The tool's MCP App view, when it declares one (views.ts). */
    view?: ViewRef;
}

/** Token usage; inputTokens counts cached and cache-written input too. */
export interface Usage {
    inputTokens: number;
    outputTokens: number;
    cachedInputTokens: number;
    cacheWriteTokens?: number;
    /** US dollars, when the user set prices for the model. */
    cost?: number;
}

export interface SwitchboardEvent {
    turn: string;
    conversation: string;
    /** One of EventKind; unknown kinds are ignored. */
    kind: string;
    text?: string;
    toolCall?: EventToolCall;
    result?: EventToolResult;
    error?: string;
    stopReason?: string;
    usage?: Usage;
    /** done: the conversation's total, this turn included. */
    conversationUsage?: Usage;
    [extra: string]: unknown;
}

export const serversChanged = new NotificationType<ServersChangedParams>(Notify.serversChanged);
export const approvalRequested = new NotificationType<Approval>(Notify.approvalRequested);
export const approvalResolved = new NotificationType<ApprovalResolvedParams>(Notify.approvalResolved);
export const event = new NotificationType<SwitchboardEvent>(Notify.event);
export const elicitationRequested = new NotificationType<Elicitation>(Notify.elicitationRequested);
export const elicitationResolved = new NotificationType<ElicitationResolvedParams>(Notify.elicitationResolved);
export const pinsChanged = new NotificationType<PinsChangedParams>(Notify.pinsChanged);
export const resourcesChanged = new NotificationType<ResourcesChangedParams>(Notify.resourcesChanged);
export const inputRequested = new NotificationType<InputRequest>(Notify.inputRequested);
export const inputResolved = new NotificationType<InputResolvedParams>(Notify.inputResolved);
export const showTaskResult = new NotificationType<TaskInfo>(Notify.showTaskResult);
export const viewMessage = new NotificationType<ViewMessageNotice>(Notify.viewMessage);

// ---- Approval prompt (window/showMessageRequest), PROTOCOL.md section 4 ----

/** The action titles of the host's approval prompt, mapped to the decision each one means. */
export const approvalActions: ReadonlyArray<{ title: string; decision: Decision }> = [
    { title: "Allow once", decision: "once" },
    { title: "Allow tool", decision: "always" },
    { title: "Allow server", decision: "server" },
    { title: "Deny", decision: "deny" },
];

/** The allowlist prefix of one server: mcp__<server>__. */
export function serverPrefix(server: string): string {
    return `mcp__${server}__`;
}
