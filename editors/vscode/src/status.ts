// The status bar item: MCP servers ready/failed, pending approvals and questions from MCP servers.
// Clicking it opens the list.

import * as vscode from "vscode";
import type { Switchboard } from "./client";
import { statusSummary } from "./format";
import { statusBarId, ui } from "./ids";

export class StatusBar implements vscode.Disposable {
    readonly item: vscode.StatusBarItem;
    private readonly sub: vscode.Disposable;

    constructor(private readonly sb: Switchboard) {
        this.item = vscode.window.createStatusBarItem(statusBarId, vscode.StatusBarAlignment.Left, 50);
        this.item.name = "Switchboard";
        this.item.command = ui.statusMenu;
        this.sub = sb.onDidChange(() => this.update());
        this.update();
        this.item.show();
    }

    update(): void {
        const s = statusSummary(this.sb.connection, this.sb.servers, this.sb.pending.size, this.sb.questions.size);
        this.item.text = s.text;
        this.item.tooltip = s.tooltip;
        this.item.accessibilityInformation = { label: s.label, role: "button" };
        this.item.backgroundColor =
            s.severity === "error"
                ? new vscode.ThemeColor("statusBarItem.errorBackground")
                : s.severity === "warning"
                  ? new vscode.ThemeColor("statusBarItem.warningBackground")
                  : undefined;
    }

    dispose(): void {
        this.sub.dispose();
        this.item.dispose();
    }
}
