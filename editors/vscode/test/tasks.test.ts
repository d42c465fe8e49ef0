// The tasks quick pick and status bar item for a switchboard.tasks result.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { TaskInfo } from "../src/lsp_types";
import { taskAction, taskItems, taskResultText, tasksStatusText, tasksTooltip } from "../src/tasks_model";

const base: TaskInfo = {
    id: "a1", server: "everything", tool: "mcp__everything__simulate-research-query", taskId: "t-1", startedBy: "agent",
    started: "2026-12-05T15:00:00Z", updated: "2026-12-05T15:01:00Z", state: "running", status: "working",
    message: "Analyzing content...", here: true,
};

test("status bar: hidden without running tasks, counted with", () => {
    assert.equal(tasksStatusText([]), "");
    assert.equal(tasksStatusText([{ ...base, state: "completed" }]), "");
    assert.equal(tasksStatusText([base]), "$(sync~spin) 1 task");
    assert.equal(tasksStatusText([base, { ...base, id: "b", here: false }]), "$(sync~spin) 2 tasks");
    assert.equal(tasksTooltip([base]), "mcp__everything__simulate-research-query: Analyzing content...");
});

test("quick pick: a running task here is cancelled, one elsewhere is not, an ended one with a result is shown", () => {
    assert.equal(taskAction(base), "cancel");
    assert.equal(taskAction({ ...base, here: false }), "none");
    assert.equal(taskAction({ ...base, state: "completed", result: "# Report" }), "show");
    assert.equal(taskAction({ ...base, state: "failed" }), "none");
    const items = taskItems([base, { ...base, id: "b", here: false }, { ...base, id: "c", state: "completed", result: "r" }]);
    assert.equal(items[0].label, "$(sync~spin) mcp__everything__simulate-research-query");
    assert.equal(items[1].description, "running in another window");
    assert.match(items[2].detail, /result kept: pick to show it/);
});

test("result view: Switchboard's heading, then the server's escaped text as the host sent it", () => {
    const t = { ...base, state: "completed", result: "# Report\nclear\\x1b[2J" };
    assert.equal(
        taskResultText(t),
        "Result of mcp__everything__simulate-research-query (task a1, completed; started by agent at 2026-12-05T15:00:00Z). The text below is the MCP server's.\n\n# Report\nclear\\x1b[2J\n",
    );
    assert.match(taskResultText({ ...t, state: "failed", isError: true }), /\(task a1, failed, an error result;/);
});
