// The connection to `switchboard serve`: finds the binary, runs the LanguageClient over stdio, and
// keeps the state the UI shows (servers, pending approvals, questions from MCP servers, chat events).

import * as vscode from "vscode";
import {
    DidChangeConfigurationNotification,
    ExecuteCommandRequest,
    MessageType,
    ShowMessageNotification,
    type Disposable as LspDisposable,
    type ShowMessageParams,
} from "vscode-languageclient";
import { LanguageClient, RevealOutputChannelOn, State, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";
import { bundledBinary, findBinary, hostSettings, prepareBundled, userValue, workspaceOverrideMessage, workspaceOverrides, type HostSettings, type SettingsInspector } from "./config";
import { ElicitationFeature, InputsFeature } from "./features";
import { answerInput } from "./inputs";
import { clientId, clientName, configSection, outputChannelName, ui } from "./ids";
import { classifyHostMessage } from "./messages";
import * as ext from "./lsp_types";
import { Pending } from "./pending";

export type Connection = "starting" | "running" | "stopped";

type Params<K extends keyof ext.CommandSignatures> = ext.CommandSignatures[K]["params"];
type Result<K extends keyof ext.CommandSignatures> = ext.CommandSignatures[K]["result"];

const configurePath = "Configure path";
const showOutput = "Show output";
const reconnectTitle = "Reconnect";
const showServerTitle = "Show Server";
const showOutputTitle = "Show Output";
const showServersTitle = "Show Servers";

export class Switchboard implements vscode.Disposable {
    readonly output: vscode.LogOutputChannel;
    client: LanguageClient | undefined;
    connection: Connection = "stopped";
    binary: string | undefined;
    servers: ext.ServerStatus[] = [];
    /** Counts serversChanged notifications, so an older server list never replaces a newer one. */
    private serversSeq = 0;
    /** Tool calls waiting at the confirm gate, oldest first (the same queue as questions). */
    readonly pending = new Pending<ext.Approval>();
    /** Questions (elicitations) of MCP servers still waiting for an answer, oldest first. */
    readonly questions = new Pending<ext.Elicitation>();

    private readonly changed = new vscode.EventEmitter<void>();
    /** Fires when the connection, the servers, the pending approvals or the questions change. */
    readonly onDidChange = this.changed.event;
    private readonly events = new vscode.EventEmitter<ext.SwitchboardEvent>();
    readonly onEvent = this.events.event;
    private readonly resolved = new vscode.EventEmitter<ext.ApprovalResolvedParams>();
    readonly onApprovalResolved = this.resolved.event;
    private readonly requested = new vscode.EventEmitter<ext.Approval>();
    readonly onApprovalRequested = this.requested.event;
    private readonly pinsChangedEmitter = new vscode.EventEmitter<ext.PinsChangedParams>();
    /** switchboard/pinsChanged: a server changed tool definitions since they were approved. */
    readonly onPinsChanged = this.pinsChangedEmitter.event;
    private readonly asked = new vscode.EventEmitter<ext.Elicitation>();
    /** A question from an MCP server arrived (or was found pending by a refresh). */
    readonly onElicitationRequested = this.asked.event;
    private readonly ended = new vscode.EventEmitter<ext.ElicitationResolvedParams>();
    /** A question ended: answered (here or elsewhere), timed out, withdrawn, or the host went away. */
    readonly onElicitationResolved = this.ended.event;
    private readonly resourceNews = new vscode.EventEmitter<ext.ResourcesChangedParams>();
    /** switchboard/resourcesChanged: a server's resource or prompt list changed, or an open resource did. */
    readonly onResourcesChanged = this.resourceNews.event;
    private readonly taskResults = new vscode.EventEmitter<ext.TaskInfo>();
    /** switchboard/showTaskResult: the person chose Show result on the notice that a task ended. */
    readonly onShowTaskResult = this.taskResults.event;

    /** Events of turns nobody has claimed yet (a turn's first events can beat the chat reply). */
    private readonly unclaimed = new Map<string, ext.SwitchboardEvent[]>();
    private readonly claimed = new Set<string>();
    private readonly disposables: vscode.Disposable[] = [];
    private clientDisposables: LspDisposable[] = [];
    private starting: Promise<boolean> | undefined;
    /** User-only settings a workspace was found setting (each is reported once). */
    private readonly warnedOverrides = new Set<string>();
    /** The user-level switchboard.path the running host was started from. */
    private startedPath: string | undefined;
    /** The settings last given to the host (initializationOptions or didChangeConfiguration). */
    private sentSettings: string | undefined;
    /** The "too many tools" warning of this session, once it was shown (later ones go to the log). */
    toolCountWarning: string | undefined;

    /** extensionPath: where a platform-specific .vsix keeps its bin/switchboard. */
    constructor(output?: vscode.LogOutputChannel, private readonly extensionPath?: string) {
        this.output = output ?? vscode.window.createOutputChannel(outputChannelName, { log: true });
        this.disposables.push(
            this.output,
            this.changed,
            this.events,
            this.resolved,
            this.requested,
            this.pinsChangedEmitter,
            this.taskResults,
            this.asked,
            this.ended,
            vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)),
        );
    }

    /** The host's settings: user-level values only (config.ts userOnlySettings). */
    settings(): HostSettings {
        return hostSettings(inspector());
    }

    /**
     * Says once (non-modal, and in the log) which user-only settings a workspace sets: they are
     * ignored, and the user should know their repository tried.
     */
    private warnWorkspaceOverrides(): void {
        const folders = vscode.workspace.workspaceFolders ?? [];
        const keys = workspaceOverrides(inspector(), ...folders.map((f) => inspector(f.uri)));
        const fresh = keys.filter((k) => !this.warnedOverrides.has(k));
        if (fresh.length === 0) return;
        for (const k of fresh) this.warnedOverrides.add(k);
        const message = workspaceOverrideMessage(fresh);
        if (!message) return;
        this.output.warn(message);
        void vscode.window.showWarningMessage(message);
    }

    /** Starts the host. Resolves false (after telling the user) when it cannot. */
    start(): Promise<boolean> {
        this.starting ??= this.doStart().finally(() => (this.starting = undefined));
        return this.starting;
    }

    private async doStart(): Promise<boolean> {
        this.warnWorkspaceOverrides();
        this.startedPath = userValue<string>(inspector(), "path") ?? undefined;
        const found = findBinary({ setting: this.startedPath, bundled: prepareBundled(bundledBinary(this.extensionPath)), env: process.env });
        if (!found.path) {
            this.setConnection("stopped");
            this.output.error(found.problem ?? "switchboard binary not found");
            void this.showStartError(found.problem ?? "The switchboard binary was not found.");
            return false;
        }
        this.binary = found.path;
        this.output.info(`Starting ${found.path} serve (from ${found.source})`);
        const serverOptions: ServerOptions = {
            command: found.path,
            args: ["serve"],
            options: { env: { ...process.env } },
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
            outputChannel: this.output,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            initializationOptions: () => {
                const settings = this.settings();
                this.sentSettings = JSON.stringify(settings);
                return settings;
            },
            initializationFailedHandler: (err) => {
                this.output.error(`initialize failed: ${String(err)}`);
                return false;
            },
        };
        const client = new LanguageClient(clientId, clientName, serverOptions, clientOptions);
        client.registerFeature(new ElicitationFeature());
        client.registerFeature(new InputsFeature());
        this.client = client;
        this.clientDisposables = [
            client.onNotification(ext.serversChanged, (p) => this.serversChanged(p)),
            client.onNotification(ext.approvalRequested, (a) => {
                if (!a?.id || !this.pending.add(a)) return;
                this.changed.fire();
                this.requested.fire(a);
            }),
            client.onNotification(ext.approvalResolved, (r) => {
                if (!r?.id) return;
                this.pending.resolve(r.id);
                this.changed.fire();
                this.resolved.fire(r);
            }),
            client.onNotification(ext.elicitationRequested, (e) => this.addQuestion(e)),
            client.onNotification(ext.inputRequested, (r) => {
                answerInput(r, vscode.window, (p) => this.exec(ext.Cmd.input, p)).catch((err: unknown) => {
                    void vscode.window.showWarningMessage(`Switchboard: the input was not taken: ${err instanceof Error ? err.message : String(err)}`);
                });
            }),
            client.onNotification(ext.elicitationResolved, (r) => {
                if (typeof r?.id !== "string") return;
                this.endQuestion(r);
            }),
            client.onNotification(ext.event, (e) => this.dispatchEvent(e)),
            client.onNotification(ext.pinsChanged, (p) => {
                if (typeof p?.server === "string") this.pinsChangedEmitter.fire(p);
            }),
            client.onNotification(ext.resourcesChanged, (p) => {
                if (p?.server) this.resourceNews.fire(p);
            }),
            client.onNotification(ext.showTaskResult, (t) => {
                if (typeof t?.id === "string" && typeof t.tool === "string") this.taskResults.fire(t);
            }),
            // Replaces the client's own showMessage handler: some messages need an action.
            client.onNotification(ShowMessageNotification.type, (m) => void this.hostMessage(m)),
            client.onDidChangeState((s) => {
                if (s.newState === State.Running) {
                    this.setConnection("running");
                    // doStart refreshes after the first start; this covers the client's own restarts.
                    if (!this.starting) void this.refresh();
                } else if (s.newState === State.Starting) {
                    this.setConnection("starting");
                } else {
                    // The host's questions ended with it.
                    this.pending.clear();
                    this.endAllQuestions();
                    this.setConnection("stopped");
                }
            }),
        ];
        this.setConnection("starting");
        try {
            await client.start();
        } catch (err) {
            this.setConnection("stopped");
            this.output.error(`could not start ${found.path}: ${String(err)}`);
            void this.showStartError(`Could not start ${found.path}: ${errorMessage(err)}`);
            await this.disposeClient();
            return false;
        }
        this.setConnection("running");
        await this.refresh();
        return true;
    }

    private async showStartError(message: string): Promise<void> {
        const pick = await vscode.window.showErrorMessage(`Switchboard: ${message}`, configurePath, showOutput);
        if (pick === configurePath) {
            await vscode.commands.executeCommand("workbench.action.openSettings", `${configSection}.path`);
        } else if (pick === showOutput) {
            this.output.show(true);
        }
    }

    /**
     * A window/showMessage of the host. A failed server gets Reconnect, Show Server and Show
     * Output; the "too many tools" warning is shown once per session (non-modal, with Show
     * Servers) and only logged after that; the rest are shown as the client would.
     */
    async hostMessage(m: ShowMessageParams): Promise<void> {
        const text = typeof m?.message === "string" ? m.message : "";
        if (!text) return;
        const c = classifyHostMessage(text);
        if (c.kind === "serverFailed") {
            const pick = await vscode.window.showErrorMessage(text, reconnectTitle, showServerTitle, showOutputTitle);
            if (pick === reconnectTitle) await vscode.commands.executeCommand(ui.reconnectServer, c.server);
            else if (pick === showServerTitle) await vscode.commands.executeCommand(ui.showServers, c.server);
            else if (pick === showOutputTitle) this.output.show(true);
            return;
        }
        if (c.kind === "toolCount") {
            this.output.warn(text);
            if (this.toolCountWarning !== undefined) return;
            this.toolCountWarning = text;
            this.changed.fire();
            const pick = await vscode.window.showWarningMessage(text, showServersTitle);
            if (pick === showServersTitle) await vscode.commands.executeCommand(ui.showServers);
            return;
        }
        switch (m.type) {
            case MessageType.Error:
                void vscode.window.showErrorMessage(text);
                break;
            case MessageType.Warning:
                void vscode.window.showWarningMessage(text);
                break;
            default:
                void vscode.window.showInformationMessage(text);
        }
    }

    /** Starts the host when it is not running; throws when it cannot. */
    async ensureRunning(): Promise<void> {
        if (this.client?.isRunning()) return;
        if (!(await this.start())) throw new Error("Switchboard is not running.");
    }

    async stop(): Promise<void> {
        await this.starting?.catch(() => false);
        await this.disposeClient();
        this.servers = [];
        this.pending.clear();
        this.endAllQuestions();
        this.setConnection("stopped");
    }

    async restart(): Promise<boolean> {
        await this.stop();
        return this.start();
    }

    private async disposeClient(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        for (const d of this.clientDisposables) d.dispose();
        this.clientDisposables = [];
        if (!client) return;
        try {
            if (client.needsStop()) await client.stop(3000);
        } catch (err) {
            this.output.warn(`stopping the host: ${String(err)}`);
        }
        try {
            await client.dispose(1000);
        } catch {
            // already stopped
        }
    }

    /** switchboard/serversChanged: the host's newest server list. */
    serversChanged(p: ext.ServersChangedParams | undefined): void {
        this.serversSeq++;
        this.servers = Array.isArray(p?.servers) ? p.servers : [];
        this.changed.fire();
    }

    /** Takes a fresh server list (from a command result) before the host's notification. */
    updateServers(servers: ext.ServerStatus[]): void {
        if (!Array.isArray(servers)) return;
        this.servers = servers;
        this.changed.fire();
    }

    /** Re-reads the servers, the pending approvals and the pending questions from the host. */
    async refresh(): Promise<void> {
        try {
            const known = new Set(this.questions.keys());
            const knownApprovals = new Set(this.pending.keys());
            const seq = this.serversSeq;
            const [servers, approvals, questions] = await Promise.all([
                this.exec(ext.Cmd.servers),
                this.exec(ext.Cmd.approvals),
                this.exec(ext.Cmd.elicitations).catch((err: unknown) => {
                    this.output.warn(`listing questions: ${errorMessage(err)}`);
                    return undefined;
                }),
            ]);
            // A serversChanged that arrived meanwhile is newer than this list: the host may have
            // listed the servers before a change it then announced (every change is announced).
            if (Array.isArray(servers) && this.serversSeq === seq) this.servers = servers;
            if (Array.isArray(approvals)) this.pending.sync(approvals, knownApprovals);
            if (Array.isArray(questions)) this.syncQuestions(questions, known);
            this.changed.fire();
        } catch (err) {
            this.output.warn(`refreshing state: ${errorMessage(err)}`);
        }
    }

    /**
     * Takes the host's list of pending questions (switchboard.elicitations). Only questions known
     * before the list was asked for are dropped when missing from it: one that arrived meanwhile
     * stays. Questions that ended meanwhile are not revived.
     */
    syncQuestions(list: readonly ext.Elicitation[], known: ReadonlySet<string> = new Set(this.questions.keys())): void {
        const ids = new Set(list.map((e) => e?.id));
        for (const id of known) {
            if (!ids.has(id) && this.questions.has(id)) this.endQuestion({ id, action: "cancel", by: "gone" });
        }
        for (const e of list) this.addQuestion(e);
    }

    private addQuestion(e: ext.Elicitation): void {
        if (!Array.isArray(e?.fields) || !this.questions.add(e)) return;
        this.output.info(`MCP server '${e.server}' asks (${e.fields.length} field${e.fields.length === 1 ? "" : "s"}): ${e.message}`);
        this.changed.fire();
        this.asked.fire(e);
    }

    private endQuestion(r: ext.ElicitationResolvedParams): void {
        const known = this.questions.resolve(r.id) !== undefined;
        if (known) this.output.info(`question ${r.id} ended: ${r.action} (by ${r.by})`);
        this.changed.fire();
        this.ended.fire(r);
    }

    private endAllQuestions(): void {
        for (const id of [...this.questions.keys()]) this.endQuestion({ id, action: "cancel", by: "disconnect" });
        // A new host numbers its questions afresh.
        this.questions.clear();
    }

    /** Runs one host workspace command (PROTOCOL.md section 3). */
    async exec<K extends keyof ext.CommandSignatures>(command: K, params?: Params<K>, token?: vscode.CancellationToken): Promise<Result<K>> {
        const client = this.client;
        if (!client || !client.isRunning()) {
            throw new Error("Switchboard is not running.");
        }
        const args = params === undefined ? [] : [params];
        return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }, token)) as Result<K>;
    }

    /** Calls handler with every event of one turn, including those that arrived before the call. */
    subscribeTurn(turn: string, handler: (e: ext.SwitchboardEvent) => void): vscode.Disposable {
        this.claimed.add(turn);
        const early = this.unclaimed.get(turn) ?? [];
        this.unclaimed.delete(turn);
        const sub = this.onEvent((e) => {
            if (e.turn === turn) handler(e);
        });
        for (const e of early) handler(e);
        return new vscode.Disposable(() => {
            sub.dispose();
            this.claimed.delete(turn);
        });
    }

    private dispatchEvent(e: ext.SwitchboardEvent): void {
        if (!e || typeof e.turn !== "string") return;
        if (!this.claimed.has(e.turn)) {
            let list = this.unclaimed.get(e.turn);
            if (!list) {
                list = [];
                this.unclaimed.set(e.turn, list);
                // Keep the buffer small: forget the oldest unclaimed turns.
                while (this.unclaimed.size > 32) {
                    const oldest = this.unclaimed.keys().next().value;
                    if (oldest === undefined) break;
                    this.unclaimed.delete(oldest);
                }
            }
            if (list.length < 1000) list.push(e);
        }
        this.events.fire(e);
    }

    private setConnection(c: Connection): void {
        if (this.connection === c) return;
        this.connection = c;
        this.changed.fire();
    }

    private configurationChanged(e: vscode.ConfigurationChangeEvent): void {
        if (!e.affectsConfiguration(configSection)) return;
        this.warnWorkspaceOverrides();
        // Only a change of the user-level values matters: a workspace's values are never used.
        if (e.affectsConfiguration(`${configSection}.path`) && (userValue<string>(inspector(), "path") ?? undefined) !== this.startedPath) {
            this.output.info("switchboard.path changed: restarting the host");
            void this.restart();
            return;
        }
        const client = this.client;
        if (!client || !client.isRunning()) return;
        const settings = this.settings();
        const json = JSON.stringify(settings);
        if (json === this.sentSettings) return;
        this.sentSettings = json;
        void client
            .sendNotification(DidChangeConfigurationNotification.type, { settings: { [configSection]: settings } })
            .catch((err: unknown) => this.output.warn(`sending settings: ${errorMessage(err)}`));
    }

    async dispose(): Promise<void> {
        await this.disposeClient();
        for (const d of this.disposables) d.dispose();
    }
}

/** Inspects the "switchboard" section (of one workspace folder, with scope). */
function inspector(scope?: vscode.ConfigurationScope): SettingsInspector {
    const cfg = vscode.workspace.getConfiguration(configSection, scope);
    return <T>(key: string) => cfg.inspect<T>(key);
}

export function errorMessage(err: unknown): string {
    if (err instanceof Error) return err.message;
    if (typeof err === "object" && err !== null && "message" in err) return String(err.message);
    return String(err);
}
