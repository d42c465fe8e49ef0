// Questions from MCP servers (elicitation forms): the real bundled extension and languageclient,
// the real `switchboard serve`, and `mcptest --elicit`, whose tool `ask` asks the client a form
// and returns what it received. The stand-in quick inputs are driven like a user would: type,
// pick, press Enter, Escape, the Back and Decline buttons; the reminder of a dismissed question (a
// notification) is answered with its buttons.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as form from "../src/elicit_form";
import { ui } from "../src/ids";
import { Cmd, type ElicitField, type Elicitation, type ToolResult } from "../src/lsp_types";
import { fakeContext, freshEnv, loadExtension, processesUnder, stub, vscode, waitFor, type Env } from "./harness";
import { vectors } from "./elicit_vectors";
import { questionItem } from "../src/elicit";

let env: Env;
let ext: ReturnType<typeof loadExtension>;
let api: any;

// ---- driving the stand-in quick inputs ----

type Widget = any;
type Step = (w: Widget) => void | Promise<void>;
/** Steps for the next widgets that open, in order; a widget with no step left stays open. */
let steps: Step[] = [];
/** Every widget that opened, in order. */
const opened: Widget[] = [];
const stepErrors: unknown[] = [];

function drive(w: Widget): void {
    opened.push(w);
    const step = steps.shift();
    if (!step) return;
    Promise.resolve()
        .then(() => step(w))
        .catch(async (err: unknown) => {
            stepErrors.push(err);
            w.hide();
            // Hiding is no answer: end the questions, so that the test fails now and not at a timeout.
            for (const id of [...api.sb.questions.keys()]) await api.sb.exec(Cmd.elicit, { id, action: "cancel" }).catch(() => undefined);
        });
}

const type =
    (text: string, check?: (w: Widget) => void): Step =>
    (w) => {
        assert.equal(w.kind, "inputBox", `expected an input box, got ${w.kind} "${w.placeholder}"`);
        check?.(w);
        w._type(text);
        w._accept();
    };
const pick =
    (label: string, check?: (w: Widget) => void): Step =>
    (w) => {
        assert.equal(w.kind, "quickPick");
        check?.(w);
        const item = w.items.find((i: any) => i.label === label);
        assert.ok(item, `no item ${label} in ${w.items.map((i: any) => i.label).join(", ")}`);
        w._accept(item);
    };
const escape: Step = (w) => w.hide();
const press = (tooltip: string): Step => (w) => {
    const b = w.buttons.find((x: any) => x.tooltip === tooltip);
    assert.ok(b, `no ${tooltip} button`);
    w._press(b);
};

// ---- the reminder of a dismissed question: a notification with buttons ----

interface Reminder {
    message: string;
    items: string[];
    severity: string;
    modal: boolean;
    answered: boolean;
    /** Clicks a button (undefined: closes the notification). */
    choose(button: string | undefined): void;
}
/** Every reminder shown (in this test), in order; each waits until the test chooses. */
let reminders: Reminder[] = [];
const reminderRe = /is waiting for your answer/;

function scriptReminders(msg: string, items: unknown[], severity: string, options: { modal?: boolean }): unknown {
    if (!reminderRe.test(msg)) return undefined;
    return new Promise((resolve) => {
        const r: Reminder = {
            message: msg,
            items: items.map((i) => (typeof i === "string" ? i : (i as { title: string }).title)),
            severity,
            modal: options?.modal === true,
            answered: false,
            choose(button) {
                assert.equal(r.answered, false, "a reminder is answered once");
                r.answered = true;
                resolve(button === undefined ? undefined : items.find((i) => i === button || (i as { title?: string }).title === button));
            },
        };
        reminders.push(r);
    });
}

/** Waits until n reminders have been shown, and returns the last. */
function nthReminder(n: number): Promise<Reminder> {
    return waitFor(`reminder ${n}`, () => reminders.length >= n && reminders[n - 1]);
}

/** Waits until n widgets have opened, and returns the last. */
function nthWidget(n: number): Promise<Widget> {
    return waitFor(`widget ${n} to open`, () => opened.length >= n && opened[n - 1]);
}

function within<T>(p: Promise<T>, what: string, ms = 20000): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const t = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    });
    return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

interface Answer {
    action: string;
    content?: Record<string, unknown> | null;
}

async function ask(args: Record<string, unknown> = {}): Promise<Answer> {
    const r = (await vscode.commands.executeCommand(Cmd.callTool, { name: "mcp__asker__ask", arguments: args, mode: "always-allow" })) as ToolResult;
    assert.equal(r.isError, false, r.text);
    return JSON.parse(r.text) as Answer;
}

function statusText(): string {
    return stub.statusBarItems.find((i: { id: string }) => i.id === "switchboard.status").text;
}

function messages(re: RegExp): { message: string }[] {
    return stub.log.filter((e: { fn: string; message?: string }) => e.fn === "showMessage" && re.test(e.message ?? ""));
}

async function oneQuestion(): Promise<Elicitation> {
    return waitFor("one pending question", () => api.sb.questions.size === 1 && ([...api.sb.questions.values()][0] as Elicitation));
}

describe("questions from MCP servers (elicitation forms)", () => {
    before(async () => {
        env = freshEnv("elicit");
        stub.settings["switchboard.path"] = env.bin.switchboard;
        stub.settings["switchboard.servers"] = { asker: { command: env.bin.mcptest, args: ["--elicit"] } };
        stub.settings["switchboard.approvalTimeoutSeconds"] = 60;
        stub.script.createInputBox = drive;
        stub.script.createQuickPick = drive;
        stub.script.message = scriptReminders;
        ext = loadExtension();
        api = ext.activate(fakeContext());
        assert.equal(await api.started, true, "the host started");
        await waitFor("asker ready", () => api.sb.servers.some((s: any) => s.name === "asker" && s.state === "ready"));
    });

    after(async () => {
        await ext?.deactivate();
        if (env) await waitFor("no processes left", () => processesUnder(env.dir).length === 0, 10000);
    });

    const begin = (): void => {
        steps = [];
        opened.length = 0;
        stepErrors.length = 0;
        reminders = [];
    };
    const end = async (): Promise<void> => {
        assert.deepEqual(stepErrors, []);
        assert.equal(steps.length, 0, "every scripted step ran");
        // The server can have its answer (and the test its tool result) before the extension has
        // the host's reply to switchboard.elicit and switchboard/elicitationResolved: wait for both.
        await waitFor("no question left pending", () => api.sb.questions.size === 0);
        await waitFor("no quick input left open", () => stub.activeInput === undefined);
        assert.deepEqual(
            reminders.filter((r) => !r.answered).map((r) => r.message),
            [],
            "every reminder was answered",
        );
        assert.equal(api.questions.kept, 0, "no typed values kept for ended questions");
    };

    test("a form is asked at once, field by field, and the server gets the values with their types", async () => {
        begin();
        const seen: Record<string, any> = {};
        steps = [
            (w) => {
                seen.name = { title: w.title, step: w.step, total: w.totalSteps, buttons: w.buttons.map((b: any) => b.tooltip), prompt: w.prompt };
                seen.statusWhileAsking = statusText();
                assert.equal(w.kind, "inputBox");
                assert.equal(w.ignoreFocusOut, true, "clicking elsewhere does not cancel");
                w._type("");
                w._accept(); // required: refused inline, the box stays
                seen.emptyMessage = w.validationMessage;
                assert.equal(w._visible, true);
                w._type("Ada Lovelace");
                assert.equal(w.validationMessage, undefined);
                w._accept();
            },
            (w) => {
                seen.count = { value: w.value, placeholder: w.placeholder, step: w.step, buttons: w.buttons.map((b: any) => b.tooltip) };
                w._type("11");
                seen.tooBig = w.validationMessage;
                w._type("2.5");
                seen.fraction = w.validationMessage;
                w._accept();
                assert.equal(w._visible, true, "an invalid number is not taken");
                w._type("7");
                w._accept();
            },
            pick("green", (w) => {
                seen.colors = w.items.map((i: any) => i.label);
                seen.colorActive = w.activeItems.map((i: any) => i.label);
            }),
            pick("Yes", (w) => {
                seen.agree = w.items.map((i: any) => i.label);
            }),
        ];
        const answer = await within(ask(), "the ask tool");
        assert.deepEqual(answer, { action: "accept", content: { name: "Ada Lovelace", count: 7, color: "green", agree: true } });
        assert.equal(typeof answer.content?.count, "number");
        assert.deepEqual(seen.name, {
            title: "asker: Tell me about yourself.",
            step: 1,
            total: 4,
            buttons: ["Decline"],
            prompt: "Your name",
        });
        assert.match(seen.statusWhileAsking, /\$\(question\) 1 question$/, "the status bar counts the question");
        assert.match(seen.emptyMessage, /required/);
        assert.deepEqual(seen.count, { value: "3", placeholder: "a whole number from 1 to 10, empty to skip", step: 2, buttons: ["Back", "Decline"] });
        assert.match(seen.tooBig, /at most 10/);
        assert.match(seen.fraction, /whole number/);
        assert.deepEqual(seen.colors, ["red", "green", "blue", "(skip)"]);
        assert.deepEqual(seen.colorActive, ["(skip)"], "an optional choice without default starts on (skip)");
        assert.deepEqual(seen.agree, ["Yes", "No"], "a required yes/no cannot be skipped");
        await waitFor("status without the question", () => !statusText().includes("$(question)"));
        await end();
    });

    test("Back keeps what was typed; optional fields can be skipped", async () => {
        begin();
        let backTo: string | undefined;
        steps = [
            type("Bob"),
            press("Back"),
            (w) => {
                backTo = w.value;
                w._accept();
            },
            type(""), // count: optional, empty skips
            pick("(skip)"),
            pick("No"),
        ];
        const answer = await within(ask(), "the ask tool");
        assert.equal(backTo, "Bob");
        assert.deepEqual(answer, { action: "accept", content: { name: "Bob", agree: false } });
        await end();
    });

    test("the Decline button declines", async () => {
        begin();
        steps = [type("Carol"), press("Decline")];
        const declined = await within(ask(), "ask, declined");
        assert.equal(declined.action, "decline");
        assert.ok(!declined.content, "no content with decline");
        assert.deepEqual(reminders, [], "no reminder");
        await end();
    });

    test("Escape is no answer: the question stays pending, and the reminder's Answer opens it again with what was typed", async () => {
        begin();
        const seen: Record<string, any> = {};
        steps = [
            type("Eve"),
            (w) => {
                w._type("8"); // typed, no Enter
                w.hide(); // Escape
            },
        ];
        const call = ask();
        const r1 = await nthReminder(1);
        assert.equal(r1.message, "Switchboard: MCP server 'asker' is waiting for your answer.");
        assert.deepEqual(r1.items, ["Answer", "Decline", "Cancel"]);
        assert.equal(r1.severity, "warning");
        assert.equal(r1.modal, false, "a notification, not a modal dialog");
        // Nothing was sent: the host still lists the question, the status bar counts it, no form is open.
        const q = await oneQuestion();
        const listed = (await vscode.commands.executeCommand(Cmd.elicitations)) as Elicitation[];
        assert.deepEqual(
            listed.map((e) => e.id),
            [q.id],
        );
        assert.match(statusText(), /\$\(question\) 1 question$/);
        assert.equal(stub.activeInput, undefined);
        assert.equal(opened.length, 2, "the dismissed form does not open again by itself");
        assert.equal(api.questions.kept, 1);

        // Opened from Answer Server Questions... (with the id): at the step it was on, with the text
        // typed. Dismissed again while the first reminder is shown: no second reminder.
        steps = [
            (w) => {
                seen.reopened = { kind: w.kind, step: w.step, value: w.value, title: w.title };
                w._type("9");
                w.hide();
            },
        ];
        const outcome = await within(Promise.resolve(vscode.commands.executeCommand(ui.elicitations, q.id)), "the command");
        assert.equal(outcome, "dismissed");
        assert.deepEqual(seen.reopened, { kind: "inputBox", step: 2, value: "8", title: "asker: Tell me about yourself." });
        assert.equal(reminders.length, 1, "one reminder per question at a time");

        // Answer: the form again, with "9". Dismissed once more: a new reminder, the first being gone.
        steps = [
            (w) => {
                seen.answered = { step: w.step, value: w.value };
                w.hide();
            },
        ];
        r1.choose("Answer");
        const r2 = await nthReminder(2);
        assert.deepEqual(seen.answered, { step: 2, value: "9" });
        assert.equal(api.sb.questions.size, 1, "still pending");

        // Answer: Enter takes the "9"; Back twice to the first step (the name kept); on to the end.
        steps = [
            (w) => {
                seen.count = w.value;
                w._accept();
            },
            press("Back"),
            press("Back"),
            (w) => {
                seen.name = w.value;
                w._accept();
            },
            (w) => {
                seen.countAgain = w.value;
                w._accept();
            },
            pick("green"),
            pick("Yes"),
        ];
        r2.choose("Answer");
        const answer = await within(call, "the ask tool");
        assert.deepEqual(answer, { action: "accept", content: { name: "Eve", count: 9, color: "green", agree: true } });
        assert.equal(seen.count, "9");
        assert.equal(seen.name, "Eve");
        assert.equal(seen.countAgain, "9");
        assert.equal(reminders.length, 2);
        await end();
    });

    test("a dismissed list of several choices keeps the choices ticked", async () => {
        begin();
        const schema = {
            type: "object",
            properties: { tags: { type: "array", items: { type: "string", enum: ["a", "b", "c"] }, minItems: 1 } },
            required: ["tags"],
        };
        let ticked: string[] = [];
        steps = [
            (w) => {
                assert.equal(w.canSelectMany, true);
                w.selectedItems = w.items.filter((i: any) => i.label !== "b"); // ticked, no Enter
                w.hide();
            },
        ];
        const call = ask({ message: "Tags?", schema: JSON.stringify(schema) });
        const r = await nthReminder(1);
        steps = [
            (w) => {
                ticked = w.selectedItems.map((i: any) => i.label);
                w._acceptMany(w.selectedItems);
            },
        ];
        r.choose("Answer");
        assert.deepEqual(await within(call, "the ask tool"), { action: "accept", content: { tags: ["a", "c"] } });
        assert.deepEqual(ticked, ["a", "c"]);
        await end();
    });

    test("the reminder's Cancel and Decline answer the server; a question that ended meanwhile is told", async () => {
        begin();
        steps = [type("Fay"), escape];
        const cancelCall = ask();
        (await nthReminder(1)).choose("Cancel");
        const cancelled = await within(cancelCall, "ask, cancelled");
        assert.equal(cancelled.action, "cancel");
        assert.ok(!cancelled.content);
        assert.equal(opened.length, 2, "no form opened again");
        await end();

        begin();
        steps = [escape];
        const declineCall = ask();
        (await nthReminder(1)).choose("Decline");
        const declined = await within(declineCall, "ask, declined");
        assert.equal(declined.action, "decline");
        assert.ok(!declined.content);
        await end();

        // Closing the reminder leaves the question pending; answered elsewhere, the next reminder's
        // button finds it ended.
        begin();
        steps = [escape];
        const call = ask();
        const q = await oneQuestion();
        (await nthReminder(1)).choose(undefined);
        steps = [escape];
        assert.equal(await within(Promise.resolve(vscode.commands.executeCommand(ui.elicitations, q.id)), "the command"), "dismissed");
        const r = await nthReminder(2);
        assert.equal(api.sb.questions.size, 1, "closing the reminder left the question pending");
        await api.sb.exec(Cmd.elicit, { id: q.id, action: "decline" });
        assert.equal((await within(call, "the ask tool")).action, "decline");
        r.choose("Cancel");
        await waitFor("told the user", () => messages(/the question from MCP server 'asker' had already ended/).length === 1);
        await end();
    });

    test("every field type, formats and several choices (a schema from the server)", async () => {
        begin();
        const schema = {
            type: "object",
            properties: {
                email: { type: "string", format: "email", description: "where we write to" },
                ratio: { type: "number", minimum: 0, maximum: 1 },
                size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }], default: "l" },
                tags: { type: "array", items: { type: "string", enum: ["a", "b", "c"] }, minItems: 1, maxItems: 2, default: ["b"] },
            },
            required: ["email", "tags"],
        };
        const seen: Record<string, any> = {};
        steps = [
            (w) => {
                seen.prompt = w.prompt;
                w._type("not an address");
                seen.bad = w.validationMessage;
                w._accept();
                assert.equal(w._visible, true);
                w._type("ada@example.com");
                w._accept();
            },
            type(" 0.25 "),
            (w) => {
                seen.sizes = w.items.map((i: any) => `${i.label}=${i.description ?? ""}`);
                seen.sizeActive = w.activeItems.map((i: any) => i.label);
                w._accept(w.activeItems[0]); // Enter on the default
            },
            (w) => {
                assert.equal(w.canSelectMany, true);
                seen.preselected = w.selectedItems.map((i: any) => i.label);
                w._acceptMany(w.items);
                seen.tooMany = w.placeholder;
                assert.equal(w._visible, true, "three of at most two are not taken");
                w._acceptMany(w.items.filter((i: any) => i.label !== "b"));
            },
        ];
        const answer = await within(ask({ message: "Details, please", schema: JSON.stringify(schema) }), "the ask tool");
        assert.deepEqual(answer, { action: "accept", content: { email: "ada@example.com", ratio: 0.25, size: "l", tags: ["a", "c"] } });
        assert.equal(seen.prompt, "email: where we write to");
        assert.match(seen.bad, /email address/);
        assert.deepEqual(seen.sizes, ["Small=s", "Large=l", "(skip)=leave it empty"]);
        assert.deepEqual(seen.sizeActive, ["Large"]);
        assert.deepEqual(seen.preselected, ["b"]);
        assert.match(seen.tooMany, /at most 2 choices/);
        await end();
    });

    test("a server's question cannot draw VS Code's icons in the pick of questions", () => {
        const e = { id: "q", server: "x", message: "$(pass) verified by your administrator", fields: [], requestedAt: "" } as unknown as Elicitation;
        assert.equal(questionItem(e).detail, "\\$(pass) verified by your administrator");
    });

    test("a form without fields asks to accept or decline", async () => {
        begin();
        steps = [pick("$(check) Accept", (w) => assert.equal(w.placeholder, "Go ahead?"))];
        const answer = await within(ask({ message: "Go ahead?", schema: JSON.stringify({ type: "object", properties: {} }) }), "the ask tool");
        assert.equal(answer.action, "accept");
        await end();
    });

    test("a refusal by the host is shown and asked again, with the values kept", async () => {
        begin();
        // Stands for a rule the client misses: the first accept goes out with count 99.
        const sent: any[] = [];
        const origExec = api.sb.exec;
        api.sb.exec = (cmd: string, params: any, token: unknown) => {
            if (cmd === Cmd.elicit) {
                sent.push(structuredClone(params));
                if (sent.length === 1) params = { ...params, content: { ...params.content, count: 99 } };
            }
            return origExec.call(api.sb, cmd, params, token);
        };
        const again: Record<string, any> = {};
        try {
            steps = [
                type("Dora"),
                type("4"),
                pick("blue"),
                pick("Yes"),
                // Asked again from the refused field, its message shown, the values kept.
                (w) => {
                    again.count = { kind: w.kind, value: w.value, message: w.validationMessage, step: w.step };
                    w._accept();
                },
                (w) => {
                    again.color = w.activeItems.map((i: any) => i.label);
                    w._accept(w.activeItems[0]);
                },
                (w) => {
                    again.agree = w.activeItems.map((i: any) => i.label);
                    w._accept(w.activeItems[0]);
                },
            ];
            const answer = await within(ask(), "the ask tool");
            assert.deepEqual(answer, { action: "accept", content: { name: "Dora", count: 4, color: "blue", agree: true } });
        } finally {
            api.sb.exec = origExec;
        }
        assert.equal(sent.length, 2);
        assert.deepEqual(again.count.kind, "inputBox");
        assert.equal(again.count.value, "4", "what the user typed, not what went out");
        assert.equal(again.count.step, 2);
        assert.match(again.count.message, /"count" \(How many\): must be at most 10/);
        assert.deepEqual(again.color, ["blue"]);
        assert.deepEqual(again.agree, ["Yes"]);
        await end();
    });

    test("the client's rules agree with the host's (answers sent straight to the host)", async () => {
        begin();
        // Every field of the shared vectors (mcpbridge/testdata/elicit_vectors.json), and a last
        // field always sent wrong: a refusal that names it means the field under test passed.
        const schema = {
            type: "object",
            properties: { ...Object.fromEntries(vectors.fields.map((v) => [v.name, v.property])), end: { type: "boolean" } },
            required: ["email"],
        };
        const call = ask({ message: "Parity", schema: JSON.stringify(schema) });
        const q = await oneQuestion();
        await nthWidget(1); // the form is open meanwhile
        const fields: ElicitField[] = q.fields;
        assert.deepEqual(
            fields.map((f) => f.name),
            Object.keys(schema.properties),
        );
        const cases: [string, unknown][] = vectors.fields.flatMap((v) => [...v.accept, ...v.reject].map((x): [string, unknown] => [v.name, x]));
        const verdicts = new Map<string, Set<boolean>>();
        for (const [name, value] of cases) {
            const content: Record<string, unknown> = { email: "ada@example.com", [name]: value, end: "sentinel" };
            let hostRefused: string;
            try {
                await api.sb.exec(Cmd.elicit, { id: q.id, action: "accept", content });
                assert.fail(`the host took ${JSON.stringify(content)}`);
            } catch (err: any) {
                assert.equal(err.code, -32602, String(err.message));
                hostRefused = form.refusedField(fields, err.message) ?? "";
            }
            const hostOk = hostRefused === "end";
            if (!hostOk) assert.equal(hostRefused, name, `the host refused another field than ${name}`);
            const field = fields.find((f) => f.name === name) as ElicitField;
            const clientProblem = form.checkValue(field, value);
            assert.equal(clientProblem === undefined, hostOk, `${name} = ${JSON.stringify(value)}: host ${hostOk ? "takes" : "refuses"} it, client says ${clientProblem ?? "fine"}`);
            const seen = verdicts.get(name) ?? new Set<boolean>();
            seen.add(hostOk);
            verdicts.set(name, seen);
        }
        for (const [name, seen] of verdicts) assert.equal(seen.size, 2, `${name}: cases on both sides`);
        // Missing required, unknown field, content with decline: refused, the question stays.
        await assert.rejects(api.sb.exec(Cmd.elicit, { id: q.id, action: "accept", content: {} }), /"email" is required/);
        assert.equal(form.checkContent(fields, {})?.field, "email");
        await assert.rejects(api.sb.exec(Cmd.elicit, { id: q.id, action: "accept", content: { email: "ada@example.com", zz: 1 } }), /"zz" is not a field/);
        assert.equal(form.checkContent(fields, { email: "ada@example.com", zz: 1 })?.field, "zz");
        await assert.rejects(api.sb.exec(Cmd.elicit, { id: q.id, action: "decline", content: { email: "x" } }), /only with accept/);
        assert.equal(api.sb.questions.size, 1);
        assert.equal(opened[0]._visible, true, "refusals sent from elsewhere leave the form open");

        // Answered from elsewhere: the open form closes without sending anything itself.
        const sent: unknown[] = [];
        const origExec = api.sb.exec;
        api.sb.exec = (cmd: string, params: unknown, token: unknown) => {
            if (cmd === Cmd.elicit) sent.push(params);
            return origExec.call(api.sb, cmd, params, token);
        };
        try {
            await origExec.call(api.sb, Cmd.elicit, { id: q.id, action: "accept", content: { email: "grace@example.com", n: 3 } });
            const answer = await within(call, "the ask tool");
            assert.deepEqual(answer, { action: "accept", content: { email: "grace@example.com", n: 3 } });
            await waitFor("the form closed", () => !opened[opened.length - 1]._visible);
            await waitFor("told the user", () => messages(/question from MCP server 'asker' was answered elsewhere/).length === 1);
        } finally {
            api.sb.exec = origExec;
        }
        assert.deepEqual(sent, [], "the closed form sent no answer");
        await end();
    });

    test("a question that times out closes its form", async () => {
        begin();
        await vscode.workspace.getConfiguration("switchboard").update("approvalTimeoutSeconds", 1);
        try {
            const call = ask({ message: "Quick!" });
            const w = await nthWidget(1);
            assert.equal(w.title, "asker: Quick!");
            await waitFor("the form closed", () => !w._visible, 15000);
            const answer = await within(call, "the ask tool");
            assert.equal(answer.action, "cancel");
            await waitFor("told the user", () => messages(/question from MCP server 'asker' timed out/).length === 1);
        } finally {
            await vscode.workspace.getConfiguration("switchboard").update("approvalTimeoutSeconds", 60);
        }
        await end();
    });

    test("several questions wait in a queue and are asked one at a time", async () => {
        begin();
        const boolSchema = JSON.stringify({ type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] });
        const first = ask({ message: "first?", schema: boolSchema });
        const w1 = await nthWidget(1);
        assert.equal(w1.title, "asker: first?");
        const second = ask({ message: "second?", schema: boolSchema });
        await waitFor("two questions pending", () => api.sb.questions.size === 2);
        await waitFor("status counts both", () => statusText().endsWith("$(question) 2 questions"));
        assert.equal(opened.length, 1, "the second waits while the first is on screen");
        steps = [pick("No", (w) => assert.equal(w.title, "asker: second?"))];
        w1._accept(w1.items.find((i: any) => i.label === "Yes"));
        assert.deepEqual(await within(first, "first"), { action: "accept", content: { ok: true } });
        assert.deepEqual(await within(second, "second"), { action: "accept", content: { ok: false } });
        await end();
    });

    test("after Escape the next question is asked; the dismissed one waits for the user", async () => {
        begin();
        const boolSchema = JSON.stringify({ type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] });
        const first = ask({ message: "first?", schema: boolSchema });
        const w1 = await nthWidget(1);
        const second = ask({ message: "second?", schema: boolSchema });
        await waitFor("two questions pending", () => api.sb.questions.size === 2);
        steps = [pick("Yes", (w) => assert.equal(w.title, "asker: second?"))];
        w1.hide(); // Escape
        assert.deepEqual(await within(second, "second"), { action: "accept", content: { ok: true } });
        const r = await nthReminder(1);
        assert.equal(opened.length, 2, "the dismissed question is not asked again by itself");
        assert.equal(api.sb.questions.size, 1);
        steps = [pick("No", (w) => assert.equal(w.title, "asker: first?"))];
        r.choose("Answer");
        assert.deepEqual(await within(first, "first"), { action: "accept", content: { ok: false } });
        await end();
    });

    test("Answer Server Questions... lists the questions and opens the picked one", async () => {
        begin();
        const boolSchema = JSON.stringify({ type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] });
        const first = ask({ message: "first?", schema: boolSchema });
        const w1 = await nthWidget(1);
        const second = ask({ message: "second?", schema: boolSchema });
        await waitFor("two questions pending", () => api.sb.questions.size === 2);
        let listed: any[] = [];
        const origQuickPick = stub.script.quickPick;
        stub.script.quickPick = (items: any[]) => {
            listed = items;
            return items.find((i) => i.question?.message === "second?");
        };
        steps = [pick("Yes", (w) => assert.equal(w.title, "asker: second?"))];
        try {
            const outcome = await within(Promise.resolve(vscode.commands.executeCommand(ui.elicitations)), "the command");
            assert.equal(outcome, "accept");
        } finally {
            stub.script.quickPick = origQuickPick;
        }
        assert.deepEqual(
            listed.map((i) => [i.label, i.detail]),
            [
                ["$(question) asker", "first?"],
                ["$(question) asker", "second?"],
            ],
        );
        assert.match(listed[0].description, /^1 field · \d+ s ago$/);
        assert.deepEqual(await within(second, "second"), { action: "accept", content: { ok: true } });
        // As in VS Code, the list took the screen from the first form: dismissed, not answered.
        assert.equal(w1._visible, false);
        const reminder = await nthReminder(1);
        assert.equal(reminder.message, "Switchboard: MCP server 'asker' is waiting for your answer.");
        assert.deepEqual(
            [...api.sb.questions.values()].map((e: Elicitation) => e.message),
            ["first?"],
        );
        assert.equal(opened.length, 2, "the first is not asked again by itself");
        steps = [pick("No", (w) => assert.equal(w.title, "asker: first?"))];
        reminder.choose("Answer");
        assert.deepEqual(await within(first, "first"), { action: "accept", content: { ok: false } });
        await end();

        // The status bar's menu lists them too.
        begin();
        const third = ask({ message: "third?", schema: boolSchema });
        const w3 = await nthWidget(1);
        const fourth = ask({ message: "fourth?", schema: boolSchema });
        await waitFor("two questions pending", () => api.sb.questions.size === 2);
        let menu: any[] = [];
        stub.script.quickPick = (items: any[]) => {
            menu = items;
            return items.find((i) => i.detail === "fourth?");
        };
        steps = [pick("No", (w) => assert.equal(w.title, "asker: fourth?"))];
        try {
            await within(Promise.resolve(vscode.commands.executeCommand(ui.statusMenu)), "the status menu");
        } finally {
            stub.script.quickPick = origQuickPick;
        }
        const labels = menu.map((i) => i.label);
        assert.ok(labels.includes("Questions from MCP servers"), labels.join(" | "));
        assert.deepEqual(await within(fourth, "fourth"), { action: "accept", content: { ok: false } });
        assert.equal(w3._visible, false);
        (await nthReminder(1)).choose("Cancel");
        assert.equal((await within(third, "third")).action, "cancel");
        await end();

        const none = await vscode.commands.executeCommand(ui.elicitations);
        assert.equal(none, undefined);
        await waitFor("nothing to answer", () => messages(/no MCP server is waiting for an answer/).length === 1);
    });
});
