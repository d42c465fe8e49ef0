// This round's server states as a person sees them in Show Servers (the quick pick and a server's
// report), from the real extension and host with real servers: a 2026-07-28-only server, a shared
// one (its daemon in this test's own runtime folder), a sandboxed hostile one and a failing hostile
// one. Every server-controlled string arrives escaped.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { ui } from "../src/ids";
import { fakeContext, freshEnv, loadExtension, processesUnder, stub, vscode, waitFor, type Env } from "./harness";

const raw = ["\x1b", "\x07", "\r", "\u202e", "\u200b"];

describe("Show Servers: protocol era, shared, sandbox", () => {
    let env: Env | undefined;
    let ext: ReturnType<typeof loadExtension> | undefined;
    after(async () => {
        await ext?.deactivate();
        // The shared daemon outlives the window by its idle time: stop it, it is ours.
        if (env) spawnStop(env);
        if (env) await waitFor("no processes left", () => processesUnder(env!.dir).length === 0, 20000);
    });

    test("the list and the reports say what README says", async () => {
        env = freshEnv("serverlist");
        const run = path.join(env.dir, "run");
        fs.mkdirSync(run, { mode: 0o700 });
        process.env["XDG_RUNTIME_DIR"] = run;
        stub.settings["switchboard.path"] = env.bin.switchboard;
        stub.settings["switchboard.daemonIdleSeconds"] = 1;
        stub.settings["switchboard.servers"] = {
            era: { command: env.bin.mcptest, args: ["--protocol", "2026-07-28"] },
            boxed: { command: env.bin.mcptest, args: ["--hostile"], sandbox: true },
            together: { command: env.bin.mcptest, shared: true },
            hostile: { command: env.bin.mcptest, args: ["--hostile", "--exit-at-start"] },
        };
        ext = loadExtension();
        const api = ext.activate(fakeContext());
        assert.equal(await api.started, true);
        await waitFor("servers settled", () => api.sb.servers.length === 4 && api.sb.servers.every((s: any) => s.state !== "starting"));
        let items: any[] = [];
        stub.script.createQuickPick = async (qp: any) => {
            await waitFor("server items", () => !qp.busy && qp.items.length === 4);
            items = qp.items;
            qp._accept(qp.items.find((i: any) => i.server.name === "boxed"));
        };
        await vscode.commands.executeCommand(ui.showServers);
        const item = (name: string): any => items.find((i) => i.server.name === name);
        assert.equal(item("era").description, "ready · 13 tools · stdio · MCP 2026-07-28");
        assert.equal(item("together").description, "ready · 8 tools · stdio · shared (1 window)");
        assert.match(item("hostile").description, /^failed/);
        for (const i of items) for (const bad of raw) for (const k of ["label", "description", "detail"]) assert.ok(!String(i[k]).includes(bad), `raw ${JSON.stringify(bad)} in ${i.server.name}'s ${k}: ${i[k]}`);
        const report = stub.log.filter((e: any) => e.fn === "openTextDocument").pop().content as string;
        assert.match(report, /- Sandbox: sandboxed: no network, writes only its own folder/);
        stub.script.createQuickPick = async (qp: any) => {
            await waitFor("server items", () => !qp.busy && qp.items.length === 4);
            qp._accept(qp.items.find((i: any) => i.server.name === "hostile"));
        };
        await vscode.commands.executeCommand(ui.showServers);
        const hostile = stub.log.filter((e: any) => e.fn === "openTextDocument").pop().content as string;
        assert.match(hostile, /- Sandbox: none \(runs with your full rights\)/);
        assert.match(hostile, /clear\\x1b\[2J/, "the escape made visible");
        for (const bad of raw) assert.ok(!hostile.includes(bad), `raw ${JSON.stringify(bad)} in the report`);
    });
});

function spawnStop(env: Env): void {
    try {
        execFileSync(env.bin.switchboard, ["daemon", "stop"], { env: process.env, stdio: "ignore", timeout: 10000 });
    } catch {
        // no daemon left: nothing to stop
    }
}
