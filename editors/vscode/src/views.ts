// MCP Apps views (issue 31): a tool result that names a view (ToolResult.view, the chat result's
// view) opens it in a webview panel beside the editor: the view's HTML in a sandboxed frame with
// exactly its declared CSP (view_html.ts), and the ext-apps host bridge (dist/view.js) between
// them. What the view asks for comes here and goes to the host: its tool calls through
// switchboard.view.callTool (the confirm gate, the question saying the view asks), a link
// through switchboard.view.openLink (the person is asked; http and https only).

import * as vscode from "vscode";
import { errorMessage, type Switchboard } from "./client";
import * as ext from "./lsp_types";
import { viewDocument } from "./view_html";
import { sendViewMessage } from "./view_message";

/** What a view's webview may send; anything else is ignored. */
type FromView =
    | { type: "callTool"; rid: number; secret?: string; name: string; arguments?: Record<string, unknown> }
    | { type: "openLink"; rid: number; secret?: string; url: string }
    | { type: "updateModelContext"; rid: number; secret?: string; content?: unknown; structuredContent?: unknown }
    | { type: "message"; rid: number; secret?: string; role?: unknown; content?: unknown }
    | { type: "initialized" };

export class ViewPanels implements vscode.Disposable {
    private readonly panels = new Map<string, vscode.WebviewPanel>();
    private readonly subs: vscode.Disposable[] = [];
    /** The views opened (ids), for tests and the last-view command. */
    readonly opened: string[] = [];
    /** Views whose bridge finished ui/initialize (ids). */
    readonly initialized = new Set<string>();

    constructor(
        private readonly sb: Switchboard,
        private readonly extensionUri: vscode.Uri | undefined,
        private readonly version = "dev",
    ) {
        // A chat turn's result with a view opens it.
        this.subs.push(
            sb.onEvent((e) => {
                if (e.kind === "toolResult" && e.result?.view) void this.show(e.result.view);
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
            void vscode.window.showWarningMessage(`Switchboard: the view of ${ref.tool} cannot be shown: ${ref.error}`);
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
            void vscode.window.showWarningMessage(`Switchboard: the view of ${ref.tool} cannot be shown: ${errorMessage(err)}`);
            return;
        }
        const dist = this.extensionUri ? vscode.Uri.joinPath(this.extensionUri, "dist") : undefined;
        const panel = vscode.window.createWebviewPanel("switchboard.view", `${v.tool} (view)`, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
            enableScripts: true,
            retainContextWhenHidden: true,
            localResourceRoots: dist ? [dist] : [],
        });
        this.panels.set(ref.id, panel);
        this.opened.push(ref.id);
        const script = dist ? panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, "view.js")).toString() : "view.js";
        const theme = themeOf(vscode.window.activeColorTheme?.kind);
        panel.webview.html = viewDocument(v, script, panel.webview.cspSource, { theme, locale: vscode.env.language ?? "en" }, this.version);
        panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(panel, v, m));
        panel.onDidDispose(() => {
            this.panels.delete(ref.id);
            this.initialized.delete(ref.id);
        });
    }

    /** Answers one message of a view's webview. */
    async receive(panel: vscode.WebviewPanel, v: ext.ViewResult, raw: unknown): Promise<void> {
        const m = raw as FromView | undefined;
        if (!m || typeof m !== "object") return;
        if (m.type === "initialized") {
            this.initialized.add(v.id);
            return;
        }
        if (typeof m.rid !== "number") return;
        const reply = (result: unknown) => void panel.webview.postMessage({ type: "reply", rid: m.rid, secret: m.secret, result });
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

function themeOf(kind: vscode.ColorThemeKind | undefined): "light" | "dark" {
    // ColorThemeKind: 1 Light, 2 Dark, 3 HighContrast (dark), 4 HighContrastLight.
    const k = kind as number | undefined;
    return k === 2 || k === 3 ? "dark" : "light";
}
