// Runs chat turns against the host and keeps their transcripts. Shared by the webview chat and the
// @switchboard chat participant.

import * as vscode from "vscode";
import type { Switchboard } from "../client";
import * as ext from "../lsp_types";
import type { Attachments } from "../resources";
import { applyApprovalRequested, applyApprovalResolved, applyEvent, newTurn, type TurnView } from "./transcript";

export class ChatSessions implements vscode.Disposable {
    private readonly running = new Map<string, TurnView>();
    private readonly subs: vscode.Disposable[] = [];

    constructor(
        private readonly sb: Switchboard,
        /** Resources attached to the next message (resources.ts); taken by the next turn. */
        readonly attachments?: Attachments,
    ) {
        this.subs.push(
            sb.onApprovalRequested((a) => {
                const t = a.turn ? this.running.get(a.turn) : undefined;
                if (t) {
                    applyApprovalRequested(t, a);
                    this.fire(t);
                }
            }),
            sb.onApprovalResolved((r) => {
                for (const t of this.running.values()) {
                    applyApprovalResolved(t, r);
                    this.fire(t);
                }
            }),
        );
    }

    private readonly listeners = new Map<string, (t: TurnView) => void>();

    private fire(t: TurnView): void {
        this.listeners.get(t.turn)?.(t);
    }

    activeTurns(): string[] {
        return [...this.running.keys()];
    }

    /**
     * Starts a turn and calls onUpdate with its transcript on every change until it ends.
     * Resolves with the final transcript. Cancelling token cancels the turn on the host.
     */
    async run(
        prompt: string,
        conversation: string | undefined,
        onUpdate: (t: TurnView) => void,
        token?: vscode.CancellationToken,
        extra?: { serverPrompt?: ext.GetPromptParams; shown?: string },
    ): Promise<TurnView> {
        const params: ext.ChatParams = conversation ? { conversation, prompt } : { prompt };
        const attached = this.attachments?.take() ?? [];
        if (attached.length > 0) params.attachments = attached;
        if (extra?.serverPrompt) params.serverPrompt = extra.serverPrompt;
        let started: ext.ChatResult;
        try {
            started = await this.sb.exec(ext.Cmd.chat, params);
        } catch (err) {
            for (const a of attached) this.attachments?.add(a); // not sent: still attached
            throw err;
        }
        const t = newTurn(started.turn, started.conversation, extra?.shown ?? prompt, started.viewContext);
        this.running.set(t.turn, t);
        this.listeners.set(t.turn, onUpdate);
        const cleanup: vscode.Disposable[] = [];
        try {
            await new Promise<void>((resolve) => {
                cleanup.push(
                    this.sb.subscribeTurn(t.turn, (e) => {
                        const ended = applyEvent(t, e);
                        onUpdate(t);
                        if (ended) resolve();
                    }),
                    this.sb.onDidChange(() => {
                        if (this.sb.connection === "stopped" && t.state === "running") {
                            t.state = "error";
                            t.error = "Switchboard stopped.";
                            onUpdate(t);
                            resolve();
                        }
                    }),
                );
                // Approvals that were raised before we subscribed.
                for (const a of this.sb.pending.values()) {
                    if (a.turn === t.turn) applyApprovalRequested(t, a);
                }
                if (token) {
                    cleanup.push(
                        token.onCancellationRequested(() => {
                            void this.cancel(t.turn);
                        }),
                    );
                    if (token.isCancellationRequested) void this.cancel(t.turn);
                }
                onUpdate(t);
            });
        } finally {
            for (const d of cleanup) d.dispose();
            this.running.delete(t.turn);
            this.listeners.delete(t.turn);
        }
        return t;
    }

    async cancel(turn: string): Promise<void> {
        try {
            await this.sb.exec(ext.Cmd.cancel, { turn });
        } catch (err) {
            this.sb.output.warn(`cancel ${turn}: ${String(err)}`);
        }
    }

    dispose(): void {
        for (const d of this.subs) d.dispose();
    }
}
