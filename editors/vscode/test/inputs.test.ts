import assert from "node:assert/strict";
import { test } from "node:test";

import { InputsFeature } from "../src/features";
import { answerInput, type InputAsker } from "../src/inputs";
import type { InputParams, InputRequest } from "../src/lsp_types";

const base: InputRequest = {
    id: "i1", server: "github", input: "github-token", message: "MCP server 'github' needs input 'github-token': GitHub token.",
    password: true, file: "/w/.vscode/mcp.json", requestedAt: "2026-01-01T00:00:00Z",
};

function fakeUI(answer: string | undefined) {
    const calls: { fn: string; args: unknown[] }[] = [];
    const ui: InputAsker = {
        showInputBox: (o) => { calls.push({ fn: "showInputBox", args: [o] }); return Promise.resolve(answer); },
        showQuickPick: (items, o) => { calls.push({ fn: "showQuickPick", args: [items, o] }); return Promise.resolve(answer); },
    };
    return { ui, calls };
}

test("a password input is asked with a masked input box and its value sent once", async () => {
    const { ui, calls } = fakeUI("ghp-secret");
    const sent: InputParams[] = [];
    await answerInput(base, ui, (p) => { sent.push(p); return Promise.resolve({}); });
    assert.equal(calls.length, 1);
    assert.equal(calls[0].fn, "showInputBox");
    const o = calls[0].args[0] as { password: boolean; prompt: string; title: string };
    assert.equal(o.password, true);
    assert.equal(o.prompt, base.message);
    assert.match(o.title, /'github'/);
    assert.deepEqual(sent, [{ id: "i1", value: "ghp-secret" }]);
});

test("a pickString input is a quick pick; Esc cancels", async () => {
    const { ui, calls } = fakeUI(undefined);
    const sent: InputParams[] = [];
    await answerInput({ ...base, password: false, options: ["eu", "us"] }, ui, (p) => { sent.push(p); return Promise.resolve({}); });
    assert.equal(calls[0].fn, "showQuickPick");
    assert.deepEqual(calls[0].args[0], ["eu", "us"]);
    assert.deepEqual(sent, [{ id: "i1", cancel: true }]);
});

test("a plain input is not masked", async () => {
    const { ui, calls } = fakeUI("x");
    await answerInput({ ...base, password: false }, ui, () => Promise.resolve({}));
    assert.equal((calls[0].args[0] as { password: boolean }).password, false);
});

test("the inputs capability keeps other experimental keys", () => {
    const caps: any = { experimental: { other: 1, switchboard: { elicitation: true } } };
    new InputsFeature().fillClientCapabilities(caps);
    assert.deepEqual(caps.experimental, { other: 1, switchboard: { elicitation: true, inputs: true } });
});
