// Long calls (MCP tasks): what the tasks quick pick and status bar item show for a
// switchboard.tasks result. Pure, so that it is tested without VS Code.
import { noIcons } from "./format";
import type { TaskInfo } from "./lsp_types";

/** The running tasks this host follows. */
export function runningTasks(tasks: TaskInfo[]): TaskInfo[] {
    return tasks.filter((t) => t.state === "running");
}

/** The status bar text: "" (hidden) when no task runs. */
export function tasksStatusText(tasks: TaskInfo[]): string {
    const n = runningTasks(tasks).length;
    return n === 0 ? "" : `$(sync~spin) ${n} task${n === 1 ? "" : "s"}`;
}

/** The tooltip: one line per running task, its status message included. */
export function tasksTooltip(tasks: TaskInfo[]): string {
    return runningTasks(tasks)
        .map((t) => `${t.tool}: ${t.message || t.status}`)
        .join("\n");
}

const stateIcon: Record<string, string> = {
    running: "$(sync~spin)",
    completed: "$(check)",
    failed: "$(error)",
    cancelled: "$(circle-slash)",
    lost: "$(question)",
};

export interface TaskItem {
    label: string;
    description: string;
    detail: string;
    task: TaskInfo;
}

/** The quick pick's items, as switchboard.tasks orders them (newest first). */
export function taskItems(tasks: TaskInfo[]): TaskItem[] {
    return tasks.map((t) => ({
        label: `${stateIcon[t.state] ?? ""} ${t.tool}`.trim(),
        description: t.state === "running" && !t.here ? "running in another window" : t.state,
        detail: [noIcons(t.message), `started by ${t.startedBy} at ${t.started}`, t.result ? "result kept: pick to show it" : "", t.forAgent ? "the agent gets it with your next chat message" : ""].filter(Boolean).join(" · "),
        task: t,
    }));
}

/** What picking a task does: cancel it (running here), show its result, or nothing to do. */
export function taskAction(t: TaskInfo): "cancel" | "show" | "none" {
    if (t.state === "running") return t.here ? "cancel" : "none";
    return t.result ? "show" : "none";
}

/**
 * The text of a task's result view: a heading Switchboard writes, then the server's result (the host
 * escaped it: control, bidi and zero-width characters are visible).
 */
export function taskResultText(t: TaskInfo): string {
    const how = t.isError ? `${t.state}, an error result` : t.state;
    return `Result of ${t.tool} (task ${t.id}, ${how}; started by ${t.startedBy} at ${t.started}). The text below is the MCP server's.\n\n${t.result ?? ""}\n`;
}
