// A tool call its server runs as an MCP task, as a person sees it in VS Code: its progress.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { fakeContext, freshEnv, loadExtension, processesUnder, stub, waitFor, type Env } from "./harness";

// The real extension and host: a tool call its server runs as a task shows as progress titled
// "Switchboard: <tool>" with the task's status message (escaped) and how long it has run, and the
// progress's Cancel asks the server to stop it.
describe("a task's progress", () => {
    let env: Env | undefined;
    let ext: ReturnType<typeof loadExtension> | undefined;
    after(async () => {
        await ext?.deactivate();
        if (env) await waitFor("no processes left", () => processesUnder(env!.dir).length === 0, 10000);
    });

    test("titled Switchboard: <tool>, status and elapsed time, escaped; Cancel cancels the task", async () => {
        env = freshEnv("taskprogress");
        stub.settings["switchboard.path"] = env.bin.switchboard;
        stub.settings["switchboard.servers"] = { t: { command: env.bin.mcptest, args: ["--tasks", "--task-poll-ms", "1", "--hostile"] } };
        ext = loadExtension();
        const api = ext.activate(fakeContext());
        assert.equal(await api.started, true);
        await waitFor("server ready", () => api.sb.servers.some((s: any) => s.name === "t" && s.state === "ready"));
        const call = api.sb.exec("switchboard.callTool", { name: "mcp__t__task_slow", arguments: { polls: 1000000 }, mode: "always-allow" });
        const progress = await waitFor("the task's progress", () =>
            stub.log.find((e: any) => e.fn === "withProgress" && e.title === "Switchboard: mcp__t__task_slow" && e.reports.some((r: any) => /^step /.test(r.message ?? ""))),
        );
        assert.notEqual(progress.cancellable, false, "the progress can be cancelled");
        const line = progress.reports.map((r: any) => r.message).filter((m: unknown) => typeof m === "string").pop() as string;
        assert.match(line, /^step \d+ .*clear\\x1b\[2J.* · \d+s$/, "status message, escaped, then the elapsed time");
        for (const bad of ["\x1b", "\x07", "\r", "\u202e", "\u200b"]) assert.ok(!line.includes(bad), `raw ${JSON.stringify(bad)} in ${line}`);
        progress._cancel();
        const res = await call;
        assert.equal(res.isError, true);
        assert.match(res.text, /the user cancelled this tool call/);
        const list = await api.sb.exec("switchboard.tasks", undefined);
        assert.equal(list.tasks[0].state, "cancelled");
    });
});
