// The order a person uses: VS Code starts with no folder open (the extension activates, the host
// starts with no workspace), then a folder is added. The folder's servers reach the host, ask for
// trust, and once trusted show as README says (here a 2026-07-28-only server).
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, test } from "node:test";
import { fakeContext, freshEnv, loadExtension, processesUnder, stub, vscode, waitFor, type Env } from "./harness";
import { serverDescription } from "../src/format";

let env: Env | undefined;
let ext: ReturnType<typeof loadExtension> | undefined;
after(async () => {
    await ext?.deactivate();
    if (env) await waitFor("no processes left", () => processesUnder(env!.dir).length === 0, 10000);
});

test("no folder at activation, then a folder with its own server", async () => {
    env = freshEnv("folderlater");
    const ws = path.join(env.dir, "ws");
    fs.mkdirSync(path.join(ws, ".vscode"), { recursive: true });
    fs.writeFileSync(path.join(ws, ".vscode", "mcp.json"), JSON.stringify({ servers: { newera: { command: env.bin.mcptest, args: ["--protocol", "2026-07-28"] } } }));
    vscode.workspace.workspaceFolders = undefined;
    stub.settings["switchboard.path"] = env.bin.switchboard;
    stub.settings["switchboard.servers"] = { demo: { command: env.bin.mcptest } };
    stub.script.message = (msg: string, items: (string | { title: string })[]) =>
        /newera/.test(msg) ? items.find((i) => (typeof i === "string" ? i : i.title) === "Trust") : undefined;
    ext = loadExtension();
    const api = ext.activate(fakeContext());
    assert.equal(await api.started, true);
    await waitFor("demo ready", () => api.sb.servers.some((s: any) => s.name === "demo" && s.state === "ready"));
    assert.ok(!api.sb.servers.some((s: any) => s.name === "newera"), "no folder yet");
    const folder = { uri: vscode.Uri.file(ws), name: "ws", index: 0 };
    vscode.workspace.workspaceFolders = [folder];
    stub.events.workspaceFolders.fire({ added: [folder], removed: [] });
    const s = await waitFor("the folder's server trusted and ready", () => api.sb.servers.find((x: any) => x.name === "newera" && x.state === "ready"));
    assert.equal(serverDescription(s), "ready · 13 tools · stdio · MCP 2026-07-28");
    assert.ok(stub.log.some((e: any) => e.fn === "showMessage" && /newera/.test(e.message) && e.items.includes("Trust")), "asked to trust it");
});
