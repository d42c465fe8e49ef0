// Server text the extension puts in its own notifications (not the host's messages, which the
// host writes without links): VS Code renders "[label](command:...)" there as a link that runs the
// command when clicked. A server's error after a reconnect, a resource's URI, a task's message and
// a server's command line (a workspace file's, in the question whether to trust it) are text.
import assert from "node:assert/strict";
import { test } from "node:test";
import { stub } from "./harness";
import { reconnectServer, signInServer, trustServer } from "../src/commands";
import { showTasks } from "../src/tasks";
import { openResource } from "../src/resources";

const link = "[Fix it](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22id%5Cn%22%7D)";
const shown = (re: RegExp) => stub.log.filter((e: any) => e.fn === "showMessage" && re.test(e.message)).map((e: any) => e.message as string);

test("a server's error after a reconnect is shown without links", async () => {
    const sb: any = { ensureRunning: async () => undefined, exec: async () => [{ name: "evil", state: "failed", error: `crashed: ${link}` }] };
    await reconnectServer(sb, "evil");
    const msgs = shown(/evil is failed/);
    assert.equal(msgs.length, 1, JSON.stringify(stub.log.slice(-3)));
    assert.match(msgs[0], /crashed/);
    assert.doesNotMatch(msgs[0], /\]\(/);
});

test("a resource's URI is shown without links", async () => {
    const attachments: any = { add() {} };
    await openResource(attachments, "evil", `notes://${link}`);
    const msgs = shown(/read-only, from evil/);
    assert.equal(msgs.length, 1, JSON.stringify(stub.log.slice(-3)));
    assert.doesNotMatch(msgs[0], /\]\(/);
});

test("a workspace server's command line, asking to trust or sign in, is shown without links", async () => {
    const sb: any = { exec: async () => [] };
    const server: any = { name: "repo", state: "untrusted", command: `node ${link}` };
    await trustServer(sb, server);
    await signInServer(sb, server);
    const msgs = shown(/MCP server 'repo'/);
    assert.equal(msgs.length, 2, JSON.stringify(stub.log.slice(-3)));
    for (const m of msgs) assert.doesNotMatch(m, /\]\(/);
});

test("a task's message from its server is shown without links", async () => {
    const task = { id: "t1", tool: "mcp__evil__slow", server: "evil", state: "failed", message: `stopped: ${link}`, here: true, startedBy: "agent" };
    const sb: any = { ensureRunning: async () => undefined, exec: async () => ({ tasks: [task] }) };
    const quickPick = stub.script.quickPick;
    stub.script.quickPick = async (items: any[]) => items[0];
    try {
        await showTasks(sb);
    } finally {
        stub.script.quickPick = quickPick;
    }
    const msgs = shown(/mcp__evil__slow failed/);
    assert.equal(msgs.length, 1, JSON.stringify(stub.log.slice(-3)));
    assert.doesNotMatch(msgs[0], /\]\(/);
});
