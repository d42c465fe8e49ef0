// Review of changed tool definitions (issue 13): on switchboard/pinsChanged a toast with Review /
// Accept all / Keep blocked; Review opens a diff editor per tool (approved definition against the
// current one, read-only virtual documents) and asks Accept / Keep blocked; accepting runs
// switchboard.pins.accept.

import * as vscode from "vscode";
import { errorMessage, type Switchboard } from "./client";
import { ui } from "./ids";
import * as ext from "./lsp_types";
import { acceptAllTitle, acceptTitle, diffTitle, keepBlockedTitle, pinsChangedMessage, reviewItems, reviewTitle } from "./pins_model";

export const pinScheme = "switchboard-pin";

/** The virtual documents of the diff editors, by URI. */
class PinDocuments implements vscode.TextDocumentContentProvider {
    private readonly docs = new Map<string, string>();
    set(uri: vscode.Uri, text: string): void {
        this.docs.set(uri.toString(), text);
    }
    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.docs.get(uri.toString()) ?? "";
    }
}

export function registerPins(sb: Switchboard): vscode.Disposable[] {
    const docs = new PinDocuments();
    return [
        vscode.workspace.registerTextDocumentContentProvider(pinScheme, docs),
        vscode.commands.registerCommand(ui.reviewPins, (server?: unknown) => reviewPins(sb, docs, typeof server === "string" ? server : undefined)),
        sb.onPinsChanged(async (p) => {
            const pick = await vscode.window.showWarningMessage(pinsChangedMessage(p), reviewTitle, acceptAllTitle, keepBlockedTitle);
            if (pick === reviewTitle) await reviewPins(sb, docs, p.server);
            else if (pick === acceptAllTitle) await accept(sb, p.server);
        }),
    ];
}

async function accept(sb: Switchboard, server: string, tools?: string[]): Promise<void> {
    try {
        await sb.exec(ext.Cmd.pinsAccept, tools ? { server, tools } : { server });
        void vscode.window.showInformationMessage(`Switchboard: accepted the tool definitions of ${server}.`);
    } catch (err) {
        void vscode.window.showErrorMessage(`Switchboard: could not accept: ${errorMessage(err)}`);
    }
}

/** Opens a diff editor per changed tool of server (or of every server), then asks to accept. */
export async function reviewPins(sb: Switchboard, docs: PinDocuments, server?: string): Promise<void> {
    await sb.ensureRunning();
    const res = await sb.exec(ext.Cmd.pins, server ? { server } : undefined);
    if (res.problem) {
        void vscode.window.showErrorMessage(`Switchboard: the pin file ${res.file} has an error: ${res.problem}. Fix or remove it.`);
        return;
    }
    const items = reviewItems(res, server);
    if (items.length === 0) {
        void vscode.window.showInformationMessage("Switchboard: every tool matches the definition you approved.");
        return;
    }
    for (const [n, i] of items.entries()) {
        const left = vscode.Uri.from({ scheme: pinScheme, path: `/${i.server}/${i.tool}.approved.json`, query: String(n) });
        const right = vscode.Uri.from({ scheme: pinScheme, path: `/${i.server}/${i.tool}.now.json`, query: String(n) });
        docs.set(left, i.approved);
        docs.set(right, i.current);
        await vscode.commands.executeCommand("vscode.diff", left, right, diffTitle(i), { preview: false });
    }
    const servers = [...new Set(items.map((i) => i.server))];
    for (const s of servers) {
        const tools = items.filter((i) => i.server === s).map((i) => i.tool);
        const pick = await vscode.window.showWarningMessage(
            `Switchboard: accept the definitions of ${tools.join(", ")} of ${s} as they are now?`,
            acceptTitle,
            keepBlockedTitle,
        );
        if (pick === acceptTitle) await accept(sb, s);
    }
}
