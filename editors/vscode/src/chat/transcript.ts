// Folds switchboard/event notifications (and approval notifications) into a transcript that both
// chat UIs render. Pure: no vscode import.

import type { Approval, ApprovalResolvedParams, Decision, SwitchboardEvent, Usage, ViewContextNote, ViewRef } from "../lsp_types";

export type ApprovalState = "running" | "waiting" | "allowed" | "denied";

export interface ToolCallView {
    id: string;
    name: string;
    arguments: unknown;
    approval: ApprovalState;
    /** What decided: user, allowlist, mode, timeout, repeat, ... when the host says. */
    decidedBy?: string;
    /** The host's sentence about the decision (a repeated call: why it was not run). */
    reason?: string;
    /** The pending approval's id while approval is "waiting". */
    approvalId?: string;
    /** The user's answer (once, always, server, deny), from switchboard/approvalResolved. */
    decision?: Decision;
    /** The server of the approval, for "every tool of <server>". */
    server?: string;
    /** The host's words for the decision, for people ("allowed once by you"); wins over decidedBy. */
    label?: string;
    /**
     * text is what the model saw; summary, for a denied, unrun or failed call, is the host's
     * sentence for people; shown is what a person sees (the summary where there is one).
     */
    result?: { isError: boolean; text: string; truncated: boolean; summary?: string; shown: string };
    /** The result's MCP App view, when its tool has one (the chat view shows it inline). */
    view?: ViewRef;
}

/** The turn's output in order: text runs and tool calls (by id), as the model produced them. */
export type TurnPart = { kind: "text"; text: string } | { kind: "tool"; id: string };

export interface TurnView {
    turn: string;
    conversation: string;
    prompt: string;
    /** All of the answer's text. */
    text: string;
    tools: ToolCallView[];
    parts: TurnPart[];
    state: "running" | "done" | "error" | "cancelled";
    error?: string;
    /** What MCP Apps views added to the model's context with this turn, one sentence each. */
    viewContext: string[];
    /** From the done event: this turn's tokens and cost, and the conversation's so far. */
    usage?: Usage;
    conversationUsage?: Usage;
}

export function newTurn(turn: string, conversation: string, prompt: string, viewContext: readonly ViewContextNote[] = []): TurnView {
    return { turn, conversation, prompt, text: "", tools: [], parts: [], state: "running", viewContext: viewContext.map(viewContextLine) };
}

/** A view's context as the transcript says it (the host escaped and cut the text). */
export function viewContextLine(n: ViewContextNote): string {
    return `The view of ${n.tool} added context: ${n.text}`;
}

function addText(t: TurnView, text: string): void {
    if (!text) return;
    t.text += text;
    const last = t.parts[t.parts.length - 1];
    if (last?.kind === "text") last.text += text;
    else t.parts.push({ kind: "text", text });
}

function addTool(t: TurnView, view: ToolCallView): void {
    t.tools.push(view);
    t.parts.push({ kind: "tool", id: view.id });
}

function str(v: unknown): string | undefined {
    return typeof v === "string" ? v : undefined;
}

function obj(v: unknown): Record<string, unknown> | undefined {
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Maps the host's approval wording to one of ours. */
export function approvalState(approval: string | undefined, decidedBy?: string): ApprovalState | undefined {
    const a = (approval ?? "").toLowerCase();
    if (a === "") return undefined;
    if (["pending", "waiting", "asking", "ask"].includes(a)) return "waiting";
    if (a.startsWith("deny") || a.startsWith("denied") || a === "rejected") return "denied";
    if (["allow", "allowed", "once", "always", "server", "approved", "granted", "run", "auto"].includes(a) || a.startsWith("allow")) return "allowed";
    if (decidedBy === "timeout" || decidedBy === "cancelled") return "denied";
    return undefined;
}

function findTool(t: TurnView, id: string | undefined, name: string | undefined): ToolCallView | undefined {
    if (id) {
        const byId = t.tools.find((c) => c.id === id);
        if (byId) return byId;
    }
    if (name) {
        for (let i = t.tools.length - 1; i >= 0; i--) {
            if (t.tools[i].name === name && !t.tools[i].result) return t.tools[i];
        }
    }
    return undefined;
}

function errorText(e: unknown): string {
    if (typeof e === "string") return e;
    const o = obj(e);
    if (o && typeof o["message"] === "string") return o["message"];
    return e === undefined ? "the turn failed" : JSON.stringify(e);
}

/** Applies one switchboard/event to the turn; returns whether the turn ended. */
export function applyEvent(t: TurnView, e: SwitchboardEvent): boolean {
    if (e.conversation) t.conversation = e.conversation;
    switch (e.kind) {
        case "text": {
            addText(t, str(e.text) ?? "");
            return false;
        }
        case "toolCall": {
            const c = obj(e.toolCall) ?? {};
            const id = str(c["id"]) ?? `call-${t.tools.length + 1}`;
            const name = str(c["name"]) ?? "(unknown tool)";
            const decidedBy = str(c["decidedBy"]);
            const state = approvalState(str(c["approval"]), decidedBy);
            let view = findTool(t, str(c["id"]), undefined);
            if (!view) {
                view = { id, name, arguments: c["arguments"] ?? {}, approval: state ?? "running" };
                addTool(t, view);
            } else if (state) {
                view.approval = state;
            }
            if (decidedBy) view.decidedBy = decidedBy;
            const reason = str(c["reason"]);
            if (reason) view.reason = reason;
            const label = str(c["label"]);
            if (label) view.label = label;
            return false;
        }
        case "toolResult": {
            const r = obj(e.result) ?? obj(e["toolResult"]) ?? {};
            const c = obj(e.toolCall) ?? {};
            const id = str(r["id"]) ?? str(c["id"]) ?? str(e["id"]);
            const name = str(r["name"]) ?? str(c["name"]);
            let view = findTool(t, id, name);
            if (!view) {
                view = { id: id ?? `call-${t.tools.length + 1}`, name: name ?? "(unknown tool)", arguments: {}, approval: "running" };
                addTool(t, view);
            }
            const isError = r["isError"] === true;
            const text = str(r["text"]) ?? "";
            const truncated = r["truncated"] === true;
            const summary = str(r["summary"]) || undefined;
            view.result = { isError, text, truncated, shown: shownResult(text, truncated, summary) };
            if (summary) view.result.summary = summary;
            const ref = viewRef(r["view"]);
            if (ref) view.view = ref;
            const state = approvalState(str(c["approval"]) ?? str(r["approval"]), str(c["decidedBy"]) ?? str(r["decidedBy"]));
            if (state) view.approval = state;
            else if (view.approval === "waiting" || view.approval === "running") view.approval = "allowed";
            view.approvalId = undefined;
            return false;
        }
        case "done":
            if (t.state === "running") t.state = e.stopReason === "cancelled" ? "cancelled" : "done";
            for (const c of t.tools) if (c.approval === "waiting") c.approval = "denied";
            if (isUsage(e.usage)) t.usage = e.usage;
            if (isUsage(e.conversationUsage)) t.conversationUsage = e.conversationUsage;
            return true;
        case "error":
            // A done event follows (PROTOCOL: a turn always ends with done); do not end here.
            t.state = "error";
            t.error = errorText(e.error ?? e.text);
            return false;
        default:
            return false;
    }
}

/** A result's view as the host named it; anything malformed is no view. */
export function viewRef(v: unknown): ViewRef | undefined {
    const o = obj(v);
    if (!o) return undefined;
    const id = str(o["id"]), server = str(o["server"]), tool = str(o["tool"]), uri = str(o["uri"]);
    if (!id || !tool || server === undefined || uri === undefined) return undefined;
    const ref: ViewRef = { id, server, tool, uri };
    const error = str(o["error"]);
    if (error) ref.error = error;
    return ref;
}

/**
 * What a person sees of a tool result: the host's summary where there is one (the model's text then
 * says "do not retry" or is raw {"error": ...} JSON), else the text, marked when cut.
 */
export function shownResult(text: string, truncated: boolean, summary?: string): string {
    if (summary) return summary;
    return truncated ? `${text}\n[truncated]` : text;
}

/** Marks the turn's matching tool call as waiting for this approval. */
export function applyApprovalRequested(t: TurnView, a: Approval): void {
    if (a.turn && a.turn !== t.turn) return;
    let view = findTool(t, undefined, a.tool);
    if (!view) {
        view = { id: a.id, name: a.tool, arguments: a.arguments, approval: "waiting" };
        addTool(t, view);
    }
    view.approval = "waiting";
    view.approvalId = a.id;
    view.server = a.server;
}

export function applyApprovalResolved(t: TurnView, r: ApprovalResolvedParams): void {
    const view = t.tools.find((c) => c.approvalId === r.id);
    if (!view) return;
    view.approvalId = undefined;
    view.approval = r.decision === "deny" ? "denied" : "allowed";
    view.decidedBy = r.by;
    view.decision = r.decision;
}

const grantWords: Record<string, (c: ToolCallView) => string> = {
    once: () => "allowed by you, this time only",
    always: () => "allowed by you, always for this tool",
    server: (c) => `allowed by you, always for every tool of ${c.server ?? "its server"}`,
    deny: () => "denied by you",
};

const byWords: Record<string, string> = {
    user: "by you",
    allowlist: "(on your allowlist)",
    mode: "",
    builtin: "(read-only built-in tool)",
    timeout: "(no answer in time)",
    cancelled: "(turn cancelled)",
    disconnect: "(editor disconnected)",
    shutdown: "(Switchboard stopped)",
    error: "(approval failed)",
};

export function approvalText(c: ToolCallView): string {
    switch (c.approval) {
        case "waiting":
            return "waiting for approval";
        case "allowed":
        case "denied": {
            // No such tool (its server is not running?) or bad arguments: the result's summary says why.
            if (c.decidedBy === "unknown" || c.decidedBy === "invalid") return "not run";
            if (c.label) return c.label;
            if (c.decision && c.decidedBy === "user" && (c.decision === "deny") === (c.approval === "denied")) return grantWords[c.decision](c);
            if (!c.decidedBy) return c.approval;
            if (c.decidedBy === "repeat") return `not run: ${c.reason ?? "it repeats a call of this turn that was denied or failed twice."}`;
            if (c.decidedBy === "mode") return c.approval === "allowed" ? "allowed (mode always-allow)" : "denied (mode allowlist-only)";
            return `${c.approval} ${byWords[c.decidedBy] ?? `(${c.decidedBy})`}`;
        }
        default:
            return "running";
    }
}

/** A usage worth showing: well-formed, and some tokens were counted (a provider that reports none gives zeros). */
function isUsage(u: unknown): u is Usage {
    const o = obj(u);
    return o !== undefined && typeof o["inputTokens"] === "number" && typeof o["outputTokens"] === "number" && o["inputTokens"] + o["outputTokens"] > 0;
}

function count(n: number | undefined): string {
    return (n ?? 0).toLocaleString("en-US");
}

/** A cost in US dollars: cents for a dollar or more, four decimals below (turns are cheap). */
export function costText(cost: number): string {
    return cost >= 1 ? `$${cost.toFixed(2)}` : `$${cost.toFixed(4)}`;
}

/** One plain line of usage: "1,200 input tokens (800 cached), 150 output tokens, $0.0031". */
export function usageText(u: Usage): string {
    const cached: string[] = [];
    if (u.cachedInputTokens > 0) cached.push(`${count(u.cachedInputTokens)} cached`);
    if ((u.cacheWriteTokens ?? 0) > 0) cached.push(`${count(u.cacheWriteTokens)} written to the cache`);
    let out = `${count(u.inputTokens)} input tokens${cached.length ? ` (${cached.join(", ")})` : ""}, ${count(u.outputTokens)} output tokens`;
    if (typeof u.cost === "number" && u.cost > 0) out += `, ${costText(u.cost)}`;
    return out;
}

/** The turn's usage lines for the chat UIs ("" while the host has not reported any). */
export function turnUsageText(t: TurnView): string {
    const lines: string[] = [];
    if (t.usage) lines.push(`This turn: ${usageText(t.usage)}.`);
    if (t.conversationUsage) lines.push(`Conversation: ${usageText(t.conversationUsage)}.`);
    return lines.join("\n");
}
