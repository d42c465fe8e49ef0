// Issue 12 item 7: text written for the model is never shown to people where the host gives a
// sentence for them. A denied call and a call to a server that failed, through the Call Tool
// result view, the chat webview and @switchboard, against the real host and cmd/mcptest.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { ui } from "../src/ids";
import type { ToolResult } from "../src/lsp_types";
import { fakeContext, freshEnv, loadExtension, processesUnder, stub, vscode, waitFor, type Env } from "./harness";

let env: Env;
let ext: ReturnType<typeof loadExtension>;
let api: any;
let handler: (...a: any[]) => Promise<any>;

// The model's wording: a person must never see it where a summary exists.
const modelWords = /Do not retry|decided by|\{"error"|Unknown tool/i;

class Stream {
    parts: { kind: string; value: any }[] = [];
    markdown(v: any) {
        this.parts.push({ kind: "markdown", value: typeof v === "string" ? v : v.value });
    }
    progress(v: string) {
        this.parts.push({ kind: "progress", value: v });
    }
    button(v: any) {
        this.parts.push({ kind: "button", value: v });
    }
    text() {
        return this.parts.filter((p) => p.kind === "markdown").map((p) => p.value).join("");
    }
}

function turnScript(word: string): string[] {
    return [
        `expect last_user ~ "${word}"`,
        `reply tool_call id=d1 name=mcp__mcptest__echo args={"text":"secret ${word}"}`,
        "",
        'expect last_tool_result id=d1 ~ "denied"',
        'reply tool_call id=b1 name=mcp__broken__echo args={"text":"x"}',
        "",
        'expect last_tool_result id=b1 ~ ""',
        'reply text "Done."',
        "",
    ];
}

describe("people see summaries and labels, not the model's text", () => {
    before(async () => {
        env = freshEnv("people");
        const script = path.join(env.dir, "chat.script");
        fs.writeFileSync(script, [...turnScript("panel turn"), ...turnScript("participant turn")].join("\n"));
        stub.settings["switchboard.path"] = env.bin.switchboard;
        stub.settings["switchboard.servers"] = {
            mcptest: { command: env.bin.mcptest },
            broken: { command: env.bin.mcptest, args: ["--exit-at-start"] },
        };
        stub.settings["switchboard.provider"] = { type: "script", script };
        vscode.chat = {
            createChatParticipant(_id: string, h: typeof handler) {
                handler = h;
                return { dispose() {} };
            },
        };
        stub.script.message = () => undefined; // approval prompts dismissed: answered below
        ext = loadExtension();
        api = ext.activate(fakeContext());
        assert.equal(await api.started, true);
        await waitFor("servers settled", () => ["mcptest", "broken"].every((n) => api.sb.servers.some((s: any) => s.name === n && s.state !== "starting")));
    });

    after(async () => {
        await ext?.deactivate();
        if (env) await waitFor("no processes left", () => processesUnder(env.dir).length === 0, 10000);
        stub.script.quickPick = () => undefined;
        stub.script.createInputBox = (box: any) => box.hide();
    });

    test("Call Tool... shows the denial's summary, not the model's text", async () => {
        stub.script.quickPick = (items: any[]) => items.find((i) => i.tool?.name === "mcp__mcptest__echo");
        stub.script.createInputBox = (box: any) => {
            box._type("hi");
            box._accept();
        };
        const pending = waitFor("the approval", () => [...api.sb.pending.values()].find((a: any) => a.tool === "mcp__mcptest__echo"));
        const call = vscode.commands.executeCommand(ui.callTool) as Promise<ToolResult>;
        const a: any = await pending;
        await api.sb.exec("switchboard.approve", { id: a.id, decision: "deny" });
        const result = await call;
        assert.equal(result.isError, true);
        assert.match(result.text, /Do not retry/, "the model's text is unchanged");
        assert.equal(result.summary, "You denied mcp__mcptest__echo.");
        const doc = stub.log.filter((e: any) => e.fn === "openTextDocument").pop();
        assert.match(doc.content, /- Result: You denied mcp__mcptest__echo\./);
        assert.doesNotMatch(doc.content, modelWords);
    });

    test("the chat view shows the label and the summaries", async () => {
        await vscode.commands.executeCommand(ui.openChat);
        const panel = stub.webviewPanels[stub.webviewPanels.length - 1];
        panel._send({ type: "send", text: "panel turn" });
        const waiting = await waitFor("waiting", () => {
            const c = panel.posted[panel.posted.length - 1]?.turns[0]?.tools[0];
            return c?.approval === "waiting" && c.approvalId ? c : undefined;
        });
        panel._send({ type: "approve", id: waiting.approvalId, decision: "deny" });
        const final = await waitFor("turn done", () => {
            const s = panel.posted[panel.posted.length - 1];
            return s && !s.busy && s.turns[0]?.state !== "running" ? s.turns[0] : undefined;
        });
        assert.equal(final.state, "done", JSON.stringify(final));
        const [denied, broken] = final.tools;
        assert.equal(denied.status, "denied by you");
        assert.equal(denied.result.shown, "You denied mcp__mcptest__echo.");
        assert.match(denied.result.text, /Do not retry/, "the model's text is kept, not shown");
        assert.equal(broken.status, "not run");
        assert.match(broken.result.shown, /^Server 'broken' is not running \(.+\); reconnect it\.$/);
        assert.doesNotMatch(denied.result.shown + broken.result.shown + denied.status + broken.status, modelWords);
        // The webview renders result.shown (and status), never result.text.
        assert.match(panel.webview.html, /c\.result\.shown/);
        assert.doesNotMatch(panel.webview.html, /c\.result\.text/);
    });

    test("@switchboard shows the label and the summaries", async () => {
        const stream = new Stream();
        const token = new vscode.CancellationTokenSource().token;
        const running = handler({ prompt: "participant turn" }, { history: [] }, stream, token);
        const button = await waitFor("approve button", () => stream.parts.find((p) => p.kind === "button"));
        stub.script.quickPick = (items: any[]) => items.find((i) => i.decision === "deny");
        assert.equal(await vscode.commands.executeCommand(button.value.command, ...button.value.arguments), "deny");
        const result = await running;
        assert.equal(result.errorDetails, undefined, JSON.stringify(result));
        const text = stream.text();
        assert.match(text, /`mcp__mcptest__echo`: denied by you · error — You denied mcp__mcptest__echo\./);
        assert.match(text, /`mcp__broken__echo`: not run · error — Server 'broken' is not running \(.+\); reconnect it\./);
        assert.doesNotMatch(text, modelWords);
    });
});
