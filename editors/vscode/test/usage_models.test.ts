// Usage and cost on the done event, a repeated call's reason, and the model picker's pure parts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { applyEvent, approvalText, newTurn, turnUsageText, usageText } from "../src/chat/transcript";
import type { SwitchboardEvent } from "../src/lsp_types";
import { modelItems, providerWithModel } from "../src/models";

const ev = (kind: string, extra: Partial<SwitchboardEvent> = {}): SwitchboardEvent => ({ turn: "t1", conversation: "c1", kind, ...extra });

test("the done event's usage and the conversation's are shown, with cached tokens and cost", () => {
    const t = newTurn("t1", "c1", "hi");
    assert.equal(turnUsageText(t), "");
    applyEvent(t, ev("done", {
        stopReason: "end_turn",
        usage: { inputTokens: 1200, cachedInputTokens: 800, outputTokens: 150, cost: 0.0031 },
        conversationUsage: { inputTokens: 5000, cachedInputTokens: 3000, cacheWriteTokens: 100, outputTokens: 400, cost: 1.5 },
    }));
    assert.equal(
        turnUsageText(t),
        "This turn: 1,200 input tokens (800 cached), 150 output tokens, $0.0031.\n" +
            "Conversation: 5,000 input tokens (3,000 cached, 100 written to the cache), 400 output tokens, $1.50.",
    );
});

test("usage without prices shows no cost, and nothing cached is not mentioned", () => {
    assert.equal(usageText({ inputTokens: 10, cachedInputTokens: 0, outputTokens: 2 }), "10 input tokens, 2 output tokens");
});

test("a done event with a malformed usage, or one that counted nothing, shows none", () => {
    const t = newTurn("t1", "c1", "hi");
    applyEvent(t, ev("done", { usage: { inputTokens: "many" } as never }));
    assert.equal(turnUsageText(t), "");
    applyEvent(t, ev("done", { usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 } }));
    assert.equal(turnUsageText(t), "");
});

test("a repeated call (decidedBy repeat) shows the host's reason as a sentence", () => {
    const t = newTurn("t1", "c1", "hi");
    applyEvent(t, ev("toolCall", { toolCall: { id: "c1", name: "mcp__s__rm", arguments: {}, approval: "pending" } }));
    applyEvent(t, ev("toolCall", {
        toolCall: {
            id: "c1", name: "mcp__s__rm", arguments: {}, approval: "denied", decidedBy: "repeat",
            reason: "The same call was already denied in this turn, so it was not asked again.",
        },
    }));
    assert.equal(approvalText(t.tools[0]), "not run: The same call was already denied in this turn, so it was not asked again.");
    assert.equal(t.tools[0].approval, "denied");
});

test("model items: current first and marked, display names as descriptions", () => {
    const items = modelItems({
        current: "b",
        models: [{ id: "a", displayName: "Model A" }, { id: "b" }, { id: "c", displayName: "c" }],
    });
    assert.deepEqual(items, [
        { label: "b", id: "b", description: "current" },
        { label: "a", id: "a", description: "Model A" },
        { label: "c", id: "c" },
    ]);
});

test("choosing a model keeps the user's provider fields and never copies a workspace's", () => {
    const inspect = <T>(key: string) =>
        (key === "provider"
            ? { key, globalValue: { type: "anthropic", apiKeyEnv: "MY_KEY" }, workspaceValue: { baseURL: "https://evil.example" } }
            : undefined) as never as { key: string; globalValue?: T };
    assert.deepEqual(providerWithModel(inspect, "claude-x"), { type: "anthropic", apiKeyEnv: "MY_KEY", model: "claude-x" });
    const onlyWorkspace = <T>(key: string) => ({ key, workspaceValue: { baseURL: "https://evil.example" }, defaultValue: {} }) as never as { key: string; globalValue?: T };
    assert.deepEqual(providerWithModel(onlyWorkspace, "m"), { model: "m" });
});
