// MCP Apps ui/message in VS Code (issue 31; host/wire/PROTOCOL.md "MCP Apps views"). A view's
// message goes to the host (switchboard.view.message), which asks the person first (the whole
// message shown, Send / Don't send) and, if sent, starts a turn of the view's own conversation
// with the message quoted as the view's text. The host then says so (switchboard/viewMessage)
// before the turn's first event: the chat panel shows that turn, labelled "From the view of
// mcp__x__y: ...", never as the person's words, and follows it like a turn it started.
//
// Also here: ending a conversation on the host when the chat panel is done with it (New, closed),
// so that the browser stops serving the views of its calls.

import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { errorMessage, type Switchboard } from "./client";
import * as ext from "./lsp_types";
import { applyApprovalRequested, applyApprovalResolved, applyEvent, newTurn, type TurnView } from "./chat/transcript";

/** What a view's webview relays of its ui/message (McpUiMessageRequest params). */
export interface ViewMessageRequest {
    role?: unknown;
    content?: unknown;
}

/**
 * Sends view id's ui/message to the host and returns the McpUiMessageResult for the view:
 * {} when the person sent it, else isError (the reason goes to the output channel, for the view's
 * author: the view learns only that it was not delivered).
 */
export async function sendViewMessage(sb: Switchboard, id: string, m: ViewMessageRequest): Promise<{ isError?: boolean }> {
    const content = Array.isArray(m.content) ? m.content : m.content && typeof m.content === "object" ? [m.content] : [];
    const params: ext.ViewMessageParams = { id, content };
    if (typeof m.role === "string") params.role = m.role;
    try {
        const r = await sb.exec(ext.Cmd.viewMessage, params);
        if (r.sent) return {};
        sb.output.info(`A view's message was not sent: ${r.reason ?? "refused"}`);
    } catch (err) {
        sb.output.warn(`A view's message was refused: ${errorMessage(err)}`);
    }
    return { isError: true };
}

/** How the chat shows a view's message: labelled as the view's (the host escaped the text). */
export function viewMessagePrompt(n: ext.ViewMessageNotice): string {
    return `From the view of ${n.view.tool}: ${n.text}`;
}

/** Where turns a view started are shown (the chat panel). */
export interface ViewTurnSink {
    /** Shows t, a turn of t.conversation that the sink did not start. */
    adoptTurn(t: TurnView): void;
    /** t changed. */
    update(t: TurnView): void;
}

/** Follows switchboard/viewMessage: each turn a view's message started, shown in the sink. */
export class ViewMessages implements vscode.Disposable {
    private hooked: LanguageClient | undefined;
    private hook: vscode.Disposable | undefined;
    private readonly subs: vscode.Disposable[] = [];
    /** The view turns still running, by turn id. */
    readonly running = new Map<string, TurnView>();

    constructor(
        private readonly sb: Switchboard,
        private readonly sink: ViewTurnSink,
    ) {
        // The language client is made anew on each (re)start: listen on the current one.
        this.attach();
        this.subs.push(
            sb.onDidChange(() => this.attach()),
            sb.onApprovalRequested((a) => {
                const t = a.turn ? this.running.get(a.turn) : undefined;
                if (t) {
                    applyApprovalRequested(t, a);
                    this.sink.update(t);
                }
            }),
            sb.onApprovalResolved((r) => {
                for (const t of this.running.values()) {
                    applyApprovalResolved(t, r);
                    this.sink.update(t);
                }
            }),
        );
    }

    private attach(): void {
        const client = this.sb.client;
        if (!client || client === this.hooked) return;
        this.hook?.dispose();
        this.hooked = client;
        this.hook = client.onNotification(ext.viewMessage, (n) => void this.receive(n));
    }

    /** Shows the turn a view's message started and follows it; resolves with it when it ends. */
    receive(n: ext.ViewMessageNotice): Promise<TurnView> | undefined {
        if (!n || typeof n.turn !== "string" || typeof n.conversation !== "string" || typeof n.text !== "string" || typeof n.view?.tool !== "string") {
            return undefined;
        }
        const t = newTurn(n.turn, n.conversation, viewMessagePrompt(n), Array.isArray(n.viewContext) ? n.viewContext : []);
        this.running.set(t.turn, t);
        this.sink.adoptTurn(t);
        return new Promise((resolve) => {
            let done = false;
            const sub: vscode.Disposable = this.sb.subscribeTurn(t.turn, (e) => {
                if (done) return;
                const ended = applyEvent(t, e);
                this.sink.update(t);
                if (!ended) return;
                done = true;
                this.running.delete(t.turn);
                resolve(t);
                // Events that came before are replayed inside subscribeTurn: sub is set after it.
                queueMicrotask(() => {
                    sub.dispose();
                });
            });
        });
    }

    dispose(): void {
        this.hook?.dispose();
        for (const s of this.subs) s.dispose();
    }
}

/**
 * Tells the host the chat is done with conversation (New, the panel closed): its history is
 * forgotten and the browser stops serving its views. Best effort: a stopped host forgot it anyway.
 */
export function endConversation(sb: Switchboard, conversation: string | undefined): void {
    if (!conversation) return;
    sb.exec(ext.Cmd.chatEnd, { conversation }).catch((err: unknown) => sb.output.warn(`chat.end ${conversation}: ${errorMessage(err)}`));
}
