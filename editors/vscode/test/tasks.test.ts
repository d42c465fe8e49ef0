// The tasks quick pick and status bar item for a switchboard.tasks result.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { fakeContext, freshEnv, loadExtension, processesUnder, stub, waitFor, type Env } from "./harness";
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
    assert.doesNotMatch(items[2].detail, /agent gets it/);
    assert.match(taskItems([{ ...base, state: "completed", result: "r", forAgent: true }])[0].detail, /the agent gets it with your next chat message$/);
});

test("result view: Switchboard's heading, then the server's escaped text as the host sent it", () => {
    const t = { ...base, state: "completed", result: "# Report\nclear\\x1b[2J" };
    assert.equal(
        taskResultText(t),
        "Result of mcp__everything__simulate-research-query (task a1, completed; started by agent at 2026-12-05T15:00:00Z). The text below is the MCP server's.\n\n# Report\nclear\\x1b[2J\n",
    );
    assert.match(taskResultText({ ...t, state: "failed", isError: true }), /\(task a1, failed, an error result;/);
});

// The real extension and host: a task left running by a host that stopped (here, the extension's
// restart of it) ends under the next one; its notice offers Show result, and choosing it opens the
// result view with the server's text escaped.
describe("Show result after a restart", () => {
    let env: Env | undefined;
    let ext: ReturnType<typeof loadExtension> | undefined;
    after(async () => {
        await ext?.deactivate();
        if (env) await waitFor("no processes left", () => processesUnder(env!.dir).length === 0, 10000);
    });

    test("the notice's Show result opens the escaped result", async () => {
        env = freshEnv("tasks");
        const done = path.join(env.dir, "done");
        stub.settings["switchboard.path"] = env.bin.switchboard;
        stub.settings["switchboard.servers"] = {
            t: { command: env.bin.mcptest, args: ["--tasks", "--task-poll-ms", "1", "--task-state", path.join(env.dir, "server-tasks.json"), "--hostile"] },
        };
        const offered: string[][] = [];
        stub.script.message = (msg: string, items: { title: string }[]) => {
            if (!/has finished/.test(msg)) return undefined;
            offered.push(items.map((i) => i.title));
            return items.find((i) => i.title === "Show result");
        };
        ext = loadExtension();
        const api = ext.activate(fakeContext());
        assert.equal(await api.started, true);
        await waitFor("server ready", () => api.sb.servers.some((s: any) => s.name === "t" && s.state === "ready"));
        void api.sb.exec("switchboard.callTool", { name: "mcp__t__task_slow", arguments: { file: done }, mode: "always-allow" }).catch(() => undefined); // ends with the host
        await waitFor("the task running", async () => {
            const r = await api.sb.exec("switchboard.tasks", undefined);
            return r.tasks.length === 1 && r.tasks[0].state === "running" && r.tasks[0].message.startsWith("step ");
        });
        fs.writeFileSync(done, "");
        assert.equal(await api.sb.restart(), true);
        const opened = await waitFor("the result view", () =>
            stub.log.find((e: any) => e.fn === "openTextDocument" && typeof e.content === "string" && e.content.startsWith("Result of mcp__t__task_slow")),
        );
        assert.deepEqual(offered, [["Show result"]]);
        // Read-only and virtual, as the server reports: not an "Untitled" document that asks to be saved on close.
        assert.equal(opened.doc.isUntitled, false);
        assert.equal(opened.doc.uri.scheme, "switchboard-server");
        assert.equal(opened.doc.languageId, "markdown");
        assert.match(opened.content, /\(task [0-9a-f]+, completed; started by callTool at /);
        assert.match(opened.content, /task_slow done after \d+ polls clear\\x1b\[2J/);
        for (const bad of ["\x1b", "\x07", "\r", "\u202e", "\u200b"]) assert.ok(!opened.content.includes(bad), `raw ${JSON.stringify(bad)} in the view`);
    });
});

test("quick pick: a task's status message cannot draw icons", () => {
    assert.match(taskItems([{ ...base, message: "$(check) done" }])[0].detail, /^\\\$\(check\) done · /);
});
