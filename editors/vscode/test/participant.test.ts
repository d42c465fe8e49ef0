// The @switchboard chat participant (where VS Code has the chat API), driven like VS Code's chat
// view would: request, history, response stream, cancellation. Real binary, script provider.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { chatParticipantId, ui } from "../src/ids";
import { fakeContext, freshEnv, loadExtension, processesUnder, stub, vscode, waitFor, type Env } from "./harness";

let env: Env;
let ext: ReturnType<typeof loadExtension>;
let handler: (...a: any[]) => Promise<any>;
let participant: any;
let api: any;

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

describe("@switchboard chat participant", () => {
    before(async () => {
        env = freshEnv("participant");
        const script = path.join(env.dir, "chat.script");
        fs.writeFileSync(
            script,
            [
                'expect last_user ~ "first"',
                'reply text "One moment."',
                'reply tool_call id=c1 name=mcp__mcptest__echo args={"text":"ping"}',
                "",
                'expect last_tool_result id=c1 ~ "ping"',
                'reply text "Got ping."',
                "",
                'expect last_user ~ "second"',
                'reply text "Still here."',
                "",
                'expect last_user ~ "wait forever"',
                "reply hang",
                "",
            ].join("\n"),
        );
        stub.settings["switchboard.path"] = env.bin.switchboard;
        // 25 more tools: over the host's warning threshold (session.WarnTools = 20).
        stub.settings["switchboard.servers"] = { mcptest: { command: env.bin.mcptest }, many: { command: env.bin.mcptest, args: ["--tools", "25"] } };
        stub.settings["switchboard.provider"] = { type: "script", script };
        // With tool search on (46 tools > the default threshold 40) the model gets a few tools and
        // there is nothing to warn about: turn it off (a negative threshold) to send them all.
        stub.settings["switchboard.toolSearchThreshold"] = -1;
        vscode.chat = {
            createChatParticipant(id: string, h: typeof handler) {
                handler = h;
                participant = { id, dispose() {} };
                return participant;
            },
        };
        stub.script.message = () => undefined; // the approval prompt is dismissed: answered from the chat
        ext = loadExtension();
        api = ext.activate(fakeContext());
        assert.equal(await api.started, true);
        await waitFor("servers ready", () => ["mcptest", "many"].every((n) => api.sb.servers.some((s: any) => s.name === n && s.state === "ready")));
    });

    after(async () => {
        await ext?.deactivate();
        if (env) await waitFor("no processes left", () => processesUnder(env.dir).length === 0, 10000);
    });

    test("registers @switchboard and streams a turn with its tool call", async () => {
        assert.equal(participant.id, chatParticipantId);
        const stream = new Stream();
        const token = new vscode.CancellationTokenSource().token;
        const running = handler({ prompt: "first" }, { history: [] }, stream, token);
        // The waiting tool call shows an Approve button for that approval.
        const button = await waitFor("approve button", () => stream.parts.find((p) => p.kind === "button"));
        assert.equal(button.value.command, ui.approvePending);
        assert.match(stream.text(), /`mcp__mcptest__echo` \{"text":"ping"\} is waiting for approval/);
        stub.script.quickPick = (items: any[]) => items.find((i) => i.decision === "once");
        assert.equal(await vscode.commands.executeCommand(button.value.command, ...button.value.arguments), "once");
        const result = await running;
        assert.equal(result.errorDetails, undefined, JSON.stringify(result));
        assert.ok(result.metadata.conversation);
        const prose = stream.parts.filter((p) => p.kind === "markdown" && !p.value.startsWith("\n\n`")).map((p) => p.value);
        assert.equal(prose.join(""), "One moment.Got ping.");
        assert.match(stream.text(), /`mcp__mcptest__echo`: allowed once by you · done/);

        // The next request continues the same conversation (taken from the history's metadata).
        const history = [new vscode.ChatRequestTurn("first", chatParticipantId), new vscode.ChatResponseTurn([], result, chatParticipantId)];
        const s2 = new Stream();
        const r2 = await handler({ prompt: "second" }, { history }, s2, token);
        assert.equal(r2.metadata.conversation, result.metadata.conversation);
        assert.equal(s2.text(), "Still here.");
    });

    test("the too-many-tools warning shows once per session, non-modal, with a way to act", async () => {
        const toasts = () => stub.log.filter((e: any) => e.fn === "showMessage" && /tools to the model/.test(e.message));
        // The turns above sent more than 20 tools: the host warned.
        const first = await waitFor("the warning", () => toasts()[0]);
        assert.equal(first.severity, "warning");
        assert.equal(first.modal, false);
        assert.deepEqual(first.items, ["Show Servers"]);
        // Later warnings of this session (another count) go to the log only.
        const again = first.message.replace(/sends \d+ tools/, "sends 31 tools");
        await api.sb.hostMessage({ type: 2, message: again });
        assert.equal(toasts().length, 1, "one toast per session");
        const log = stub.outputChannels.find((c: any) => c.name === "Switchboard").lines.join("\n");
        assert.match(log, /sends 31 tools to the model/);
    });

    test("cancelling the request cancels the turn", async () => {
        const cts = new vscode.CancellationTokenSource();
        const stream = new Stream();
        const pending = handler({ prompt: "wait forever" }, { history: [] }, stream, cts.token);
        await waitFor("turn running", () => api.chat.activeTurns().length === 1);
        cts.cancel();
        const result = await pending;
        assert.equal(result.errorDetails, undefined);
        // The host records a command once it has run, and the turn's end can reach the editor
        // first: wait for the record rather than read the file once.
        await waitFor("the host's record of switchboard.cancel", () => /switchboard\.cancel/.test(fs.readFileSync(env.events, "utf8")));
    });
});
