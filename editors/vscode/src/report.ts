// Server reports as read-only virtual documents (scheme switchboard-server): nothing to save, no
// "Untitled" tab that asks to be saved on close. Re-opening a server's report refreshes it.

import * as vscode from "vscode";

export const reportScheme = "switchboard-server";

export class Reports implements vscode.TextDocumentContentProvider, vscode.Disposable {
    private readonly contents = new Map<string, string>();
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    readonly onDidChange = this.changed.event;
    private readonly registration: vscode.Disposable;

    constructor() {
        this.registration = vscode.workspace.registerTextDocumentContentProvider(reportScheme, this);
    }

    static uri(server: string): vscode.Uri {
        return vscode.Uri.from({ scheme: reportScheme, path: `/${server.replace(/[/\\]/g, "_")}.md` });
    }

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.contents.get(uri.path) ?? "This report is gone. Open it again with Switchboard: Show Servers.\n";
    }

    /** Opens (or refreshes) the report of one server. */
    async show(server: string, text: string): Promise<vscode.TextDocument> {
        const uri = Reports.uri(server);
        this.contents.set(uri.path, text);
        this.changed.fire(uri);
        const doc = await vscode.workspace.openTextDocument(uri);
        await vscode.window.showTextDocument(doc, { preview: true });
        return doc;
    }

    dispose(): void {
        this.registration.dispose();
        this.changed.dispose();
        this.contents.clear();
    }
}
