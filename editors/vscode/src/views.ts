// MCP Apps views (issue 31): a tool result that names a view (ToolResult.view, the chat result's
// view) opens it in a webview panel beside the editor: the view's HTML in a sandboxed frame with
// exactly its declared CSP (view_html.ts), and the ext-apps host bridge (dist/view.js) between
// them. What the view asks for comes here and goes to the host: its tool calls through
// switchboard.view.callTool (the confirm gate, the question saying the view asks), a link
// through switchboard.view.openLink (the person is asked; http and https only).
//
// The chat view shows its own turns' views inline instead (chat/panel.ts), with the same document
// (view_html.ts, embed "inline"), and answers them through answer() below; a view's panel is then
// its full-size mode. The @switchboard participant's turns and direct calls open the panel.

import * as vscode from "vscode";
import { errorMessage, type Switchboard } from "./client";
import { noLinks } from "./format";
import * as ext from "./lsp_types";
import { viewDocument, type Embed } from "./view_html";
import { sendViewMessage } from "./view_message";

/** What a view's webview may send; anything else is ignored. */
type FromView =
    | { type: "callTool"; rid: number; secret?: string; name: string; arguments?: Record<string, unknown> }
    | { type: "openLink"; rid: number; secret?: string; url: string }
    | { type: "updateModelContext"; rid: number; secret?: string; content?: unknown; structuredContent?: unknown }
    | { type: "message"; rid: number; secret?: string; role?: unknown; content?: unknown }
    | { type: "initialized" }
    | { type: "fullscreen" };

export class ViewPanels implements vscode.Disposable {
    private readonly panels = new Map<string, vscode.WebviewPanel>();
    private readonly subs: vscode.Disposable[] = [];
    /** The views opened (ids), for tests and the last-view command. */
    readonly opened: string[] = [];
    /** Views whose bridge finished ui/initialize (ids). */
    readonly initialized = new Set<string>();
    /**
     * Whether the chat view shows this turn's views inline (chat/panel.ts): then a result's view
     * does not also open a panel. The @switchboard participant's turns and direct calls do.
     */
    shownInline: (turn: string | undefined) => boolean = () => false;

    constructor(
        private readonly sb: Switchboard,
        private readonly extensionUri: vscode.Uri | undefined,
        private readonly version = "dev",
    ) {
        // A chat turn's result with a view opens it.
        this.subs.push(
            sb.onEvent((e) => {
                if (e.kind === "toolResult" && e.result?.view && !this.shownInline(e.turn)) void this.show(e.result.view);
            }),
            vscode.window.onDidChangeActiveColorTheme?.((t) => {
                for (const p of this.panels.values()) void p.webview.postMessage({ type: "theme", theme: themeOf(t.kind) });
            }) ?? new vscode.Disposable(() => undefined),
        );
    }

    /** The last view a result named. */
    private last: ext.ViewRef | undefined;

    /** The command: the ViewRef given (a result's view), else the last one seen. */
    async open(arg: unknown): Promise<void> {
        const a = arg as Partial<ext.ViewRef> | undefined;
        const ref = a && typeof a.id === "string" && typeof a.tool === "string" ? (a as ext.ViewRef) : this.last;
        if (!ref) {
            void vscode.window.showInformationMessage("Switchboard: no tool result with a view yet.");
            return;
        }
        await this.show(ref);
    }

    /** Shows a result's view (again, if it is open). */
    async show(ref: ext.ViewRef): Promise<void> {
        this.last = ref;
        if (ref.error) {
            // The reason quotes the server (its read error): shown as text, never as a link.
            void vscode.window.showWarningMessage(noLinks(`Switchboard: the view of ${ref.tool} cannot be shown: ${ref.error}`));
            return;
        }
        const open = this.panels.get(ref.id);
        if (open) {
            open.reveal(undefined, true);
            return;
        }
        let v: ext.ViewResult;
        try {
            v = await this.sb.exec(ext.Cmd.view, { id: ref.id });
        } catch (err) {
            void vscode.window.showWarningMessage(noLinks(`Switchboard: the view of ${ref.tool} cannot be shown: ${errorMessage(err)}`));
            return;
        }
        const panel = vscode.window.createWebviewPanel("switchboard.view", `${v.tool} (view)`, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
            enableScripts: true,
            retainContextWhenHidden: true,
            localResourceRoots: this.scriptRoots(),
        });
        this.panels.set(ref.id, panel);
        this.opened.push(ref.id);
        panel.webview.html = this.document(v, panel.webview, "panel");
        panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(panel, v, m));
        panel.onDidDispose(() => {
            this.panels.delete(ref.id);
            this.initialized.delete(ref.id);
        });
    }

    /** Where a webview that shows views may load dist/view.js from (its localResourceRoots). */
    scriptRoots(): vscode.Uri[] {
        return this.extensionUri ? [vscode.Uri.joinPath(this.extensionUri, "dist")] : [];
    }

    /** The document that shows view v in webview (its panel's, or a frame of the chat view's). */
    document(v: ext.ViewResult, webview: vscode.Webview, embed: Embed): string {
        const script = this.extensionUri ? webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "dist", "view.js")).toString() : "view.js";
        const theme = themeOf(vscode.window.activeColorTheme?.kind);
        return viewDocument(v, script, webview.cspSource, { theme, locale: vscode.env.language ?? "en" }, this.version, embed);
    }

    /** Answers one message of a view's webview. */
    async receive(panel: vscode.WebviewPanel, v: ext.ViewResult, raw: unknown): Promise<void> {
        if ((raw as FromView | undefined)?.type === "fullscreen") return; // the panel is already full size
        await this.answer(v, raw, (m) => void panel.webview.postMessage(m));
    }

    /**
     * Answers one message from view v's document, wherever it is shown (its panel, or inline in
     * the chat view): its tool calls, links and context go to the host, the reply goes back
     * through post with the secret the document sent (view/webview.ts).
     */
    async answer(v: ext.ViewResult, raw: unknown, post: (m: unknown) => void): Promise<void> {
        const m = raw as FromView | undefined;
        if (!m || typeof m !== "object") return;
        if (m.type === "initialized") {
            this.initialized.add(v.id);
            return;
        }
        if (m.type === "fullscreen" || typeof m.rid !== "number") return;
        const reply = (result: unknown) => post({ type: "reply", rid: m.rid, secret: m.secret, result });
        if (m.type === "callTool" && typeof m.name === "string") {
            try {
                const args = m.arguments && typeof m.arguments === "object" && !Array.isArray(m.arguments) ? m.arguments : {};
                reply(callToolResult(await this.sb.exec(ext.Cmd.viewCallTool, { id: v.id, name: m.name, arguments: args })));
            } catch (err) {
                reply({ isError: true, content: [{ type: "text", text: `Switchboard refused the call: ${errorMessage(err)}` }] });
            }
        } else if (m.type === "openLink" && typeof m.url === "string") {
            try {
                const r = await this.sb.exec(ext.Cmd.viewOpenLink, { id: v.id, url: m.url });
                reply({ isError: !r.opened });
            } catch {
                reply({ isError: true });
            }
        } else if (m.type === "updateModelContext") {
            // Kept by the host for the next chat turn, quoted as the view's text (PROTOCOL.md).
            try {
                const params: ext.ViewUpdateModelContextParams = { id: v.id };
                if (Array.isArray(m.content)) params.content = m.content;
                const sc = m.structuredContent;
                if (sc && typeof sc === "object" && !Array.isArray(sc)) params.structuredContent = sc as Record<string, unknown>;
                await this.sb.exec(ext.Cmd.viewUpdateModelContext, params);
                reply({});
            } catch (err) {
                reply({ error: `Switchboard refused the context: ${errorMessage(err)}` });
            }
        } else if (m.type === "message") {
            reply(await sendViewMessage(this.sb, v.id, m)); // view_message.ts: the person is asked first
        }
    }

    dispose(): void {
        for (const s of this.subs) s.dispose();
        for (const p of [...this.panels.values()]) p.dispose();
    }
}

/** A host ToolResult as MCP's CallToolResult, what the view reads. */
export function callToolResult(r: ext.ToolResult): Record<string, unknown> {
    const out: Record<string, unknown> = { content: r.content ?? [], isError: r.isError };
    if (r.textOmitted || (r.content ?? []).length === 0) out.content = [{ type: "text", text: r.text }, ...(r.content ?? [])];
    if (r.structuredContent) out.structuredContent = r.structuredContent;
    return out;
}

export function themeOf(kind: vscode.ColorThemeKind | undefined): "light" | "dark" {
    // ColorThemeKind: 1 Light, 2 Dark, 3 HighContrast (dark), 4 HighContrastLight.
    const k = kind as number | undefined;
    return k === 2 || k === 3 ? "dark" : "light";
}
