// Server text the extension puts in its own notifications (not the host's messages, which the
// host writes without links): VS Code renders "[label](command:...)" there as a link that runs the
// command when clicked. A server's error after a reconnect and a resource's URI are shown as text.
import assert from "node:assert/strict";
import { test } from "node:test";
import { stub } from "./harness";
import { reconnectServer } from "../src/commands";
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
