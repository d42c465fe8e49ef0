// A server that only a workspace file defines waits for trust: the host's prompt can be dismissed,
// and Show Servers then offers Trust (switchboard.trust).
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { ui } from "../src/ids";
import { fakeContext, freshEnv, loadExtension, processesUnder, stub, vscode, waitFor, type Env } from "./harness";

let env: Env;
let ext: ReturnType<typeof loadExtension>;
let api: any;
let answer: string | undefined;

describe("workspace trust of MCP servers", () => {
    before(async () => {
        env = freshEnv("trust");
        const ws = path.join(env.dir, "ws");
        fs.mkdirSync(path.join(ws, ".vscode"), { recursive: true });
        fs.writeFileSync(path.join(ws, ".vscode", "mcp.json"), JSON.stringify({ servers: { wsserver: { command: env.bin.mcptest } } }));
        vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(ws), name: "ws", index: 0 }];
        stub.settings["switchboard.path"] = env.bin.switchboard;
        stub.script.message = (_msg: string, items: (string | { title: string })[]) =>
            answer === undefined ? undefined : items.find((i) => (typeof i === "string" ? i : i.title) === answer);
        ext = loadExtension();
        api = ext.activate(fakeContext());
        assert.equal(await api.started, true);
    });

    after(async () => {
        await ext?.deactivate();
        if (env) await waitFor("no processes left", () => processesUnder(env.dir).length === 0, 10000);
    });

    test("the host asks; dismissed, the server stays untrusted", async () => {
        await waitFor("untrusted server", () => api.sb.servers.some((s: any) => s.name === "wsserver" && s.state === "untrusted"));
        const prompt = await waitFor("trust prompt", () =>
            stub.log.find((e: any) => e.fn === "showMessage" && /wsserver/.test(e.message) && e.items.includes("Trust")),
        );
        assert.deepEqual(prompt.items, ["Trust", "Don't trust"]);
        await waitFor("status shows untrusted", () => /workspace-untrusted\) 1/.test(stub.statusBarItems[0].text));
    });

    test("Show Servers offers Trust for it", async () => {
        answer = "Trust";
        stub.script.createQuickPick = async (qp: any) => {
            await waitFor("items", () => !qp.busy && qp.items.length === 1);
            qp._accept(qp.items[0]);
        };
        await vscode.commands.executeCommand(ui.showServers);
        await waitFor("trusted and ready", () => api.sb.servers.some((s: any) => s.name === "wsserver" && s.state === "ready"));
    });
});
