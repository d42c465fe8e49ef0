// MCP resources and prompts: "Browse MCP Resources..." (a quick pick by server; a template's
// variables asked with the server's completion) opening the content read-only as a
// switchboard-mcp: document kept up to date while open, "Attach MCP Resource to Chat", and
// "Run MCP Prompt..." (its arguments asked with completion, then run as a chat turn). In the chat
// view, a message "@" (or "@server") attaches a resource and "/name" (or "/server:name") runs a
// prompt.

import * as vscode from "vscode";
import type { Switchboard } from "./client";
import { ui } from "./ids";
import * as ext from "./lsp_types";
import { noIcons, noLinks } from "./format";

export const resourceScheme = "switchboard-mcp";

/** The document URI of a server's resource: the resource's URI in the query, a readable path. */
export function resourceDocUri(server: string, uri: string): vscode.Uri {
    const tail = uri.replace(/^[a-z][a-z0-9+.-]*:\/*/i, "").replace(/[?#].*$/, "") || uri;
    return vscode.Uri.from({ scheme: resourceScheme, path: `/${server}/${tail}`, query: encodeURIComponent(uri) });
}

/** The server and resource URI of a switchboard-mcp: document URI. */
export function parseResourceDocUri(u: vscode.Uri): ext.ResourceRef & { server: string } {
    const server = u.path.split("/")[1] ?? "";
    return { server, uri: decodeURIComponent(u.query) };
}

/** Resources attached to the next chat message (from the editor or the chat view). */
export class Attachments {
    private list: ext.ResourceRef[] = [];
    private readonly changed = new vscode.EventEmitter<void>();
    readonly onDidChange = this.changed.event;

    add(r: ext.ResourceRef): boolean {
        if (this.list.some((a) => a.server === r.server && a.uri === r.uri)) return false;
        this.list.push({ server: r.server, uri: r.uri });
        this.changed.fire();
        return true;
    }

    get pending(): readonly ext.ResourceRef[] {
        return this.list;
    }

    /** Takes the attachments: they go with one message. */
    take(): ext.ResourceRef[] {
        const l = this.list;
        this.list = [];
        if (l.length > 0) this.changed.fire();
        return l;
    }

    dispose(): void {
        this.changed.dispose();
    }
}

function contentText(res: ext.ReadResourceResult): string {
    return res.contents
        .map((c) => (c.blob ? `[binary content ${c.mimeType ?? ""}, ${c.bytes} bytes of base64]` : (c.text ?? "")))
        .join("\n");
}

/** The read-only switchboard-mcp: documents: read through the host, re-read when the server says so. */
export class ResourceDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    readonly onDidChange = this.changed.event;
    /** Open documents by server + "\n" + uri. */
    private readonly open = new Map<string, vscode.Uri>();
    private readonly subs: vscode.Disposable[] = [];

    constructor(private readonly sb: Switchboard) {
        this.subs.push(
            vscode.workspace.registerTextDocumentContentProvider(resourceScheme, this),
            sb.onResourcesChanged((p) => {
                if (p.kind !== "resourceUpdated" || !p.uri) return;
                const doc = this.open.get(p.server + "\n" + p.uri);
                if (doc) this.changed.fire(doc);
            }),
            vscode.workspace.onDidCloseTextDocument((d) => {
                if (d.uri.scheme !== resourceScheme) return;
                const r = parseResourceDocUri(d.uri);
                if (this.open.delete(r.server + "\n" + r.uri)) {
                    void sb.exec(ext.Cmd.unsubscribe, { server: r.server, uri: r.uri }).catch(() => undefined);
                }
            }),
        );
    }

    async provideTextDocumentContent(u: vscode.Uri): Promise<string> {
        const r = parseResourceDocUri(u);
        const res = await this.sb.exec(ext.Cmd.readResource, { server: r.server, uri: r.uri, subscribe: true });
        this.open.set(r.server + "\n" + r.uri, u);
        return contentText(res);
    }

    dispose(): void {
        for (const d of this.subs) d.dispose();
        this.changed.dispose();
    }
}

interface Arg {
    name: string;
    description?: string;
    required: boolean;
}

const typeValue = "Type a value…";

/** Asks each argument in turn, offering the server's completions; undefined when cancelled. */
export async function askArguments(
    sb: Switchboard,
    server: string,
    ref: { prompt?: string; template?: string },
    args: readonly Arg[],
): Promise<Record<string, string> | undefined> {
    const values: Record<string, string> = {};
    for (const a of args) {
        let choices: string[] = [];
        try {
            const context = Object.keys(values).length > 0 ? { ...values } : undefined;
            choices = (await sb.exec(ext.Cmd.complete, { server, ...ref, argument: a.name, value: "", context })).values;
        } catch (err) {
            sb.output.warn(`complete ${a.name}: ${String(err)}`);
        }
        let v: string | undefined;
        const title = `${a.name}${a.required ? "" : " (optional)"}`;
        if (choices.length > 0) {
            const items: (vscode.QuickPickItem & { value?: string })[] = [...choices.map((c) => ({ label: noIcons(c), value: c })), { label: typeValue }];
            if (!a.required) items.push({ label: "", description: "leave empty", value: "" });
            const pick = await vscode.window.showQuickPick(items, { title, placeHolder: a.description, ignoreFocusOut: true });
            if (!pick) return undefined;
            v = pick.value ?? (await vscode.window.showInputBox({ title, prompt: a.description, ignoreFocusOut: true }));
        } else {
            v = await vscode.window.showInputBox({ title, prompt: a.description, ignoreFocusOut: true });
        }
        if (v === undefined) return undefined;
        if (v === "" && a.required) {
            void vscode.window.showWarningMessage(`Switchboard: ${a.name} is required.`);
            return undefined;
        }
        if (v !== "") values[a.name] = v;
    }
    return values;
}

/** The variables of an RFC 6570 URI template, in order. */
export function templateVariables(template: string): string[] {
    const out: string[] = [];
    for (const m of template.matchAll(/\{([^}]*)\}/g)) {
        for (const v of m[1].replace(/^[+#./;?&]/, "").split(",")) {
            const name = v.replace(/\*$/, "").replace(/:\d+$/, "");
            if (name && !out.includes(name)) out.push(name);
        }
    }
    return out;
}

/** Expands a template's simple and reserved variables with values. */
export function expandTemplate(template: string, values: Record<string, string>): string {
    return template.replace(/\{([^}]*)\}/g, (_, expr: string) => {
        const reserved = expr.startsWith("+") || expr.startsWith("#");
        return expr
            .replace(/^[+#./;?&]/, "")
            .split(",")
            .map((v) => {
                const val = values[v.replace(/\*$/, "").replace(/:\d+$/, "")] ?? "";
                return reserved ? encodeURI(val) : encodeURIComponent(val);
            })
            .join(",");
    });
}

interface ResourceItem extends vscode.QuickPickItem {
    resource?: ext.Resource;
    template?: ext.ResourceTemplate;
}

/** Picks a resource (a template's variables asked): its server and URI, or undefined. */
export async function pickResource(sb: Switchboard, server?: string): Promise<{ server: string; uri: string } | undefined> {
    await sb.ensureRunning();
    const res = await sb.exec(ext.Cmd.resources, server ? { server } : undefined);
    if (res.resources.length + res.templates.length === 0) {
        void vscode.window.showInformationMessage(`Switchboard: no MCP resources${server ? ` on ${server}` : ""}.`);
        return undefined;
    }
    const items: ResourceItem[] = [];
    const servers = [...new Set([...res.resources.map((r) => r.server), ...res.templates.map((t) => t.server)])].sort();
    for (const s of servers) {
        items.push({ label: s, kind: vscode.QuickPickItemKind.Separator });
        for (const r of res.resources.filter((x) => x.server === s)) {
            items.push({ label: noIcons(r.title || r.name), description: noIcons(r.uri), detail: r.description === undefined ? undefined : noIcons(r.description), resource: r });
        }
        for (const t of res.templates.filter((x) => x.server === s)) {
            items.push({ label: `${noIcons(t.title || t.name)} (template)`, description: noIcons(t.uriTemplate), detail: t.description === undefined ? undefined : noIcons(t.description), template: t });
        }
    }
    const pick = await vscode.window.showQuickPick(items, { title: "MCP resources", matchOnDescription: true, matchOnDetail: true });
    if (!pick) return undefined;
    if (pick.resource) return { server: pick.resource.server, uri: pick.resource.uri };
    const t = pick.template;
    if (!t) return undefined;
    const values = await askArguments(
        sb,
        t.server,
        { template: t.uriTemplate },
        templateVariables(t.uriTemplate).map((name) => ({ name, required: true })),
    );
    return values && { server: t.server, uri: expandTemplate(t.uriTemplate, values) };
}

/** Opens a resource read-only and offers to attach it to the chat. */
export async function openResource(attachments: Attachments, server: string, uri: string): Promise<vscode.TextDocument> {
    const doc = await vscode.workspace.openTextDocument(resourceDocUri(server, uri));
    await vscode.window.showTextDocument(doc, { preview: true });
    // The URI is the server's: text, never a link.
    void vscode.window.showInformationMessage(noLinks(`Switchboard: ${uri} (read-only, from ${server}).`), "Attach to Chat").then((a) => {
        if (a === "Attach to Chat") attach(attachments, { server, uri });
    });
    return doc;
}

function attach(attachments: Attachments, r: ext.ResourceRef): void {
    const added = attachments.add(r);
    void vscode.window.showInformationMessage(
        added ? `Switchboard: ${r.uri} goes with your next chat message.` : `Switchboard: ${r.uri} is already attached.`,
    );
}

/** "Browse MCP Resources...": pick, open. */
export async function browseResources(sb: Switchboard, attachments: Attachments, server?: string): Promise<vscode.TextDocument | undefined> {
    const r = await pickResource(sb, server);
    return r && openResource(attachments, r.server, r.uri);
}

/** "Attach MCP Resource to Chat": the active switchboard-mcp: document, or one picked. */
export async function attachResource(sb: Switchboard, attachments: Attachments, arg?: unknown): Promise<ext.ResourceRef | undefined> {
    if (typeof arg === "string") return attachPicked(sb, attachments, arg);
    const u = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    const r = u?.scheme === resourceScheme ? parseResourceDocUri(u) : await pickResource(sb);
    if (r) attach(attachments, r);
    return r;
}

/** Picks a resource (of server, when given) and attaches it (the chat view's "@"). */
export async function attachPicked(sb: Switchboard, attachments: Attachments, server?: string): Promise<ext.ResourceRef | undefined> {
    const r = await pickResource(sb, server);
    if (r) attach(attachments, r);
    return r;
}

/** Picks a prompt (server and name narrow it) and asks its arguments: the chat's serverPrompt. */
export async function pickPrompt(sb: Switchboard, server?: string, name?: string): Promise<ext.GetPromptParams | undefined> {
    await sb.ensureRunning();
    let prompts = await sb.exec(ext.Cmd.prompts, server ? { server } : undefined);
    if (name) prompts = prompts.filter((p) => p.name === name);
    if (prompts.length === 0) {
        void vscode.window.showInformationMessage(`Switchboard: no MCP prompt${name ? ` ${name}` : "s"}${server ? ` on ${server}` : ""}.`);
        return undefined;
    }
    let p: ext.Prompt | undefined = prompts[0];
    if (prompts.length > 1 || !name) {
        const pick = await vscode.window.showQuickPick(
            prompts.map((x) => ({ label: `/${noIcons(x.name)}`, description: x.server, detail: x.description === undefined ? undefined : noIcons(x.description), prompt: x })),
            { title: "MCP prompts", matchOnDescription: true },
        );
        p = pick?.prompt;
    }
    if (!p) return undefined;
    const values = await askArguments(sb, p.server, { prompt: p.name }, p.arguments);
    return values && { server: p.server, name: p.name, arguments: values };
}

/** What a chat message asks for: "@" / "@server" attaches a resource; "/name rest" or
 *  "/server:name rest" runs a prompt with rest as the message. */
export type ChatRoute = { kind: "attach"; server?: string } | { kind: "prompt"; server?: string; name?: string; rest: string } | { kind: "text" };

export function routeChatMessage(text: string): ChatRoute {
    const at = /^@(\S*)$/.exec(text.trim());
    if (at) return { kind: "attach", server: at[1] || undefined };
    const slash = /^\/(?:([^\s:]+):)?([^\s:]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
    if (slash) return { kind: "prompt", server: slash[1], name: slash[2] || undefined, rest: (slash[3] ?? "").trim() };
    return { kind: "text" };
}

/** The commands of this file (contributed in package.json), and the document provider. */
export function registerResources(sb: Switchboard, attachments: Attachments, runPrompt: (p: ext.GetPromptParams) => unknown): vscode.Disposable[] {
    const wrap = (id: string, fn: (...args: unknown[]) => unknown) =>
        vscode.commands.registerCommand(id, async (...args: unknown[]) => {
            try {
                return await fn(...args);
            } catch (err) {
                const msg = err instanceof Error ? err.message : String(err);
                sb.output.error(`${id}: ${msg}`);
                void vscode.window.showErrorMessage(`Switchboard: ${msg}`);
                return undefined;
            }
        });
    return [
        new ResourceDocuments(sb),
        attachments,
        wrap(ui.browseResources, (server) => browseResources(sb, attachments, typeof server === "string" ? server : undefined)),
        wrap(ui.attachResource, (arg) => attachResource(sb, attachments, arg)),
        wrap(ui.runPrompt, async (server, name) => {
            const p = await pickPrompt(sb, typeof server === "string" ? server : undefined, typeof name === "string" ? name : undefined);
            if (p) await runPrompt(p);
            return p;
        }),
    ];
}
