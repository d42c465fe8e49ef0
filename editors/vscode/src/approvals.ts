// Pending approvals: the quick pick of calls waiting at the confirm gate, with their arguments,
// answered with switchboard.approve. The host's own prompt (window/showMessageRequest) and its
// quick fixes need no code here; the status bar count is in status.ts.

import * as vscode from "vscode";
import { errorMessage, type Switchboard } from "./client";
import * as fmt from "./format";
import * as ext from "./lsp_types";

interface ApprovalItem extends vscode.QuickPickItem {
    approval: ext.Approval;
}

export async function pickDecision(a: ext.Approval): Promise<ext.Decision | undefined> {
    const items = ext.approvalActions.map((x) => ({
        label: x.title,
        description: x.decision === "always" ? `always allow ${a.tool}` : x.decision === "server" ? `always allow every tool of ${a.server}` : undefined,
        decision: x.decision,
    }));
    const pick = await vscode.window.showQuickPick(items, {
        title: `Switchboard: ${a.tool}`,
        placeHolder: `Arguments: ${fmt.argumentPreview(a.arguments, 200)}`,
    });
    return pick?.decision;
}

/** Pending approvals with their arguments; the chosen one is answered with switchboard.approve. */
export async function approvePending(sb: Switchboard, id?: string): Promise<ext.Decision | undefined> {
    await sb.ensureRunning();
    const pending = await sb.exec(ext.Cmd.approvals);
    const given = id ? pending.find((a) => a.id === id) : undefined;
    if (given) return answer(sb, given);
    if (id) {
        void vscode.window.showInformationMessage("Switchboard: that tool call was already answered.");
        return undefined;
    }
    if (pending.length === 0) {
        void vscode.window.showInformationMessage("Switchboard: no tool call is waiting for approval.");
        return undefined;
    }
    const items: ApprovalItem[] = pending.map((a) => ({
        label: fmt.approvalLabel(a),
        description: fmt.approvalDescription(a),
        detail: fmt.noIcons(fmt.argumentPreview(a.arguments, 300)),
        approval: a,
    }));
    const pick = await vscode.window.showQuickPick(items, { placeHolder: "Tool calls waiting for approval", matchOnDetail: true });
    if (!pick) return undefined;
    return answer(sb, pick.approval);
}

export async function answer(sb: Switchboard, a: ext.Approval): Promise<ext.Decision | undefined> {
    const decision = await pickDecision(a);
    if (!decision) return undefined;
    try {
        await sb.exec(ext.Cmd.approve, { id: a.id, decision });
    } catch (err) {
        // The first answer wins; a late one gets InvalidParams.
        void vscode.window.showWarningMessage(`Switchboard: ${a.tool} was already answered (${errorMessage(err)}).`);
        return undefined;
    }
    return decision;
}
