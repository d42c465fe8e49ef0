// A simple chat view (webview panel) fed by switchboard/event. It works in every VS Code build,
// including ones without the chat API or without a chat UI.

import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { errorMessage, type Switchboard } from "../client";
import { chatPanelViewType } from "../ids";
import * as ext from "../lsp_types";
import { attachPicked, pickPrompt, routeChatMessage } from "../resources";
import type { ChatSessions } from "./session";
import { endConversation, type ViewTurnSink } from "../view_message";
import { approvalText, turnUsageText, type ToolCallView, type TurnView } from "./transcript";

type FromView =
    | { type: "send"; text: string }
    | { type: "cancel" }
    | { type: "new" }
    | { type: "approve"; id: string; decision: ext.Decision };

export class ChatPanel implements vscode.Disposable, ViewTurnSink {
    static readonly viewType = chatPanelViewType;
    private panel: vscode.WebviewPanel | undefined;
    private conversation: string | undefined;
    private turns: TurnView[] = [];
    private current: vscode.CancellationTokenSource | undefined;

    constructor(
        private readonly sb: Switchboard,
        private readonly sessions: ChatSessions,
    ) {}

    open(): void {
        if (this.panel) {
            this.panel.reveal();
            return;
        }
        const panel = vscode.window.createWebviewPanel(ChatPanel.viewType, "Switchboard Chat", vscode.ViewColumn.Beside, {
            enableScripts: true,
            retainContextWhenHidden: true,
            localResourceRoots: [],
        });
        this.panel = panel;
        panel.webview.html = html(crypto.randomBytes(16).toString("base64"), panel.webview.cspSource);
        panel.webview.onDidReceiveMessage((m: FromView) => void this.receive(m));
        panel.onDidDispose(() => {
            this.panel = undefined;
            this.current?.cancel();
            endConversation(this.sb, this.conversation); // view_message.ts: closed, the conversation ends
            this.conversation = undefined;
            this.turns = [];
        });
        this.post();
    }

    private async receive(m: FromView): Promise<void> {
        switch (m.type) {
            case "send":
                if (m.text.trim()) await this.send(m.text.trim());
                return;
            case "cancel":
                this.current?.cancel();
                return;
            case "new":
                this.current?.cancel();
                endConversation(this.sb, this.conversation); // view_message.ts
                this.conversation = undefined;
                this.turns = [];
                this.post();
                return;
            case "approve":
                try {
                    await this.sb.exec(ext.Cmd.approve, { id: m.id, decision: m.decision });
                } catch (err) {
                    void vscode.window.showWarningMessage(`Switchboard: ${errorMessage(err)}`);
                }
                return;
        }
    }

    async send(prompt: string, given?: { serverPrompt?: ext.GetPromptParams; shown?: string }): Promise<TurnView | undefined> {
        if (this.current) {
            void vscode.window.showInformationMessage("Switchboard: a turn is still running; cancel it first.");
            return undefined;
        }
        // "@" attaches a resource; "/prompt" runs a server's prompt (resources.ts).
        const route = given ? ({ kind: "text" } as const) : routeChatMessage(prompt);
        let extra = given;
        if (route.kind === "attach") {
            if (this.sessions.attachments) await attachPicked(this.sb, this.sessions.attachments, route.server);
            return undefined;
        }
        if (route.kind === "prompt") {
            const serverPrompt = await pickPrompt(this.sb, route.server, route.name);
            if (!serverPrompt) return undefined;
            extra = { serverPrompt, shown: prompt };
            prompt = route.rest;
        }
        const cts = new vscode.CancellationTokenSource();
        this.current = cts;
        this.post();
        try {
            let added = false;
            const t = await this.sessions.run(
                prompt,
                this.conversation,
                (view) => {
                    if (!added) {
                        this.turns.push(view);
                        added = true;
                    }
                    this.conversation = view.conversation;
                    this.post();
                },
                cts.token,
                extra,
            );
            return t;
        } catch (err) {
            void vscode.window.showErrorMessage(`Switchboard: ${errorMessage(err)}`);
            return undefined;
        } finally {
            this.current = undefined;
            cts.dispose();
            this.post();
        }
    }

    /** ViewTurnSink (view_message.ts): a turn a view's message started, shown in its conversation. */
    adoptTurn(t: TurnView): void {
        this.open();
        if (this.conversation !== t.conversation) {
            this.conversation = t.conversation;
            this.turns = [];
        }
        this.turns.push(t);
        this.post();
    }

    update(): void {
        this.post();
    }

    private post(): void {
        void this.panel?.webview.postMessage({ type: "state", turns: this.turns.map(withStatus), busy: this.current !== undefined });
    }

    dispose(): void {
        this.current?.cancel();
        this.panel?.dispose();
    }
}

function html(nonce: string, cspSource: string): string {
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 12px; }
#log { padding-bottom: 90px; }
.turn { border-bottom: 1px solid var(--vscode-panel-border); padding: 8px 0; }
.prompt { font-weight: bold; margin-bottom: 4px; white-space: pre-wrap; }
.viewctx { font-size: 0.85em; opacity: 0.8; margin-bottom: 4px; }
.text { white-space: pre-wrap; }
.tool { margin: 6px 0; padding: 4px 8px; border-left: 3px solid var(--vscode-textLink-foreground); background: var(--vscode-textBlockQuote-background); }
.tool.waiting { border-left-color: var(--vscode-editorWarning-foreground); }
.tool.denied { border-left-color: var(--vscode-editorError-foreground); }
.tool code { font-family: var(--vscode-editor-font-family); }
.result { white-space: pre-wrap; max-height: 12em; overflow: auto; font-family: var(--vscode-editor-font-family); opacity: .85; }
.error { color: var(--vscode-errorForeground); }
.usage { white-space: pre-wrap; opacity: .7; font-size: .9em; margin-top: 4px; }
#bar { position: fixed; bottom: 0; left: 0; right: 0; padding: 8px 12px; background: var(--vscode-editor-background); display: flex; gap: 6px; }
#prompt { flex: 1; min-height: 2.5em; font-family: inherit; color: var(--vscode-input-foreground); background: var(--vscode-input-background); border: 1px solid var(--vscode-input-border, transparent); }
button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 4px 10px; cursor: pointer; }
button.secondary { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); }
</style></head>
<body>
<div id="log"><p id="empty">Ask the Switchboard agent. Tool calls it makes wait for your approval unless they are allowlisted.</p></div>
<div id="bar">
<textarea id="prompt" placeholder="Message (Ctrl+Enter to send)"></textarea>
<button id="send">Send</button><button id="cancel" class="secondary" disabled>Cancel</button><button id="new" class="secondary">New</button>
</div>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
const log = document.getElementById('log');
const prompt = document.getElementById('prompt');
const sendBtn = document.getElementById('send');
const cancelBtn = document.getElementById('cancel');
function el(tag, cls, text) { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
function send() { const text = prompt.value; if (!text.trim()) return; vscode.postMessage({ type: 'send', text }); prompt.value = ''; }
sendBtn.addEventListener('click', send);
prompt.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); send(); } });
cancelBtn.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
document.getElementById('new').addEventListener('click', () => vscode.postMessage({ type: 'new' }));
const actions = ${JSON.stringify(ext.approvalActions)};
const states = { running: 'running', waiting: 'waiting for approval', allowed: 'allowed', denied: 'denied' };
window.addEventListener('message', (ev) => {
  const m = ev.data; if (!m || m.type !== 'state') return;
  sendBtn.disabled = m.busy; cancelBtn.disabled = !m.busy;
  log.replaceChildren();
  if (m.turns.length === 0) log.appendChild(el('p', '', 'Ask the Switchboard agent. Tool calls it makes wait for your approval unless they are allowlisted.'));
  for (const t of m.turns) {
    const d = el('div', 'turn');
    d.appendChild(el('div', 'prompt', '> ' + t.prompt));
    for (const line of t.viewContext || []) d.appendChild(el('div', 'viewctx', line));
    const tools = new Map(t.tools.map((c) => [c.id, c]));
    for (const part of t.parts) {
      if (part.kind === 'text') { d.appendChild(el('div', 'text', part.text)); continue; }
      const c = tools.get(part.id); if (!c) continue;
      const box = el('div', 'tool ' + c.approval);
      const head = el('div');
      head.appendChild(el('code', '', c.name));
      head.appendChild(document.createTextNode(' ' + JSON.stringify(c.arguments ?? {}).slice(0, 200) + ' — ' + (c.status || states[c.approval] || c.approval)));
      box.appendChild(head);
      if (c.approval === 'waiting' && c.approvalId) {
        for (const { title, decision } of actions) {
          const b = el('button', decision === 'deny' ? 'secondary' : '', title);
          b.addEventListener('click', () => vscode.postMessage({ type: 'approve', id: c.approvalId, decision }));
          box.appendChild(b); box.appendChild(document.createTextNode(' '));
        }
      }
      if (c.result) box.appendChild(el('div', 'result' + (c.result.isError ? ' error' : ''), c.result.shown));
      d.appendChild(box);
    }
    if (t.state === 'error') d.appendChild(el('div', 'error', 'Error: ' + (t.error || 'failed')));
    if (t.state === 'cancelled') d.appendChild(el('div', 'error', 'Cancelled.'));
    if (t.usageText) d.appendChild(el('div', 'usage', t.usageText));
    log.appendChild(d);
  }
  window.scrollTo(0, document.body.scrollHeight);
});
</script></body></html>`;
}

/** The turn as the webview gets it: each tool call with its approval in words (approvalText). */
function withStatus(t: TurnView): TurnView & { tools: (ToolCallView & { status: string })[]; usageText: string } {
    return { ...t, tools: t.tools.map((c) => ({ ...c, status: approvalText(c) })), usageText: turnUsageText(t) };
}
