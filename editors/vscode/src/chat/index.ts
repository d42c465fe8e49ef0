// Chat: the @switchboard participant where VS Code has the chat API, and the webview chat view
// (command "Switchboard: Chat") everywhere.

import type * as vscode from "vscode";
import type { Switchboard } from "../client";
import type { ChatUi } from "../commands";
import type { GetPromptParams } from "../lsp_types";
import type { Attachments } from "../resources";
import { ViewMessages } from "../view_message";
import { ChatPanel } from "./panel";
import { registerParticipant } from "./participant";
import { ChatSessions } from "./session";

export class Chat implements ChatUi, vscode.Disposable {
    readonly sessions: ChatSessions;
    readonly panel: ChatPanel;
    readonly participant: vscode.Disposable | undefined;
    /** Turns started by a view's message (ui/message), shown in the panel. */
    readonly viewMessages: ViewMessages;

    constructor(sb: Switchboard, attachments?: Attachments) {
        this.sessions = new ChatSessions(sb, attachments);
        this.panel = new ChatPanel(sb, this.sessions);
        this.participant = registerParticipant(sb, this.sessions);
        this.viewMessages = new ViewMessages(sb, this.panel);
    }

    open(): void {
        this.panel.open();
    }

    /** Runs a server's prompt (its arguments given) as a turn of the chat view. */
    async runPrompt(p: GetPromptParams): Promise<void> {
        this.panel.open();
        const args = Object.entries(p.arguments ?? {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
        await this.panel.send("", { serverPrompt: p, shown: [`/${p.server}:${p.name}`, ...args].join(" ") });
    }

    activeTurns(): string[] {
        return this.sessions.activeTurns();
    }

    dispose(): void {
        this.participant?.dispose();
        this.viewMessages.dispose();
        this.panel.dispose();
        this.sessions.dispose();
    }
}
