// MCP resources and prompts in VS Code: Browse MCP Resources (a template asked with completion),
// the read-only switchboard-mcp: document kept up to date, Attach to Chat, "@" and "/" in the chat
// view. Real binary (mcptest --resources), script provider.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fakeContext, freshEnv, loadExtension, processesUnder, stub, vscode, waitFor, type Env } from "./harness";
import { ui } from "../src/ids";
import { expandTemplate, resourceDocUri, routeChatMessage, templateVariables } from "../src/resources";

let env: Env;
let ext: ReturnType<typeof loadExtension>;
let api: any;
let handler: (...a: any[]) => Promise<any>;

const pickLabel = (label: string) => (items: any[]) => items.find((i) => i.label === label || i.label?.startsWith(label));

describe("MCP resources and prompts", () => {
    before(async () => {
        env = freshEnv("resources");
        const script = path.join(env.dir, "chat.script");
        fs.writeFileSync(
            script,
            [
                'expect last_user ~ "(?s)<attached-resource server=\\"res\\" uri=\\"mcptest://notes/beta\\">\\n> note beta\\n</attached-resource>\\n\\nsummarize$"',
                'reply text "Summarized."',
                "",
                'expect last_user ~ "(?s)<server-prompt server=\\"res\\" name=\\"review\\">\\n> user: Please give a thorough review of gamma.\\n</server-prompt>\\n\\nbe short$"',
                'reply text "Reviewed."',
                "",
                'expect last_user ~ "(?s)> user: Please give a brief review of alpha.\\n</server-prompt>\\nRespond to the prompt above.\\n$"',
                'reply text "Brief."',
                "",
            ].join("\n"),
        );
        stub.settings["switchboard.path"] = env.bin.switchboard;
        stub.settings["switchboard.servers"] = { res: { command: env.bin.mcptest, args: ["--resources"] } };
        stub.settings["switchboard.provider"] = { type: "script", script };
        vscode.chat = {
            createChatParticipant(_id: string, h: typeof handler) {
                handler = h;
                return { dispose() {} };
            },
        };
        ext = loadExtension();
        api = ext.activate(fakeContext());
        assert.equal(await api.started, true);
        await waitFor("server ready", () => api.sb.servers.some((s: any) => s.name === "res" && s.state === "ready"));
    });

    after(async () => {
        await ext?.deactivate();
        if (env) await waitFor("no processes left", () => processesUnder(env.dir).length === 0, 10000);
    });

    test("templates and chat routes parse", () => {
        assert.deepEqual(templateVariables("x://{a}/{+b}{?c,d*}"), ["a", "b", "c", "d"]);
        assert.equal(expandTemplate("mcptest://notes/{name}", { name: "a b" }), "mcptest://notes/a%20b");
        assert.deepEqual(routeChatMessage("@"), { kind: "attach", server: undefined });
        assert.deepEqual(routeChatMessage("/res:review be short"), { kind: "prompt", server: "res", name: "review", rest: "be short" });
        assert.deepEqual(routeChatMessage("hello @x"), { kind: "text" });
    });

    test("browse a template with completion, open read-only, attach to chat, send", async () => {
        const asked: any[] = [];
        stub.script.quickPick = (items: any[], opts: any) => {
            asked.push({ title: opts.title, labels: items.map((i) => i.label) });
            return opts.title === "MCP resources" ? pickLabel("notes (template)")(items) : pickLabel("beta")(items);
        };
        stub.script.message = (msg: string, items: any[]) => (/mcptest:\/\/notes\/beta \(read-only/.test(msg) ? items[0] : undefined);
        const doc = await vscode.commands.executeCommand(ui.browseResources);
        assert.equal(doc.uri.scheme, "switchboard-mcp");
        assert.equal(doc.getText(), "note beta");
        assert.equal(doc.readOnly, true);
        assert.deepEqual(asked[1], { title: "name", labels: ["alpha", "beta", "gamma", "Type a value…"] }, "the template variable completes");
        await waitFor("attached", () => api.chat.sessions.attachments.pending.length === 1);
        const t = await api.chat.panel.send("summarize");
        assert.equal(t.state, "done", JSON.stringify(t));
        assert.match(t.text, /Summarized\./);
        assert.equal(api.chat.sessions.attachments.pending.length, 0, "attachments go with one message");
    });

    test("an open resource is re-read when the server updates it", async () => {
        const provider = stub.contentProviders.get("switchboard-mcp");
        const u = resourceDocUri("res", "mcptest://counter");
        assert.equal(await provider.provideTextDocumentContent(u), "counter 0");
        const changed = new Promise((resolve) => provider.onDidChange(resolve));
        await api.sb.exec("switchboard.callTool", { name: "mcp__res__bump", mode: "always-allow" });
        assert.equal(String(await changed), String(u));
        assert.equal(await provider.provideTextDocumentContent(u), "counter 1");
    });

    test('"/" in the chat view runs a server prompt, its arguments asked with completion', async () => {
        stub.script.quickPick = (items: any[], opts: any) => (opts.title === "topic" ? pickLabel("gamma")(items) : pickLabel("thorough")(items));
        const t = await api.chat.panel.send("/review be short");
        assert.equal(t.state, "done", JSON.stringify(t));
        assert.match(t.text, /Reviewed\./);
        assert.equal(t.prompt, "/review be short");
    });

    test('"/server:name" to @switchboard runs the prompt; the arguments are asked', async () => {
        stub.script.quickPick = (items: any[], opts: any) => (opts.title === "topic" ? pickLabel("alpha")(items) : items.find((i) => i.description === "leave empty"));
        const parts: string[] = [];
        const stream = { markdown: (v: any) => parts.push(typeof v === "string" ? v : v.value), progress() {}, button() {} };
        const r = await handler({ prompt: "/res:review" }, { history: [] }, stream, new vscode.CancellationTokenSource().token);
        assert.equal(r.errorDetails, undefined, JSON.stringify(r));
        assert.equal(parts.join(""), "Brief.");
    });
});
