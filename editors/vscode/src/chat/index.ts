// Chat: the @switchboard participant where VS Code has the chat API, and the webview chat view
// (command "Switchboard: Chat") everywhere.

import type * as vscode from "vscode";
import type { Switchboard } from "../client";
import type { ChatUi } from "../commands";
import { ChatPanel } from "./panel";
import { registerParticipant } from "./participant";
import { ChatSessions } from "./session";

export class Chat implements ChatUi, vscode.Disposable {
    readonly sessions: ChatSessions;
    readonly panel: ChatPanel;
    readonly participant: vscode.Disposable | undefined;

    constructor(sb: Switchboard) {
        this.sessions = new ChatSessions(sb);
        this.panel = new ChatPanel(sb, this.sessions);
        this.participant = registerParticipant(sb, this.sessions);
    }

    open(): void {
        this.panel.open();
    }

    activeTurns(): string[] {
        return this.sessions.activeTurns();
    }

    dispose(): void {
        this.participant?.dispose();
        this.panel.dispose();
        this.sessions.dispose();
    }
}
