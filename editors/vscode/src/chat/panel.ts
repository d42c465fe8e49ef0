// A simple chat view (webview panel) fed by switchboard/event. It works in every VS Code build,
// including ones without the chat API or without a chat UI.
//
// A tool result with an MCP App view shows the view inline, under its tool call (issue 31). A
// frame made from the chat document itself (srcdoc, blob:, data:) would inherit the chat
// document's own policy, so the view would get less than it declared (and the chat document
// would have to allow more than it should). Each view instead gets a frame loaded from the
// webview's own blank page (fake.html, the page VS Code itself writes a webview's HTML into: a
// fresh document with no policy of its own), into which the chat document writes the view's
// document (view_html.ts, embed "inline"): the same policy, sandboxed frame and ext-apps bridge
// (dist/view.js) as the view's panel. That document talks to the chat document by postMessage;
// the chat document relays to the extension, naming the view by the frame the message came
// from, and the extension answers through the same code as the panel (ViewPanels.answer).

import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { errorMessage, type Switchboard } from "../client";
import { chatPanelViewType } from "../ids";
import * as ext from "../lsp_types";
import { attachPicked, pickPrompt, routeChatMessage } from "../resources";
import { inlineMaxHeight } from "../view_html";
import { themeOf, type ViewPanels } from "../views";
import type { ChatSessions } from "./session";
import { endConversation, type ViewTurnSink } from "../view_message";
import { approvalText, turnUsageText, type ToolCallView, type TurnView } from "./transcript";

type FromView =
    | { type: "send"; text: string }
    | { type: "cancel" }
    | { type: "new" }
    | { type: "approve"; id: string; decision: ext.Decision }
    | { type: "view"; id: string; msg: unknown }
    | { type: "openView"; id: string };

/** How many views of the transcript stay live inline; older ones become an "Open the view" button. */
export const liveViews = 8;

/** A view the transcript shows inline. */
interface InlineView {
    ref: ext.ViewRef;
    /** Its document's content, once the host gave it. */
    v?: ext.ViewResult;
    /** Why it cannot be shown (the host's view command failed). */
    error?: string;
}

export class ChatPanel implements vscode.Disposable, ViewTurnSink {
    static readonly viewType = chatPanelViewType;
    private panel: vscode.WebviewPanel | undefined;
    private conversation: string | undefined;
    private turns: TurnView[] = [];
    private current: vscode.CancellationTokenSource | undefined;
    /** Turns this view started: their views show inline, not in a panel. */
    private readonly mine = new Set<string>();
    /** The live inline views, oldest first (at most liveViews). */
    private readonly live = new Map<string, InlineView>();
    /** Views that were live and are now a button (older than the liveViews newest). */
    private readonly collapsed = new Set<string>();
    /** Views whose document went to the current webview. */
    private sent = new Set<string>();
    private views: ViewPanels | undefined;
    private readonly subs: vscode.Disposable[] = [];

    constructor(
        private readonly sb: Switchboard,
        private readonly sessions: ChatSessions,
    ) {}

    /** Shows results' views inline through views (its panels are their full-size mode). */
    attachViews(views: ViewPanels): void {
        this.views = views;
        views.shownInline = (turn) => this.panel !== undefined && turn !== undefined && this.mine.has(turn);
        this.subs.push(
            vscode.window.onDidChangeActiveColorTheme?.((t) => void this.panel?.webview.postMessage({ type: "theme", theme: themeOf(t.kind) })) ??
                new vscode.Disposable(() => undefined),
        );
    }

    /** The inline views' state, for tests: live ids (oldest first) and collapsed ids. */
    inlineViews(): { live: string[]; collapsed: string[] } {
        return { live: [...this.live.keys()], collapsed: [...this.collapsed] };
    }

    open(): void {
        if (this.panel) {
            this.panel.reveal();
            return;
        }
        const panel = vscode.window.createWebviewPanel(ChatPanel.viewType, "Switchboard Chat", vscode.ViewColumn.Beside, {
            enableScripts: true,
            retainContextWhenHidden: true,
            // dist/view.js, for the views' documents (their own policy names the webview's resource origin).
            localResourceRoots: this.views?.scriptRoots() ?? [],
        });
        this.panel = panel;
        this.sent = new Set();
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
                this.live.clear();
                this.collapsed.clear();
                this.post();
                return;
            case "view":
                await this.fromView(m.id, m.msg);
                return;
            case "openView": {
                const ref = this.viewRef(m.id);
                if (ref) await this.views?.show(ref);
                return;
            }
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
                        this.mine.add(view.turn);
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
        if (this.conversation !== t.conversation && (this.current !== undefined || this.turns.length > 0)) {
            // Another chat is on screen (an @switchboard chat's view sent this): never replace it
            // under the person, hide a turn still running, or send their next message elsewhere.
            // Say so; the turn is shown when they ask and nothing runs here meanwhile.
            void vscode.window
                .showInformationMessage("Switchboard: a view's message started a turn in the chat it came from, not the one shown here.", "Show It")
                .then((choice) => {
                    if (choice === "Show It" && this.current === undefined) this.switchTo(t);
                });
            return;
        }
        this.switchTo(t);
    }

    private switchTo(t: TurnView): void {
        if (this.conversation !== t.conversation) {
            this.conversation = t.conversation;
            this.turns = [];
            this.live.clear();
            this.collapsed.clear();
        }
        this.turns.push(t);
        this.post();
    }

    update(): void {
        this.post();
    }

    private post(): void {
        if (!this.panel) return;
        this.syncViews();
        const inline = (id: string) => (this.collapsed.has(id) ? "collapsed" : this.live.get(id)?.error ?? "live");
        void this.panel.webview.postMessage({ type: "state", turns: this.turns.map((t) => withStatus(t, inline)), busy: this.current !== undefined });
        for (const [id, iv] of this.live) if (iv.v && !this.sent.has(id)) this.sendView(iv);
    }

    /** Takes in the transcript's new views: the liveViews newest stay live, older ones collapse. */
    private syncViews(): void {
        if (!this.views) return;
        for (const t of this.turns) {
            for (const c of t.tools) {
                const ref = c.view;
                if (!ref || ref.error || this.live.has(ref.id) || this.collapsed.has(ref.id)) continue;
                const iv: InlineView = { ref };
                this.live.set(ref.id, iv);
                void this.load(iv);
            }
        }
        while (this.live.size > liveViews) {
            const oldest = this.live.keys().next().value as string;
            this.live.delete(oldest);
            this.collapsed.add(oldest);
        }
    }

    private async load(iv: InlineView): Promise<void> {
        try {
            iv.v = await this.sb.exec(ext.Cmd.view, { id: iv.ref.id });
        } catch (err) {
            iv.error = `The view cannot be shown: ${errorMessage(err)}`;
        }
        this.post();
    }

    /** Sends a live view's document to the chat webview, which frames it under its tool call. */
    private sendView(iv: InlineView): void {
        if (!this.panel || !this.views || !iv.v) return;
        this.sent.add(iv.ref.id);
        void this.panel.webview.postMessage({ type: "viewDoc", id: iv.ref.id, html: this.views.document(iv.v, this.panel.webview, "inline") });
    }

    /** One message of an inline view's document (the chat document named the view by its frame). */
    private async fromView(id: string, msg: unknown): Promise<void> {
        const iv = typeof id === "string" ? this.live.get(id) : undefined;
        if (!iv?.v || !this.views) return; // collapsed, gone, or never shown: nothing answers it
        if ((msg as { type?: unknown } | undefined)?.type === "fullscreen") {
            // Inline is the view's small mode; its panel is the full-size one.
            await this.views.show(iv.ref);
            return;
        }
        await this.views.answer(iv.v, msg, (reply) => void this.panel?.webview.postMessage({ type: "viewReply", id, msg: reply }));
    }

    private viewRef(id: string): ext.ViewRef | undefined {
        for (const t of this.turns) for (const c of t.tools) if (c.view?.id === id) return c.view;
        return undefined;
    }

    dispose(): void {
        for (const s of this.subs) s.dispose();
        this.current?.cancel();
        this.panel?.dispose();
    }
}

function html(nonce: string, cspSource: string): string {
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}'; frame-src 'self';">
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
.viewslot { margin-top: 6px; }
.viewslot iframe { display: block; width: 100%; height: 200px; border: 1px solid var(--vscode-panel-border); background: var(--vscode-editor-background); }
.viewbar { margin-top: 2px; }
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
// While the person types a message, a view may move the focus into its frame whenever it likes
// (no user action needed) and would take what is typed: the focus goes back to the prompt. The
// views' frames are inert meanwhile, so a click on one lands on its slot, not in it: the prompt
// loses the focus to no frame, and the views are live again.
function viewsInert(on) { for (const f of document.querySelectorAll('iframe.sbview')) f.inert = on; }
prompt.addEventListener('focus', () => viewsInert(true));
prompt.addEventListener('blur', () => {
  // Where the focus went is known once it got there (during blur it is on the body).
  setTimeout(() => {
    const a = document.activeElement;
    if (a && a.classList.contains('sbview') && a.inert) prompt.focus();
    else if (a !== prompt) viewsInert(false);
  }, 0);
});
const actions = ${JSON.stringify(ext.approvalActions)};
const states = { running: 'running', waiting: 'waiting for approval', allowed: 'allowed', denied: 'denied' };
const emptyText = 'Ask the Switchboard agent. Tool calls it makes wait for your approval unless they are allowlisted.';
// The transcript is updated in place, never rebuilt: a view's frame that left the document would
// start again from nothing.
const turnEls = new Map();
// MCP App views shown inline, by view id: { slot, frame, html }. A view's messages are known by
// the frame they come from (ev.source), never by what they say.
const views = new Map();
const blank = new URL('fake.html?id=' + encodeURIComponent(new URLSearchParams(location.search).get('id') || ''), location.href).href;
const inlineMax = ${inlineMaxHeight} + 40;
function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
function turnEl(t) {
  let te = turnEls.get(t.turn);
  if (te) return te;
  const root = el('div', 'turn'); root.dataset.turn = t.turn;
  te = { root, prompt: el('div', 'prompt'), ctx: el('div'), parts: el('div'), partEls: [], trailer: el('div') };
  root.append(te.prompt, te.ctx, te.parts, te.trailer);
  log.appendChild(root);
  turnEls.set(t.turn, te);
  return te;
}
function toolEl() {
  const box = el('div', 'tool');
  const parts = { box, head: el('div'), actions: el('div'), result: el('div'), view: el('div', 'viewarea') };
  box.append(parts.head, parts.actions, parts.result, parts.view);
  return parts;
}
function renderTool(p, c) {
  p.box.className = 'tool ' + c.approval;
  clear(p.head);
  p.head.appendChild(el('code', '', c.name));
  p.head.appendChild(document.createTextNode(' ' + JSON.stringify(c.arguments ?? {}).slice(0, 200) + ' — ' + (c.status || states[c.approval] || c.approval)));
  clear(p.actions);
  if (c.approval === 'waiting' && c.approvalId) {
    for (const { title, decision } of actions) {
      const b = el('button', decision === 'deny' ? 'secondary' : '', title);
      b.addEventListener('click', () => vscode.postMessage({ type: 'approve', id: c.approvalId, decision }));
      p.actions.appendChild(b); p.actions.appendChild(document.createTextNode(' '));
    }
  }
  clear(p.result);
  if (c.result) p.result.appendChild(el('div', 'result' + (c.result.isError ? ' error' : ''), c.result.shown));
  if (c.view && c.inline) renderView(p.view, c.view, c.inline);
}
function openButton(id) {
  const b = el('button', 'secondary openview', 'Open the view');
  b.addEventListener('click', () => vscode.postMessage({ type: 'openView', id }));
  return b;
}
function renderView(area, ref, inline) {
  let v = views.get(ref.id);
  if (!v) {
    v = { slot: el('div', 'viewslot'), frame: null, html: null, state: '' };
    v.slot.dataset.view = ref.id;
    views.set(ref.id, v);
  }
  if (v.slot.parentNode !== area) area.appendChild(v.slot);
  if (v.state === inline) return;
  v.state = inline;
  if (inline === 'live') { mount(ref.id); return; }
  // Collapsed (older than the newest ${liveViews}) or not showable: its frame goes, a button or a sentence stays.
  v.frame = null; v.html = null;
  clear(v.slot);
  if (inline === 'collapsed') v.slot.appendChild(openButton(ref.id));
  else v.slot.appendChild(el('div', 'error', inline));
}
function mount(id) {
  const v = views.get(id);
  if (!v || v.state !== 'live' || v.frame || !v.html) return;
  const html = v.html;
  const f = document.createElement('iframe');
  f.className = 'sbview';
  f.inert = document.activeElement === prompt;
  f.title = 'A tool view';
  let written = false;
  f.addEventListener('load', () => {
    if (written) return;
    written = true;
    const d = f.contentDocument;
    if (!d) return;
    d.open(); d.write(html); d.close();
  });
  f.src = blank;
  v.frame = f;
  clear(v.slot);
  const bar = el('div', 'viewbar');
  bar.appendChild(openButton(id));
  v.slot.append(f, bar);
}
function render(m) {
  sendBtn.disabled = m.busy; cancelBtn.disabled = !m.busy;
  const keep = new Set(m.turns.map((t) => t.turn));
  for (const [id, te] of turnEls) if (!keep.has(id)) { te.root.remove(); turnEls.delete(id); }
  if (m.turns.length === 0) { for (const [, v] of views) v.slot.remove(); views.clear(); }
  const empty = document.getElementById('empty');
  if (m.turns.length === 0 && !empty) { const p = el('p', '', emptyText); p.id = 'empty'; log.appendChild(p); }
  if (m.turns.length > 0 && empty) empty.remove();
  for (const t of m.turns) {
    const te = turnEl(t);
    te.prompt.textContent = '> ' + t.prompt;
    clear(te.ctx);
    for (const line of t.viewContext || []) te.ctx.appendChild(el('div', 'viewctx', line));
    const tools = new Map(t.tools.map((c) => [c.id, c]));
    t.parts.forEach((part, i) => {
      let pe = te.partEls[i];
      if (!pe || pe.kind !== part.kind || (part.kind === 'tool' && pe.id !== part.id)) {
        const fresh = part.kind === 'text' ? { kind: 'text', node: el('div', 'text') } : { kind: 'tool', id: part.id, tool: toolEl() };
        fresh.node = fresh.node || fresh.tool.box;
        if (pe) te.parts.replaceChild(fresh.node, pe.node); else te.parts.appendChild(fresh.node);
        te.partEls[i] = pe = fresh;
      }
      if (part.kind === 'text') { pe.node.textContent = part.text; return; }
      const c = tools.get(part.id);
      if (c) renderTool(pe.tool, c);
    });
    clear(te.trailer);
    if (t.state === 'error') te.trailer.appendChild(el('div', 'error', 'Error: ' + (t.error || 'failed')));
    if (t.state === 'cancelled') te.trailer.appendChild(el('div', 'error', 'Cancelled.'));
    if (t.usageText) te.trailer.appendChild(el('div', 'usage', t.usageText));
  }
  window.scrollTo(0, document.body.scrollHeight);
}
// Whether w is a frame inside this document, at any depth (a view can make frames of its own).
function inside(w) {
  if (!w) return false;
  const stack = [window];
  while (stack.length) {
    const p = stack.pop();
    for (let i = 0; i < p.length; i++) { const c = p[i]; if (c === w) return true; stack.push(c); }
  }
  return false;
}
window.addEventListener('message', (ev) => {
  const m = ev.data;
  // Every message this document takes has a source: the extension's (VS Code's document above
  // this one) or a view's frame. A frame removed before its message arrived has none, and is
  // inside nothing any more: a view can have that of a frame it makes and removes.
  if (!ev.source) return;
  // A view's document: relayed to the extension under the id of the frame it came from.
  for (const [id, v] of views) {
    if (!v.frame || ev.source !== v.frame.contentWindow) continue;
    if (m && m.type === 'switchboard.view') vscode.postMessage({ type: 'view', id, msg: m.msg });
    else if (m && m.type === 'switchboard.size' && typeof m.height === 'number') v.frame.style.height = Math.max(40, Math.min(inlineMax, Math.ceil(m.height))) + 'px';
    return;
  }
  // Anything else from inside this document (a view's own frame, or one it made) is not listened
  // to: only the extension, through VS Code from outside, says what the transcript shows. (VS Code
  // deletes window.parent in a webview's document, so "from the parent" cannot be asked.) It posts
  // at this document's origin; a view's frames are sandboxed, each of an opaque origin of its own.
  if (ev.origin !== window.origin || inside(ev.source) || !m) return;
  if (m.type === 'state') render(m);
  else if (m.type === 'viewDoc' && typeof m.id === 'string' && typeof m.html === 'string') {
    const v = views.get(m.id);
    if (v && !v.html && !v.frame) { v.html = m.html; mount(m.id); }
  } else if (m.type === 'viewReply' && typeof m.id === 'string') {
    views.get(m.id)?.frame?.contentWindow?.postMessage(m.msg, '*');
  } else if (m.type === 'theme') {
    for (const [, v] of views) v.frame?.contentWindow?.postMessage({ type: 'theme', theme: m.theme }, '*');
  }
});
</script></body></html>`;
}

/**
 * The turn as the webview gets it: each tool call with its approval in words (approvalText) and,
 * where it has a view, how the transcript shows it ("live", "collapsed", or why it cannot).
 */
function withStatus(t: TurnView, inline: (id: string) => string): TurnView & { tools: (ToolCallView & { status: string; inline?: string })[]; usageText: string } {
    return {
        ...t,
        tools: t.tools.map((c) => ({ ...c, status: approvalText(c), inline: c.view ? (c.view.error ? `The view cannot be shown: ${c.view.error}` : inline(c.view.id)) : undefined })),
        usageText: turnUsageText(t),
    };
}
