// Long calls (MCP tasks): a status bar item with the number of running tasks (hidden when none),
// refreshed every few seconds while the host runs, and the Switchboard: Tasks quick pick: picking
// a running task offers to cancel it (switchboard.cancelTask, which sends the server tasks/cancel),
// picking one that ended after a restart of the host shows its result, as does Show result on the
// host's notice that a task ended (switchboard/showTaskResult). A running task's line
// (status message and elapsed time) is the call's own work-done progress, which VS Code shows and
// cancels by itself.

import * as vscode from "vscode";
import { errorMessage, type Switchboard } from "./client";
import { noLinks } from "./format";
import { reportDocs } from "./commands";
import { tasksBarId, ui } from "./ids";
import * as ext from "./lsp_types";
import type { TaskInfo } from "./lsp_types";
import { taskAction, taskItems, taskResultText, tasksStatusText, tasksTooltip } from "./tasks_model";

const refreshEvery = 5000;

export function registerTasks(sb: Switchboard): vscode.Disposable[] {
    const item = vscode.window.createStatusBarItem(tasksBarId, vscode.StatusBarAlignment.Left, 49);
    item.name = "Switchboard tasks";
    item.command = ui.showTasks;
    let busy = false;
    const refresh = async (): Promise<void> => {
        if (busy || sb.connection !== "running") {
            if (sb.connection !== "running") item.hide();
            return;
        }
        busy = true;
        try {
            const res = await sb.exec(ext.Cmd.tasks, undefined);
            const text = tasksStatusText(res.tasks);
            item.text = text;
            item.tooltip = tasksTooltip(res.tasks);
            if (text) item.show();
            else item.hide();
        } catch {
            item.hide();
        } finally {
            busy = false;
        }
    };
    const timer = setInterval(() => void refresh(), refreshEvery);
    timer.unref(); // it alone keeps nothing alive (tests' node process, the extension host's exit)
    return [
        item,
        { dispose: () => clearInterval(timer) },
        sb.onDidChange(() => void refresh()),
        // Show result on the host's notice that a task ended (a resumed one, or a long one).
        sb.onShowTaskResult((t) => void openTaskResult(t)),
        vscode.commands.registerCommand(ui.showTasks, async () => {
            await showTasks(sb);
            await refresh();
        }),
    ];
}

/** The Switchboard: Tasks quick pick. */
export async function showTasks(sb: Switchboard): Promise<void> {
    await sb.ensureRunning();
    const res = await sb.exec(ext.Cmd.tasks, undefined);
    if (res.tasks.length === 0) {
        void vscode.window.showInformationMessage("Switchboard: no tool call has run as an MCP task.");
        return;
    }
    const pick = await vscode.window.showQuickPick(taskItems(res.tasks), { title: "Switchboard: Tasks", matchOnDetail: true });
    if (!pick) return;
    const t = pick.task;
    switch (taskAction(t)) {
        case "cancel": {
            const yes = "Cancel Task";
            if ((await vscode.window.showWarningMessage(`Switchboard: cancel ${t.tool}? The server is asked to stop it.`, yes)) !== yes) return;
            try {
                await sb.exec(ext.Cmd.cancelTask, { id: t.id });
            } catch (err) {
                void vscode.window.showErrorMessage(`Switchboard: could not cancel: ${errorMessage(err)}`);
            }
            return;
        }
        case "show":
            await openTaskResult(t);
            return;
        default:
            void vscode.window.showInformationMessage(
                // The message is the server's: text, never a link.
                noLinks(t.state === "running" ? `Switchboard: ${t.tool} runs in another window; cancel it there.` : `Switchboard: ${t.tool} ${t.state}${t.message ? `: ${t.message}` : ""}.`),
            );
    }
}

/**
 * The task result view: the (escaped) result under a heading, read-only like a server's report
 * (an untitled document asked to be saved when its tab closed).
 */
export async function openTaskResult(t: TaskInfo): Promise<void> {
    await reportDocs().show(`tasks/${t.id}`, taskResultText(t));
}
