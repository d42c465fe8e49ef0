// The command palette commands. Each one is a thin wrapper over host workspace commands.

import * as os from "node:os";
import * as vscode from "vscode";
import { errorMessage, type Switchboard } from "./client";
import * as fmt from "./format";
import { answer, approvePending } from "./approvals";
import { answerQuestions, questionItem, type Questions } from "./elicit";
import { ui } from "./ids";
import { callTool } from "./calltool";
import type { ViewPanels } from "./views";
import { chooseModel } from "./choose_model";
import { Reports } from "./report";
import * as ext from "./lsp_types";

export interface ChatUi {
    open(): void;
    /** Turns that are running now, newest last. */
    activeTurns(): string[];
}

type Handler = (...args: unknown[]) => unknown;

/** The read-only server reports (set by registerCommands). */
let reports: Reports | undefined;

export function registerCommands(sb: Switchboard, chat: ChatUi, questions: Questions, views?: ViewPanels): vscode.Disposable[] {
    const own = new Reports();
    reports = own;
    const table: Record<string, Handler> = {
        [ui.reconnectAll]: () => reconnectAll(sb),
        [ui.reconnectServer]: (arg) => reconnectServer(sb, typeof arg === "string" ? arg : undefined),
        [ui.showServers]: (arg) => (typeof arg === "string" ? showServer(sb, arg) : showServers(sb)),
        [ui.manageApprovals]: (arg) => manageApprovals(sb, typeof arg === "string" ? arg : undefined),
        [ui.approvePending]: (arg) => approvePending(sb, typeof arg === "string" ? arg : undefined),
        [ui.elicitations]: (arg) => answerQuestions(sb, questions, typeof arg === "string" ? arg : undefined),
        [ui.openChat]: () => chat.open(),
        [ui.cancelTurn]: () => cancelTurn(sb, chat),
        [ui.showOutput]: () => sb.output.show(true),
        [ui.statusMenu]: () => statusMenu(sb, questions),
        [ui.callTool]: async (arg) => {
            const res = await callTool(sb, own, typeof arg === "string" ? arg : undefined);
            if (res?.view) await views?.show(res.view); // an MCP App view (views.ts)
            return res;
        },
        [ui.chooseModel]: () => chooseModel(sb),
        // A result's MCP App view (views.ts): the one given (a ViewRef), else the last one seen.
        [ui.openView]: (arg) => views?.open(arg),
    };
    const registered = Object.entries(table).map(([id, fn]) =>
        vscode.commands.registerCommand(id, async (...args: unknown[]) => {
            try {
                return await fn(...args);
            } catch (err) {
                sb.output.error(`${id}: ${errorMessage(err)}`);
                void vscode.window.showErrorMessage(`Switchboard: ${errorMessage(err)}`);
                return undefined;
            }
        }),
    );
    return [own, new vscode.Disposable(() => reports === own && (reports = undefined)), ...registered];
}

function summarize(servers: readonly ext.ServerStatus[]): string {
    const n = fmt.countStates(servers);
    const failed = servers.filter((s) => s.state === "failed").map((s) => s.name);
    return `${n.ready} of ${servers.length} MCP servers ready` + (failed.length > 0 ? `; failed: ${failed.join(", ")}` : "");
}

export async function reconnectAll(sb: Switchboard): Promise<ext.ServerStatus[]> {
    await sb.ensureRunning();
    const servers = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "Switchboard: reconnecting MCP servers…" },
        () => sb.exec(ext.Cmd.reconnect),
    );
    sb.updateServers(servers);
    void vscode.window.showInformationMessage(`Switchboard: ${summarize(servers)}.`);
    return servers;
}

interface ServerItem extends vscode.QuickPickItem {
    server: ext.ServerStatus;
}

function serverItems(servers: readonly ext.ServerStatus[]): ServerItem[] {
    return servers.map((s) => ({
        label: fmt.serverLabel(s),
        description: fmt.serverDescription(s),
        detail: fmt.serverDetail(s),
        server: s,
    }));
}

async function pickServer(sb: Switchboard, placeHolder: string): Promise<ext.ServerStatus | undefined> {
    const servers = await sb.exec(ext.Cmd.servers);
    if (servers.length === 0) {
        void vscode.window.showInformationMessage("Switchboard: no MCP servers are configured.");
        return undefined;
    }
    const pick = await vscode.window.showQuickPick(serverItems(servers), { placeHolder, matchOnDescription: true, matchOnDetail: true });
    return pick?.server;
}

export async function reconnectServer(sb: Switchboard, name?: string): Promise<ext.ServerStatus | undefined> {
    await sb.ensureRunning();
    name ??= (await pickServer(sb, "Reconnect which MCP server?"))?.name;
    if (!name) return undefined;
    const server = name;
    const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Switchboard: reconnecting ${server}…` },
        () => sb.exec(ext.Cmd.reconnect, { server }),
    );
    const status = result.find((s) => s.name === server);
    if (!status) {
        void vscode.window.showWarningMessage(`Switchboard: ${server} is no longer configured.`);
    } else if (status.state === "ready") {
        void vscode.window.showInformationMessage(`Switchboard: ${server} is ready (${status.tools} tools).`);
    } else {
        // The error quotes the server (its stderr, its refusal): text, never a link.
        void vscode.window.showWarningMessage(fmt.noLinks(`Switchboard: ${server} is ${status.state}${status.error ? `: ${fmt.oneLine(status.error)}` : ""}.`));
    }
    return status;
}

const reconnectButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("debug-restart"), tooltip: "Reconnect" };
const approvalsButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("shield"), tooltip: "Manage tool approvals" };

/** A quick pick of every server (state, tools, error or stderr) with a reconnect button. */
export async function showServers(sb: Switchboard): Promise<void> {
    await sb.ensureRunning();
    const qp = vscode.window.createQuickPick<ServerItem>();
    qp.title = "Switchboard: MCP servers";
    qp.placeholder = "Select a server for details; the buttons reconnect it or manage its approvals";
    qp.matchOnDescription = true;
    qp.matchOnDetail = true;
    qp.buttons = [{ iconPath: new vscode.ThemeIcon("refresh"), tooltip: "Reconnect all servers" }];
    const fill = (servers: readonly ext.ServerStatus[]): void => {
        qp.items = serverItems(servers).map((i) => ({ ...i, buttons: [reconnectButton, approvalsButton] }));
    };
    fill(sb.servers);
    qp.busy = true;
    const subs: vscode.Disposable[] = [];
    let chosen: ServerItem | undefined;
    const done = new Promise<void>((resolve) => {
        subs.push(
            sb.onDidChange(() => fill(sb.servers)),
            qp.onDidTriggerItemButton(async (e) => {
                if (e.button === approvalsButton) {
                    qp.hide();
                    await vscode.commands.executeCommand(ui.manageApprovals, e.item.server.name);
                    return;
                }
                qp.busy = true;
                try {
                    await sb.exec(ext.Cmd.reconnect, { server: e.item.server.name });
                    fill(await sb.exec(ext.Cmd.servers));
                } catch (err) {
                    void vscode.window.showErrorMessage(`Switchboard: ${errorMessage(err)}`);
                } finally {
                    qp.busy = false;
                }
            }),
            qp.onDidTriggerButton(async () => {
                qp.busy = true;
                try {
                    fill(await sb.exec(ext.Cmd.reconnect));
                } finally {
                    qp.busy = false;
                }
            }),
            qp.onDidAccept(() => {
                chosen = qp.selectedItems[0];
                qp.hide();
            }),
            qp.onDidHide(() => resolve()),
        );
    });
    qp.show();
    try {
        fill(await sb.exec(ext.Cmd.servers));
    } finally {
        qp.busy = false;
    }
    await done;
    for (const s of subs) s.dispose();
    qp.dispose();
    if (chosen) await openServer(sb, chosen.server);
}

/** One server's report (or its trust question), by name. */
async function showServer(sb: Switchboard, name: string): Promise<void> {
    await sb.ensureRunning();
    const server = (await sb.exec(ext.Cmd.servers)).find((s) => s.name === name);
    if (!server) {
        void vscode.window.showInformationMessage(`Switchboard: ${name} is no longer configured.`);
        return;
    }
    await openServer(sb, server);
}

/** An untrusted server asks for trust; any other shows its report. */
async function openServer(sb: Switchboard, server: ext.ServerStatus): Promise<void> {
    if (server.state === "untrusted") {
        await trustServer(sb, server);
        return;
    }
    if (server.state === "needs-auth") {
        await signInServer(sb, server);
        return;
    }
    await openServerReport(sb, server);
}

/** A server that needs a sign-in: the host opens the authorization page in the browser. */
export async function signInServer(sb: Switchboard, server: ext.ServerStatus): Promise<ext.ServerStatus[] | undefined> {
    const pick = await vscode.window.showInformationMessage(
        fmt.noLinks(`Switchboard: MCP server '${server.name}' needs you to sign in (${server.command ?? server.source}).`),
        "Sign in",
        "Not now",
    );
    if (pick !== "Sign in") return undefined;
    return sb.exec(ext.Cmd.signIn, { server: server.name });
}

const trustTitle = "Trust";
const denyTrustTitle = "Don't trust";

/** Asks whether a server that only a workspace file defines may start (switchboard.trust). */
export async function trustServer(sb: Switchboard, server: ext.ServerStatus): Promise<ext.ServerStatus[] | undefined> {
    // The command line is the workspace file's (a repository's): text, never a link to click.
    const pick = await vscode.window.showWarningMessage(
        fmt.noLinks(`Switchboard: the workspace defines MCP server '${server.name}' (${server.command ?? server.source}). Start it?`),
        { modal: false },
        trustTitle,
        denyTrustTitle,
    );
    if (!pick) return undefined;
    return sb.exec(ext.Cmd.trust, { server: server.name, decision: pick === trustTitle ? "trust" : "deny" });
}

async function openServerReport(sb: Switchboard, server: ext.ServerStatus): Promise<void> {
    let tools: ext.ToolInfo[] = [];
    try {
        tools = await sb.exec(ext.Cmd.tools, { server: server.name });
    } catch (err) {
        sb.output.warn(`listing tools of ${server.name}: ${errorMessage(err)}`);
    }
    await reportDocs().show(server.name, fmt.serverReport(server, tools));
}

/** The read-only reports (servers, call results, task results): one provider for the scheme. */
export function reportDocs(): Reports {
    return (reports ??= new Reports());
}

export const approvalsPlaceholder = "Checked tools run without asking";

interface AllowItem extends vscode.QuickPickItem {
    choice: fmt.AllowChoice;
}

/** Pick a server, then multi-select its tools (or the whole server) to auto-approve. */
export async function manageApprovals(sb: Switchboard, name?: string): Promise<string[] | undefined> {
    await sb.ensureRunning();
    name ??= (await pickServer(sb, "Manage tool approvals of which MCP server?"))?.name;
    if (!name) return undefined;
    const prefix = ext.serverPrefix(name);
    const [tools, list] = await Promise.all([sb.exec(ext.Cmd.tools, { server: name }), sb.exec(ext.Cmd.allowlistGet)]);
    const choices = fmt.allowChoices(
        prefix,
        tools.filter((t) => t.server === name),
        list.entries,
    );
    const items: AllowItem[] = choices.map((c) => ({
        label: c.label,
        description: c.wholeServer ? "every tool, also ones added later" : c.entry,
        picked: c.picked,
        choice: c,
    }));
    const picked = await vscode.window.showQuickPick(items, {
        canPickMany: true,
        // The placeholder sits in the input box and is cut off when long: keep it short, and put
        // the file in the title.
        title: `Switchboard: auto-approved tools of ${name} (saved in ${fmt.tildePath(list.path, os.homedir())})`,
        placeHolder: approvalsPlaceholder,
    });
    if (!picked) return undefined;
    const entries = fmt.entriesFromPicks(
        prefix,
        picked.map((p) => p.choice),
    );
    const result = await sb.exec(ext.Cmd.allowlistSet, { prefix, entries });
    const mine = result.entries.filter((e) => e.startsWith(prefix));
    void vscode.window.showInformationMessage(
        mine.length === 0 ? `Switchboard: every tool of ${name} asks before it runs.` : `Switchboard: auto-approved for ${name}: ${mine.join(", ")}.`,
    );
    return result.entries;
}

async function cancelTurn(sb: Switchboard, chat: ChatUi): Promise<void> {
    await sb.ensureRunning();
    const turns = chat.activeTurns();
    if (turns.length === 0) {
        void vscode.window.showInformationMessage("Switchboard: no chat turn is running.");
        return;
    }
    const turn = turns.length === 1 ? turns[0] : await vscode.window.showQuickPick(turns.slice().reverse(), { placeHolder: "Cancel which turn?" });
    if (!turn) return;
    await sb.exec(ext.Cmd.cancel, { turn });
}

type MenuItem = vscode.QuickPickItem & { run?: () => Promise<unknown>; question?: string };

/** What the status bar opens: pending approvals and questions first, then the servers, then actions. */
export async function statusMenu(sb: Switchboard, questions: Questions): Promise<void> {
    const items: MenuItem[] = [];
    const pending = [...sb.pending.values()];
    if (pending.length > 0) {
        items.push({ label: "Waiting for approval", kind: vscode.QuickPickItemKind.Separator });
        for (const a of pending) {
            items.push({ label: fmt.approvalLabel(a), description: fmt.approvalDescription(a), detail: fmt.noIcons(fmt.argumentPreview(a.arguments, 300)), run: () => answer(sb, a) });
        }
    }
    const asked = [...sb.questions.values()];
    if (asked.length > 0) {
        items.push({ label: "Questions from MCP servers", kind: vscode.QuickPickItemKind.Separator });
        for (const e of asked) {
            items.push({ ...questionItem(e), question: e.id });
        }
    }
    items.push({ label: "MCP servers", kind: vscode.QuickPickItemKind.Separator });
    for (const s of sb.servers) {
        items.push({ ...serverItems([s])[0], run: () => openServer(sb, s) });
    }
    if (sb.toolCountWarning) {
        items.push({ label: "Warnings", kind: vscode.QuickPickItemKind.Separator });
        items.push({ label: "$(warning) Too many tools for the model", detail: sb.toolCountWarning, run: () => showServers(sb) });
    }
    items.push({ label: "Actions", kind: vscode.QuickPickItemKind.Separator });
    if (sb.connection === "stopped") {
        items.push({ label: "$(play) Start Switchboard", run: () => sb.start() });
    }
    items.push(
        { label: "$(refresh) Reconnect All Servers", run: () => reconnectAll(sb) },
        { label: "$(debug-restart) Reconnect Server...", run: () => reconnectServer(sb) },
        { label: "$(shield) Manage Tool Approvals...", run: () => manageApprovals(sb) },
        { label: "$(play) Call Tool...", run: () => Promise.resolve(vscode.commands.executeCommand(ui.callTool)) },
        { label: "$(tasklist) Tasks (Long Tool Calls)...", run: () => Promise.resolve(vscode.commands.executeCommand(ui.showTasks)) },
        { label: "$(comment-discussion) Chat", run: () => Promise.resolve(vscode.commands.executeCommand(ui.openChat)) },
        { label: "$(output) Show Output", run: () => Promise.resolve(sb.output.show(true)) },
    );
    // A form that opened now would be replaced by this menu: hold it back until the menu closes.
    const hold = questions.hold();
    let pick: MenuItem | undefined;
    let answered: Promise<unknown> | undefined;
    try {
        pick = await vscode.window.showQuickPick(items, { title: "Switchboard", matchOnDescription: true });
        // Queued first while the hold lasts, so that no other question opens before it.
        if (pick?.question) answered = questions.answer(pick.question);
    } finally {
        hold.dispose();
    }
    await (answered ?? pick?.run?.());
}
