// The real bundled extension with the real vscode-languageclient 11, under node with a stand-in
// vscode module, against the real `switchboard serve` and cmd/mcptest. The tests share one
// activation and run in order.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { ui } from "../src/ids";
import { Cmd, type Approval, type ServerStatus, type ToolResult } from "../src/lsp_types";
import { fakeContext, freshEnv, loadExtension, processesUnder, readAllowlist, stub, vscode, waitFor, type Env } from "./harness";

type Rule = { match: RegExp; answer: string | undefined };
let rules: Rule[] = [];
stub.script.message = (msg: string, items: { title?: string }[] | string[]) => {
    for (const r of rules) {
        if (r.match.test(msg)) {
            if (r.answer === undefined) return undefined;
            return (items as unknown[]).find((i) => (typeof i === "string" ? i : (i as { title: string }).title) === r.answer);
        }
    }
    return undefined;
};

let env: Env;
let api: any;
let ext: ReturnType<typeof loadExtension>;
const statusTexts: string[] = [];

function statusItem(): { text: string; tooltip: string; command: string; visible: boolean } {
    const item = stub.statusBarItems.find((i: { id: string }) => i.id === "switchboard.status");
    assert.ok(item, "status bar item created");
    return item;
}

function messages(re: RegExp): { message: string; items: string[]; answer?: string; severity: string }[] {
    return stub.log.filter((e: { fn: string; message?: string }) => e.fn === "showMessage" && re.test(e.message ?? ""));
}

function servers(): ServerStatus[] {
    return api.sb.servers as ServerStatus[];
}

function settled(): boolean {
    const s = servers();
    return s.length >= 2 && s.every((x) => x.state !== "starting");
}

const callTool = (name: string, args: object): Promise<ToolResult> =>
    vscode.commands.executeCommand(Cmd.callTool, { name, arguments: args }) as Promise<ToolResult>;

describe("extension against switchboard serve", () => {
    before(async () => {
        env = freshEnv("client");
        stub.settings["switchboard.path"] = env.bin.switchboard;
        stub.settings["switchboard.servers"] = {
            mcptest: { command: env.bin.mcptest, args: ["--instructions", "test server"] },
            broken: { command: env.bin.mcptest, args: ["--exit-at-start"] },
        };
        stub.settings["switchboard.approvalTimeoutSeconds"] = 60;
        // Watch the status bar text over time.
        const origCreate = vscode.window.createStatusBarItem;
        vscode.window.createStatusBarItem = (...a: unknown[]) => {
            const item = origCreate(...a);
            let text = "";
            Object.defineProperty(item, "text", {
                get: () => text,
                set: (v: string) => {
                    text = v;
                    statusTexts.push(v);
                },
            });
            return item;
        };
        ext = loadExtension();
        api = ext.activate(fakeContext());
        assert.equal(await api.started, true, "the host started");
    });

    after(async () => {
        await ext?.deactivate();
        if (env) {
            await waitFor("no host or MCP server processes left", () => processesUnder(env.dir).length === 0, 10000).catch((err) => {
                throw new Error(`${String(err)}\n${processesUnder(env.dir).join("\n")}`);
            });
        }
    });

    test("activation starts the host, which advertises every command", async () => {
        for (const c of Object.values(Cmd)) {
            assert.ok(stub.commands.has(c), `languageclient registered ${c} from executeCommandProvider`);
        }
        for (const c of Object.values(ui)) {
            assert.ok(stub.commands.has(c), `extension registered ${c}`);
        }
        assert.equal(api.sb.client.initializeResult.serverInfo.name, "switchboard");
        assert.ok(stub.codeActionProviders.length > 0, "a code action provider is registered");
    });

    test("status bar shows servers ready and failed", async () => {
        await waitFor("servers settled", settled);
        const byName = Object.fromEntries(servers().map((s) => [s.name, s]));
        assert.equal(byName["mcptest"].state, "ready");
        assert.ok(byName["mcptest"].tools >= 5);
        assert.equal(byName["broken"].state, "failed");
        const item = statusItem();
        await waitFor("status text", () => item.text === "$(server) 1/2 ready $(error) 1 failed");
        assert.equal(item.command, ui.statusMenu);
        assert.ok(item.visible);
        assert.match(item.tooltip, /1 failed: broken/);
        // The host tells about the failed server once, with the reason, and the toast can act on it.
        const toast = await waitFor("failure toast", () => messages(/broken/)[0]);
        assert.equal(toast.severity, "error");
        assert.match(toast.message, /^Switchboard: MCP server 'broken' failed: /);
        assert.deepEqual(toast.items, ["Reconnect", "Show Server", "Show Output"]);
    });

    test("the failed-server toast's Reconnect reconnects that server", async () => {
        const reconnects: unknown[] = [];
        const origExec = api.sb.exec.bind(api.sb);
        api.sb.exec = (cmd: string, params: unknown, token: unknown) => {
            if (cmd === Cmd.reconnect) reconnects.push(params);
            return origExec(cmd, params, token);
        };
        const before = messages(/MCP server 'broken' failed/).length;
        try {
            // One click only: the reconnect fails again and shows a new toast, left unanswered.
            let clicked = false;
            rules = [{ match: /^Switchboard: MCP server 'broken' failed: /, answer: "Reconnect" }];
            const orig = stub.script.message;
            stub.script.message = (msg: string, items: any[], ...rest: unknown[]) => {
                if (!clicked && /MCP server 'broken' failed/.test(msg)) {
                    clicked = true;
                    return items.find((i) => (typeof i === "string" ? i : i.title) === "Reconnect");
                }
                return orig(msg, items, ...rest);
            };
            try {
                await origExec(Cmd.reconnect, { server: "broken" });
                await waitFor("toast clicked, then the server reconnected", () => reconnects.some((p: any) => p?.server === "broken"));
                await waitFor("the second failure is told again", () => messages(/MCP server 'broken' failed/).length >= before + 2);
            } finally {
                stub.script.message = orig;
            }
        } finally {
            api.sb.exec = origExec;
            rules = [];
        }
    });

    test("a server list answered after a newer serversChanged does not replace it", async () => {
        const origExec = api.sb.exec.bind(api.sb);
        const before = api.sb.servers;
        let answer: (v: unknown) => void = () => {};
        api.sb.exec = (cmd: string, params: unknown, token: unknown) => {
            if (cmd === Cmd.servers) return new Promise((resolve) => (answer = resolve));
            return origExec(cmd, params, token);
        };
        try {
            // The host listed the servers (one starting), then announced it ready, and its answer
            // to the list request arrived after the announcement.
            const refreshed = api.sb.refresh();
            api.sb.serversChanged({ servers: [{ name: "late", state: "ready", transport: "stdio", tools: 1 }] });
            answer([{ name: "late", state: "starting", transport: "stdio", tools: 0 }]);
            await refreshed;
            // (The real host may announce its own servers meanwhile: then "late" is gone, rightly.)
            const late = api.sb.servers.find((s: { name: string }) => s.name === "late");
            assert.notEqual(late?.state, "starting", "the older list replaced the newer notification");
        } finally {
            api.sb.exec = origExec;
            api.sb.serversChanged({ servers: before });
        }
    });

    test("Reconnect All Servers", async () => {
        const result = (await vscode.commands.executeCommand(ui.reconnectAll)) as ServerStatus[];
        assert.deepEqual(result.map((s) => `${s.name}:${s.state}`).sort(), ["broken:failed", "mcptest:ready"]);
        await waitFor("summary toast", () => messages(/1 of 2 MCP servers ready; failed: broken/).length > 0);
    });

    test("Reconnect Server... picks from servers with their state", async () => {
        let shown: { label: string; description: string; detail: string; server: ServerStatus }[] = [];
        stub.script.quickPick = (items: typeof shown) => {
            shown = items;
            return items.find((i) => i.server.name === "mcptest");
        };
        const status = (await vscode.commands.executeCommand(ui.reconnectServer)) as ServerStatus;
        assert.equal(status.name, "mcptest");
        assert.equal(status.state, "ready");
        const broken = shown.find((i) => i.server.name === "broken");
        assert.ok(broken);
        assert.match(broken.label, /error/);
        assert.match(broken.description, /^failed/);
        assert.match(broken.detail, /^(Error|stderr):/);
        await waitFor("ready toast", () => messages(/mcptest is ready/).length > 0);
    });

    test("Show Servers: reconnect button and details", async () => {
        const reconnects: unknown[] = [];
        const origExec = api.sb.exec.bind(api.sb);
        api.sb.exec = (cmd: string, params: unknown, token: unknown) => {
            if (cmd === Cmd.reconnect) reconnects.push(params);
            return origExec(cmd, params, token);
        };
        try {
            stub.script.createQuickPick = async (qp: any) => {
                await waitFor("server items", () => !qp.busy && qp.items.length === 2);
                const mcptest = qp.items.find((i: any) => i.server.name === "mcptest");
                assert.equal(mcptest.buttons.length, 2);
                await qp._pressItemButton(mcptest, 0);
                await waitFor("reconnect done", () => !qp.busy && reconnects.length === 1);
                qp._accept(qp.items.find((i: any) => i.server.name === "broken"));
            };
            await vscode.commands.executeCommand(ui.showServers);
        } finally {
            api.sb.exec = origExec;
        }
        assert.deepEqual(reconnects, [{ server: "mcptest" }]);
        const doc = stub.log.filter((e: any) => e.fn === "openTextDocument").pop();
        assert.ok(doc, "a report was opened");
        assert.match(doc.content, /MCP server `broken`/);
        assert.match(doc.content, /State: \*\*failed\*\*/);
        // Read-only and virtual: not an "Untitled" document that asks to be saved on close.
        assert.equal(doc.doc.uri.scheme, "switchboard-server");
        assert.equal(doc.doc.isUntitled, false);
        assert.equal(doc.doc.languageId, "markdown");
    });

    test("the server report lists each tool's parameters from its input schema", async () => {
        stub.script.createQuickPick = async (qp: any) => {
            await waitFor("server items", () => !qp.busy && qp.items.length === 2);
            qp._accept(qp.items.find((i: any) => i.server.name === "mcptest"));
        };
        await vscode.commands.executeCommand(ui.showServers);
        const doc = stub.log.filter((e: any) => e.fn === "openTextDocument").pop();
        assert.equal(doc.doc.uri.toString(), "switchboard-server:///mcptest.md");
        assert.match(doc.content, /### `echo`/);
        assert.match(doc.content, /\| `text` \| string \| yes \| text to return \|/);
        assert.match(doc.content, /\| `n` \| number \| yes \| number of bytes \|/);
        assert.match(doc.content, /\| `char` \| string \| no \| what to repeat \(default x\) \|/);
    });

    test("Call Tool...: pick a tool, a typed form from its input schema, approval, result document", async () => {
        rules = [{ match: /^Allow mcp__mcptest__big/, answer: "Allow once" }];
        const boxes: { prompt: string; step: number; problems: (string | undefined)[] }[] = [];
        stub.script.quickPick = (items: any[], options: any) => {
            assert.equal(options.title, "Switchboard: Call Tool");
            const big = items.find((i) => i.tool?.name === "mcp__mcptest__big");
            assert.equal(big.detail.startsWith("(n, char?)"), true, big.detail);
            return big;
        };
        stub.script.createInputBox = (box: any) => {
            const seen = { prompt: box.prompt, step: box.step, problems: [] as (string | undefined)[] };
            boxes.push(seen);
            if (box.step === 1) {
                box._type("many");
                seen.problems.push(box.validationMessage);
                box._accept(); // refused: stays open
                seen.problems.push(box.validationMessage);
                box._type("5");
                box._accept();
            } else {
                box._type("ab");
                box._accept();
            }
        };
        try {
            const result = (await vscode.commands.executeCommand(ui.callTool)) as ToolResult;
            assert.equal(result.isError, false);
            assert.equal(result.text, "ababa");
        } finally {
            stub.script.quickPick = () => undefined;
            stub.script.createInputBox = (box: any) => box.hide();
        }
        assert.deepEqual(
            boxes.map((b) => [b.step, b.prompt]),
            [
                [1, "n: number of bytes"],
                [2, "char (optional): what to repeat (default x)"],
            ],
        );
        assert.deepEqual(boxes[0].problems, ["Must be a number.", "Must be a number."]);
        const prompt = messages(/^Allow mcp__mcptest__big/).pop();
        assert.equal(prompt?.answer, "Allow once", "the call went through the confirm gate");
        const doc = stub.log.filter((e: any) => e.fn === "openTextDocument").pop();
        assert.equal(doc.doc.uri.scheme, "switchboard-server");
        assert.match(doc.content, /Arguments: `\{"n":5,"char":"ab"\}`/);
        assert.match(doc.content, /```\nababa\n```/);
    });

    test("approval through the showMessageRequest prompt (Allow tool) writes the allowlist", async () => {
        rules = [{ match: /^Allow mcp__mcptest__echo/, answer: "Allow tool" }];
        const before = messages(/mcp__mcptest__echo/).length;
        const result = await callTool("mcp__mcptest__echo", { text: "hello" });
        assert.equal(result.isError, false);
        assert.equal(result.text, "hello");
        const prompts = messages(/mcp__mcptest__echo/);
        assert.equal(prompts.length, before + 1);
        const prompt = prompts[prompts.length - 1];
        assert.deepEqual(prompt.items, ["Allow once", "Allow tool", "Allow server", "Deny"]);
        assert.equal(prompt.answer, "Allow tool");
        assert.ok(readAllowlist(env).includes("mcp__mcptest__echo"), `allowlist: ${readAllowlist(env).join(",")}`);
        // Now allowlisted: runs without asking.
        const again = await callTool("mcp__mcptest__echo", { text: "again" });
        assert.equal(again.text, "again");
        assert.equal(messages(/mcp__mcptest__echo/).length, before + 1);
    });

    test("approval through a quick fix, with the pending count in the status bar", async () => {
        rules = [{ match: /^Allow mcp__mcptest__big/, answer: undefined }]; // dismissed: stays pending
        statusTexts.length = 0;
        const call = callTool("mcp__mcptest__big", { n: 10 });
        const pending = await waitFor("pending approval", () => [...api.sb.pending.values()].find((a: Approval) => a.tool === "mcp__mcptest__big") as Approval | undefined);
        assert.equal(pending.server, "mcptest");
        assert.deepEqual(pending.arguments, { n: 10 });
        await waitFor("status shows 1 pending", () => statusItem().text.endsWith("$(bell-dot) 1 to approve"));

        const file = path.join(env.dir, "a.txt");
        fs.writeFileSync(file, "hello\n");
        const doc = vscode.__textDocument(vscode.Uri.file(file), "hello\n", "plaintext");
        stub.textDocuments.push(doc);
        stub.events.openDocument.fire(doc);
        const provider = stub.codeActionProviders[0].provider;
        const token = new vscode.CancellationTokenSource().token;
        const actions = await waitFor("quick fixes for the approval", async () => {
            const got = (await provider.provideCodeActions(doc, new vscode.Range(0, 0, 0, 0), { diagnostics: [], triggerKind: 1, only: undefined }, token)) ?? [];
            const mine = got.filter((a: any) => a.title.includes("mcp__mcptest__big"));
            return mine.length === 4 ? mine : undefined;
        });
        assert.ok(actions.every((a: any) => a.kind?.value === "quickfix"));
        const once = actions.find((a: any) => a.title.startsWith("Allow once"));
        assert.ok(once, actions.map((a: any) => a.title).join(", "));
        assert.equal(once.command.command, Cmd.approve);
        await vscode.commands.executeCommand(once.command.command, ...(once.command.arguments ?? []));
        const result = await call;
        assert.equal(result.isError, false);
        assert.equal(result.text, "x".repeat(10));
        await waitFor("pending cleared", () => api.sb.pending.size === 0 && !statusItem().text.includes("$(bell-dot)"));
        assert.ok(!readAllowlist(env).includes("mcp__mcptest__big"), "once does not write the allowlist");
        // Later answers lose: the code action's approve now gets InvalidParams.
        await assert.rejects(Promise.resolve(vscode.commands.executeCommand(once.command.command, ...(once.command.arguments ?? []))));
    });

    test("Approve Pending Tool Call... shows arguments and denies", async () => {
        rules = [{ match: /^Allow mcp__mcptest__fail/, answer: undefined }];
        const call = callTool("mcp__mcptest__fail", { message: "should not run" });
        await waitFor("pending fail", () => [...api.sb.pending.values()].some((a: Approval) => a.tool === "mcp__mcptest__fail"));
        const shown: any[] = [];
        stub.script.quickPick = (items: any[]) => {
            shown.push(items);
            if (shown.length === 1) return items.find((i) => i.approval?.tool === "mcp__mcptest__fail");
            return items.find((i) => i.decision === "deny");
        };
        const decision = await vscode.commands.executeCommand(ui.approvePending);
        assert.equal(decision, "deny");
        const item = shown[0].find((i: any) => i.approval?.tool === "mcp__mcptest__fail");
        assert.match(item.detail, /should not run/);
        assert.deepEqual(
            shown[1].map((i: any) => i.label),
            ["Allow once", "Allow tool", "Allow server", "Deny"],
        );
        const result = await call;
        assert.equal(result.isError, true);
        assert.match(result.text, /denied/i);
        assert.doesNotMatch(result.text, /should not run/);
    });

    test("Manage Tool Approvals...: tools, whole server, revoke", async () => {
        let step = 0;
        let offered: any[] = [];
        let options: any;
        const pickTools = (names: string[]) => (items: any[], opts: any) => {
            step++;
            if (step === 1) return items.find((i) => i.server?.name === "mcptest");
            offered = items;
            options = opts;
            return items.filter((i) => names.includes(i.choice.entry));
        };
        stub.script.quickPick = pickTools(["mcp__mcptest__echo", "mcp__mcptest__slow"]);
        await vscode.commands.executeCommand(ui.manageApprovals);
        assert.deepEqual(readAllowlist(env).filter((e) => e.startsWith("mcp__mcptest__")).sort(), ["mcp__mcptest__echo", "mcp__mcptest__slow"]);
        assert.equal(offered[0].choice.wholeServer, true);
        // The placeholder fits the input box (about 50 characters); the file is named in the title.
        assert.ok(options.placeHolder.length <= 50, options.placeHolder);
        assert.match(options.title, /^Switchboard: auto-approved tools of mcptest \(saved in .*allow_tool\)$/);
        assert.ok(offered.find((i) => i.choice.entry === "mcp__mcptest__echo").picked, "echo was offered as already allowed");

        step = 0;
        stub.script.quickPick = pickTools(["mcp__mcptest__*"]);
        await vscode.commands.executeCommand(ui.manageApprovals);
        assert.deepEqual(readAllowlist(env).filter((e) => e.startsWith("mcp__mcptest__")), ["mcp__mcptest__*"]);

        step = 0;
        stub.script.quickPick = pickTools([]);
        await vscode.commands.executeCommand(ui.manageApprovals);
        assert.deepEqual(readAllowlist(env).filter((e) => e.startsWith("mcp__mcptest__")), []);
    });

    test("settings changes reach the host (workspace/didChangeConfiguration)", async () => {
        await vscode.workspace.getConfiguration("switchboard").update("servers", {
            ...stub.settings["switchboard.servers"],
            second: { command: env.bin.mcptest, args: ["--name", "second"] },
        });
        await waitFor("second server ready", () => servers().find((s) => s.name === "second" && s.state === "ready"));
        await waitFor("status text", () => statusItem().text === "$(server) 2/3 ready $(error) 1 failed");
    });

    test("chat view: a turn whose tool call is approved from the view, then a cancelled turn", async () => {
        const script = path.join(env.dir, "chat.script");
        fs.writeFileSync(
            script,
            [
                'expect last_user ~ "say hi"',
                'reply text "Calling echo."',
                'reply tool_call id=c1 name=mcp__mcptest__echo args={"text":"from chat"}',
                "",
                'expect last_tool_result id=c1 ~ "from chat"',
                'reply text "Echo said: from chat"',
                "",
                'expect last_user ~ "wait forever"',
                "reply hang",
                "",
            ].join("\n"),
        );
        await vscode.workspace.getConfiguration("switchboard").update("provider", { type: "script", script });
        rules = [{ match: /^Allow mcp__mcptest__echo/, answer: undefined }]; // dismissed: answer from the chat view
        await vscode.commands.executeCommand(ui.openChat);
        const panel = stub.webviewPanels[stub.webviewPanels.length - 1];
        assert.ok(panel, "the chat view opened");
        assert.match(panel.webview.html, /Content-Security-Policy/);
        panel._send({ type: "send", text: "say hi" });
        // The tool call waits; the view shows it with the approval's id (its Allow/Deny buttons).
        const waiting = await waitFor("tool call waiting in the chat view", () => {
            const s = panel.posted[panel.posted.length - 1];
            const c = s?.turns[0]?.tools[0];
            return c?.approval === "waiting" && c.approvalId ? c : undefined;
        });
        assert.equal(waiting.name, "mcp__mcptest__echo");
        assert.deepEqual(waiting.arguments, { text: "from chat" });
        panel._send({ type: "approve", id: waiting.approvalId, decision: "once" });
        const final = await waitFor("turn done", () => {
            const s = panel.posted[panel.posted.length - 1];
            return s && !s.busy && s.turns.length === 1 && s.turns[0].state !== "running" ? s : undefined;
        });
        const turn = final.turns[0];
        assert.equal(turn.state, "done", JSON.stringify(turn));
        assert.equal(turn.text, "Calling echo.Echo said: from chat");
        assert.deepEqual(turn.parts, [
            { kind: "text", text: "Calling echo." },
            { kind: "tool", id: "c1" },
            { kind: "text", text: "Echo said: from chat" },
        ]);
        assert.equal(turn.tools.length, 1);
        assert.equal(turn.tools[0].name, "mcp__mcptest__echo");
        assert.equal(turn.tools[0].approval, "allowed");
        assert.equal(turn.tools[0].result.text, "from chat");

        panel._send({ type: "send", text: "wait forever" });
        await waitFor("second turn running", () => api.chat.activeTurns().length === 1);
        await vscode.commands.executeCommand(ui.cancelTurn);
        const cancelled = await waitFor("turn cancelled", () => {
            const s = panel.posted[panel.posted.length - 1];
            return s && !s.busy && s.turns.length === 2 ? s.turns[1] : undefined;
        });
        assert.equal(cancelled.state, "cancelled");
    });

    test("a host that exits is restarted by the client and the status recovers", async () => {
        const servePids = () =>
            processesUnder(env.dir)
                .filter((l) => l.includes(`${env.bin.switchboard} serve`))
                .map((l) => Number(l.split(/\s+/)[0]));
        const [old] = servePids();
        assert.ok(old, "the host process is running");
        process.kill(old, "SIGTERM");
        await waitFor("a new host process", () => {
            const now = servePids();
            return now.length === 1 && now[0] !== old;
        });
        await waitFor("running with the servers back", () => api.sb.connection === "running" && statusItem().text === "$(server) 2/3 ready $(error) 1 failed");
        // The old host ended its MCP servers: only the new host's three are left.
        await waitFor("old MCP servers gone", () => processesUnder(env.dir).filter((l) => l.includes(env.bin.mcptest)).length <= 3);
    });

    test("a missing binary gives an error with a Configure path button", async () => {
        rules = [{ match: /switchboard/i, answer: "Configure path" }];
        await vscode.workspace.getConfiguration("switchboard").update("path", path.join(env.dir, "nope"));
        await waitFor("error toast", () => messages(/switchboard.path is set to/).find((m) => m.severity === "error" && m.items.includes("Configure path")));
        await waitFor("settings opened", () =>
            stub.log.find((e: any) => e.fn === "executeCommand" && e.id === "workbench.action.openSettings" && e.args[0] === "switchboard.path"),
        );
        assert.equal(api.sb.connection, "stopped");
        await waitFor("status shows stopped", () => statusItem().text.includes("debug-disconnect"));
        rules = [];
        await vscode.workspace.getConfiguration("switchboard").update("path", env.bin.switchboard);
        await waitFor("restarted", () => api.sb.connection === "running" && settled());
    });
});
