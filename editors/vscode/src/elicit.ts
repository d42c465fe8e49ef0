// Questions from MCP servers (MCP elicitation, form mode). Each question is asked at once as a
// multi-step quick input, one step per field, in the server's order; several questions wait in a
// queue and are asked one at a time. The answer goes back with switchboard.elicit: accept with the
// values, or decline (the Decline button).
//
// Dismissing a form (Escape, or another quick input taking the screen, as the command palette
// does) is not an answer, as with tool approvals: nothing is sent and the question stays pending
// on the host until it is answered or times out. What was entered is kept (per question, in
// Questions) and the form opens again at the step it was on. A reminder notification, one per
// question at a time, offers Answer (the form again), Decline and Cancel; it, the status bar count
// and "Answer Server Questions..." are the ways back. A dismissed question is not opened again by
// itself. A question that ends elsewhere (switchboard/elicitationResolved: answered in another
// way, timed out, withdrawn) closes its form and drops what was kept. The rules of each field are
// in elicit_form.ts.

import * as vscode from "vscode";
import { ErrorCodes } from "vscode-languageclient";
import { errorMessage, type Switchboard } from "./client";
import * as form from "./elicit_form";
import * as ext from "./lsp_types";
import { noIcons } from "./format";

/**
 * How a form ended for this window: the action it sent, "closed" (the question ended elsewhere), or
 * "dismissed" (the form was hidden; the question is still pending).
 */
export type Outcome = ext.ElicitAction | "closed" | "dismissed";

/** What was entered into a question's form, kept while the question is pending. */
interface Draft {
    /** The values taken, by field name (undefined: skipped, or empty). */
    readonly values: Map<string, ext.ElicitValue | undefined>;
    /** What was typed into an input box, or ticked in a list of several choices, without Enter. */
    readonly unsaved: Map<string, string | string[]>;
    /** The step the form was on when it was dismissed. */
    step: number;
}

function newDraft(q: ext.Elicitation): Draft {
    const values = new Map<string, ext.ElicitValue | undefined>();
    for (const f of q.fields) values.set(f.name, form.defaultValue(f));
    return { values, unsaved: new Map(), step: 0 };
}

const titleMax = 120;

/** The buttons of every step. */
export const declineButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("circle-slash"), tooltip: "Decline" };

type StepResult =
    | { kind: "value"; value: ext.ElicitValue }
    | { kind: "skip" }
    | { kind: "back" }
    | { kind: "decline" }
    | { kind: "cancel" }
    | { kind: "dismissed" }
    | { kind: "closed" };

interface ChoiceItem extends vscode.QuickPickItem {
    value?: ext.ElicitValue;
    /** The "(skip)" item of an optional field. */
    skip?: boolean;
}

const skipLabel = "(skip)";

/** Runs one question's form until it is answered, dismissed, or ends elsewhere. */
class Form {
    private current: vscode.QuickInput | undefined;
    private finishStep: ((r: StepResult) => void) | undefined;
    private closedBy: ext.ElicitationResolvedParams | undefined;
    private sending = false;
    private hidden = false;
    /** The question ended while our answer was on its way (the host then refuses the answer). */
    private endedWhileSending: ext.ElicitationResolvedParams | undefined;
    private readonly values: Map<string, ext.ElicitValue | undefined>;

    constructor(
        private readonly sb: Switchboard,
        readonly question: ext.Elicitation,
        private readonly draft: Draft,
    ) {
        this.values = draft.values;
    }

    get id(): string {
        return this.question.id;
    }

    /** The form was hidden without an answer (it is on its way out). */
    get dismissed(): boolean {
        return this.hidden;
    }

    /** Hides the form as another quick input would: the question stays pending, its values kept. */
    dismiss(): void {
        if (this.finishStep) this.current?.hide();
    }

    /** Answers decline or cancel from outside the form (the reminder); false when it cannot now. */
    respond(action: "decline" | "cancel"): boolean {
        const finish = this.finishStep;
        if (!finish || this.closedBy || this.hidden) return false;
        finish({ kind: action });
        return true;
    }

    /** The question ended elsewhere: close what is on screen (not while our own answer is on its way). */
    close(r: ext.ElicitationResolvedParams): void {
        if (this.closedBy) return;
        if (this.sending) {
            this.endedWhileSending ??= r;
            return;
        }
        this.closedBy = r;
        const finish = this.finishStep;
        this.finishStep = undefined;
        finish?.({ kind: "closed" });
        this.current?.hide();
    }

    async run(): Promise<Outcome> {
        try {
            return await this.loop();
        } finally {
            this.current?.dispose();
            this.current = undefined;
        }
    }

    private async loop(): Promise<Outcome> {
        const fields = this.question.fields;
        const steps = Math.max(1, fields.length);
        // A dismissed form opens again at the step it was on.
        let i = Math.min(Math.max(0, this.draft.step), steps - 1);
        let notice: string | undefined;
        for (;;) {
            if (this.closedBy) return this.closed();
            if (i >= steps) {
                const content: Record<string, ext.ElicitValue> = {};
                for (const f of fields) {
                    const v = this.values.get(f.name);
                    if (v !== undefined) content[f.name] = Array.isArray(v) ? [...v] : v;
                }
                const problem = form.checkContent(fields, content);
                if (problem) {
                    // Cannot happen through the steps; ask that field again rather than send it.
                    i = Math.max(0, fields.findIndex((f) => f.name === problem.field));
                    notice = problem.message;
                    continue;
                }
                const refusal = await this.send("accept", content);
                if (refusal === undefined) return this.closedBy ? this.closed() : "accept";
                if (refusal === "gone") return this.closed();
                // The host refused the answer: ask again from the field it names, keeping the values.
                const name = form.refusedField(fields, refusal);
                i = Math.max(0, name === undefined ? 0 : fields.findIndex((f) => f.name === name));
                notice = refusal;
                continue;
            }
            const r = fields.length === 0 ? await this.confirmStep() : await this.fieldStep(i, steps, notice);
            notice = undefined;
            if (r.kind !== "dismissed" && fields.length > 0) this.draft.unsaved.delete(fields[i].name);
            switch (r.kind) {
                case "value":
                    this.values.set(fields[i].name, r.value);
                    i++;
                    break;
                case "skip":
                    if (fields.length > 0) this.values.set(fields[i].name, undefined);
                    i++;
                    break;
                case "back":
                    i = Math.max(0, i - 1);
                    break;
                case "dismissed":
                    // Not an answer: nothing is sent, the question stays pending with what was entered.
                    this.draft.step = i;
                    return "dismissed";
                case "decline":
                case "cancel": {
                    const res = await this.send(r.kind);
                    return res === "gone" ? this.closed() : r.kind;
                }
                case "closed":
                    return this.closed();
            }
        }
    }

    private closed(): Outcome {
        const by = this.closedBy?.by;
        const what =
            by === "timeout"
                ? "timed out"
                : by === "cancelled"
                  ? "was withdrawn"
                  : by === "disconnect"
                    ? "ended: Switchboard stopped"
                    : by === "user"
                      ? "was answered elsewhere"
                      : "has ended";
        void vscode.window.showInformationMessage(`Switchboard: the question from MCP server '${this.question.server}' ${what}.`);
        return "closed";
    }

    /**
     * Sends the answer. Resolves undefined when the host took it, "gone" when the question had
     * already ended, or the host's refusal (the question is still pending).
     */
    private async send(action: ext.ElicitAction, content?: Record<string, ext.ElicitValue>): Promise<string | undefined> {
        const params: ext.ElicitParams = action === "accept" ? { id: this.id, action, content: content ?? {} } : { id: this.id, action };
        const shown = this.current;
        this.sending = true;
        if (shown) {
            shown.busy = true;
            shown.enabled = false;
        }
        try {
            await this.sb.exec(ext.Cmd.elicit, params);
            this.sb.output.info(`answered question ${this.id} of '${this.question.server}': ${action}`);
            return undefined;
        } catch (err) {
            const code = (err as { code?: unknown } | undefined)?.code;
            if (code === ErrorCodes.InvalidParams && action === "accept" && (await this.stillPending())) {
                this.sb.output.warn(`the host refused the answer to question ${this.id}: ${errorMessage(err)}`);
                return hostMessage(errorMessage(err));
            }
            if (code !== ErrorCodes.InvalidParams) {
                this.sb.output.error(`answering question ${this.id}: ${errorMessage(err)}`);
                void vscode.window.showErrorMessage(`Switchboard: could not answer MCP server '${this.question.server}': ${errorMessage(err)}`);
            }
            this.closedBy ??= this.endedWhileSending ?? { id: this.id, action: "cancel", by: "gone" };
            return "gone";
        } finally {
            this.sending = false;
            if (shown) {
                shown.busy = false;
                shown.enabled = true;
            }
        }
    }

    private async stillPending(): Promise<boolean> {
        if (this.closedBy) return false;
        try {
            const list = await this.sb.exec(ext.Cmd.elicitations);
            return Array.isArray(list) && list.some((e) => e.id === this.id);
        } catch {
            return false;
        }
    }

    private title(): string {
        const message = form.clip(this.question.message ?? "", titleMax);
        return message ? `${this.question.server}: ${message}` : `${this.question.server} asks`;
    }

    /** Shows input as step i of steps and waits for its result; onAccept decides what Enter means. */
    private async show<T extends vscode.QuickPick<ChoiceItem> | vscode.InputBox>(
        input: T,
        i: number,
        steps: number,
        onAccept: (finish: (r: StepResult) => void) => void,
    ): Promise<StepResult> {
        input.title = this.title();
        input.step = i + 1;
        input.totalSteps = steps;
        input.ignoreFocusOut = true;
        input.buttons = i > 0 ? [vscode.QuickInputButtons.Back, declineButton] : [declineButton];
        const subs: vscode.Disposable[] = [];
        try {
            return await new Promise<StepResult>((resolve) => {
                let done = false;
                const finish = (r: StepResult): void => {
                    if (done) return;
                    done = true;
                    this.finishStep = undefined;
                    resolve(r);
                };
                this.finishStep = finish;
                subs.push(
                    input.onDidTriggerButton((b) => {
                        if (b === vscode.QuickInputButtons.Back) finish({ kind: "back" });
                        else if (b === declineButton) finish({ kind: "decline" });
                    }),
                    input.onDidAccept(() => onAccept(finish)),
                    input.onDidHide(() => {
                        if (this.closedBy) {
                            finish({ kind: "closed" });
                            return;
                        }
                        // Escape, or another quick input took the screen: not an answer.
                        if (this.finishStep === finish) this.hidden = true;
                        finish({ kind: "dismissed" });
                    }),
                );
                // Showing the next step replaces the previous one without a gap; its listeners are gone.
                const previous = this.current;
                this.current = input;
                input.show();
                previous?.dispose();
                if (this.closedBy) finish({ kind: "closed" });
            });
        } finally {
            for (const s of subs) s.dispose();
        }
    }

    private fieldStep(i: number, steps: number, notice: string | undefined): Promise<StepResult> {
        const f = this.question.fields[i];
        const kind = form.fieldKind(f);
        if (kind === "text" || kind === "number") return this.inputStep(f, i, steps, notice);
        return this.pickStep(f, kind, i, steps, notice);
    }

    private prompt(f: ext.ElicitField): string {
        const label = `${form.fieldLabel(f)}${f.required ? "" : " (optional)"}`;
        return f.description ? `${label}: ${form.clip(f.description, 300)}` : label;
    }

    private inputStep(f: ext.ElicitField, i: number, steps: number, notice: string | undefined): Promise<StepResult> {
        const box = vscode.window.createInputBox();
        const check = (text: string): string | undefined => form.parseText(f, text).problem;
        const typed = this.draft.unsaved.get(f.name);
        box.value = typeof typed === "string" ? typed : form.valueText(this.values.get(f.name));
        box.prompt = this.prompt(f);
        box.placeholder = form.limitsText(f);
        box.validationMessage = notice ?? (typeof typed === "string" ? check(typed) : undefined);
        const sub = box.onDidChangeValue((text) => {
            box.validationMessage = check(text);
        });
        return this.show(box, i, steps, (finish) => {
            const parsed = form.parseText(f, box.value);
            if (parsed.problem) {
                box.validationMessage = parsed.problem;
                return;
            }
            if (parsed.value === undefined) {
                const empty = form.emptyProblem(f);
                if (empty) {
                    box.validationMessage = empty;
                    return;
                }
                finish({ kind: "skip" });
                return;
            }
            finish({ kind: "value", value: parsed.value });
        })
            .then((r) => {
                // Dismissed: what is in the box comes back when the form opens again.
                if (r.kind === "dismissed") this.draft.unsaved.set(f.name, box.value);
                return r;
            })
            .finally(() => {
                sub.dispose();
            });
    }

    private pickStep(f: ext.ElicitField, kind: form.FieldKind, i: number, steps: number, notice: string | undefined): Promise<StepResult> {
        const qp = vscode.window.createQuickPick<ChoiceItem>();
        const current = this.values.get(f.name);
        let items: ChoiceItem[];
        if (kind === "yesno") {
            items = [
                { label: "Yes", value: true },
                { label: "No", value: false },
            ];
        } else {
            const titles = form.choiceTitles(f);
            items = (f.enum ?? []).map((v, k) => ({ label: noIcons(titles[k]), description: titles[k] === v ? undefined : noIcons(v), value: v }));
        }
        const multi = kind === "multi";
        const ticked = this.draft.unsaved.get(f.name);
        if (!f.required && !multi) items.push({ label: skipLabel, description: "leave it empty", skip: true });
        qp.items = items;
        qp.canSelectMany = multi;
        qp.matchOnDescription = true;
        const basePlaceholder = `${this.prompt(f)}${multi ? ` (${form.limitsText(f)})` : ""}`;
        qp.placeholder = notice ? `${notice} ${basePlaceholder}` : basePlaceholder;
        if (multi) {
            const picked = Array.isArray(ticked) ? ticked : Array.isArray(current) ? current : [];
            qp.selectedItems = items.filter((it) => typeof it.value === "string" && picked.includes(it.value));
        } else {
            const active = items.find((it) => !it.skip && it.value === current) ?? (current === undefined && !f.required ? items.find((it) => it.skip) : undefined);
            if (active) qp.activeItems = [active];
        }
        return this.show(qp, i, steps, (finish) => {
            if (multi) {
                const value = qp.selectedItems.map((it) => it.value).filter((v): v is string => typeof v === "string");
                if (value.length === 0 && !f.required) {
                    finish({ kind: "skip" });
                    return;
                }
                const problem = form.checkValue(f, value);
                if (problem) {
                    qp.placeholder = `${problem} ${basePlaceholder}`;
                    return;
                }
                finish({ kind: "value", value });
                return;
            }
            const pick = qp.selectedItems[0] ?? qp.activeItems[0];
            if (pick?.skip) finish({ kind: "skip" });
            else if (pick && pick.value !== undefined) finish({ kind: "value", value: pick.value });
        }).then((r) => {
            // Dismissed: the choices ticked come back when the form opens again.
            if (r.kind === "dismissed" && multi) {
                this.draft.unsaved.set(
                    f.name,
                    qp.selectedItems.map((it) => it.value).filter((v): v is string => typeof v === "string"),
                );
            }
            return r;
        });
    }

    /** A form without fields: the server only asks to go ahead. */
    private confirmStep(): Promise<StepResult> {
        const qp = vscode.window.createQuickPick<ChoiceItem>();
        const accept: ChoiceItem = { label: "$(check) Accept", value: true };
        const decline: ChoiceItem = { label: "$(circle-slash) Decline", value: false };
        qp.items = [accept, decline];
        qp.placeholder = form.clip(this.question.message, 500);
        return this.show(qp, 0, 1, (finish) => {
            const pick = qp.selectedItems[0] ?? qp.activeItems[0];
            if (pick === accept) finish({ kind: "skip" });
            else if (pick === decline) finish({ kind: "decline" });
        });
    }
}

/** The host's refusal without its "switchboard.elicit: " prefix. */
function hostMessage(message: string): string {
    const m = /^switchboard\.elicit:\s*(.*)$/s.exec(message);
    const text = (m ? m[1] : message).trim();
    return text.endsWith(".") ? text : `${text}.`;
}

/** The buttons of the reminder shown when a form is dismissed. */
export const reminderButtons = { answer: "Answer", decline: "Decline", cancel: "Cancel" } as const;

/** The text of the reminder shown when a form is dismissed. */
export function reminderText(server: string): string {
    return `Switchboard: MCP server '${server}' is waiting for your answer.`;
}

/**
 * The queue of questions: asks each at once, one at a time, oldest first. Keeps what was entered
 * into a dismissed form until its question ends, and reminds of a dismissed question.
 */
export class Questions implements vscode.Disposable {
    private readonly queue: string[] = [];
    private active: Form | undefined;
    private held = 0;
    private pumping = false;
    private readonly waiters = new Map<string, ((o: Outcome) => void)[]>();
    /** What was entered into the forms of pending questions, by question id. */
    private readonly drafts = new Map<string, Draft>();
    private readonly subs: vscode.Disposable[];

    constructor(private readonly sb: Switchboard) {
        this.subs = [
            sb.onElicitationRequested((e) => this.enqueue(e.id)),
            sb.onElicitationResolved((r) => this.ended(r)),
        ];
        for (const id of sb.questions.keys()) this.enqueue(id);
    }

    /** The id of the question on screen. */
    get showing(): string | undefined {
        return this.active && !this.active.dismissed ? this.active.id : undefined;
    }

    /** How many pending questions keep what was entered into their forms. */
    get kept(): number {
        return this.drafts.size;
    }

    /**
     * Opens one question's form now (after any quick input of ours that holds the queue), taking
     * the screen from another question's form, which is then dismissed as by any quick input;
     * resolves with how the form ended.
     */
    answer(id: string): Promise<Outcome> {
        const done = new Promise<Outcome>((resolve) => {
            const list = this.waiters.get(id) ?? [];
            list.push(resolve);
            this.waiters.set(id, list);
        });
        this.sb.questions.dismiss(id, false); // asked for: it opens again
        const onScreen = this.active && !this.active.dismissed ? this.active : undefined;
        if (onScreen?.id !== id) {
            const at = this.queue.indexOf(id);
            if (at >= 0) this.queue.splice(at, 1);
            this.queue.unshift(id);
            onScreen?.dismiss();
        }
        void this.pump();
        return done;
    }

    /** Holds new forms back while another quick input of ours is open (it would replace them). */
    hold(): vscode.Disposable {
        this.held++;
        let released = false;
        return new vscode.Disposable(() => {
            if (released) return;
            released = true;
            this.held--;
            void this.pump();
        });
    }

    private enqueue(id: string): void {
        // A dismissed question is not opened again by itself (answer, the reminder, the status bar).
        if (this.active?.id === id || this.queue.includes(id) || this.sb.questions.isDismissed(id)) return;
        this.queue.push(id);
        void this.pump();
    }

    private ended(r: ext.ElicitationResolvedParams): void {
        this.drafts.delete(r.id);
        const at = this.queue.indexOf(r.id);
        if (at >= 0) {
            this.queue.splice(at, 1);
            this.settle(r.id, "closed");
        }
        if (this.active?.id === r.id) this.active.close(r);
    }

    private settle(id: string, o: Outcome): void {
        const list = this.waiters.get(id);
        this.waiters.delete(id);
        for (const w of list ?? []) w(o);
    }

    private async pump(): Promise<void> {
        if (this.pumping) return;
        this.pumping = true;
        try {
            while (!this.active && this.held === 0 && this.queue.length > 0) {
                const id = this.queue.shift() as string;
                const q = this.sb.questions.get(id);
                if (!q) {
                    this.drafts.delete(id);
                    this.settle(id, "closed");
                    continue;
                }
                let draft = this.drafts.get(id);
                if (!draft) {
                    draft = newDraft(q);
                    this.drafts.set(id, draft);
                }
                const f = new Form(this.sb, q, draft);
                this.active = f;
                let outcome: Outcome = "closed";
                try {
                    outcome = await f.run();
                } catch (err) {
                    this.sb.output.error(`question ${id}: ${errorMessage(err)}`);
                } finally {
                    this.active = undefined;
                }
                if (outcome === "dismissed" && this.sb.questions.has(id)) {
                    this.sb.output.info(`question ${id} of '${q.server}' dismissed: still pending`);
                    // Asked for again meanwhile (answer): its waiters wait for the form to open again.
                    if (this.queue.includes(id)) continue;
                    this.sb.questions.dismiss(id);
                    this.remind(q);
                } else {
                    this.drafts.delete(id);
                    if (outcome === "dismissed") outcome = "closed";
                }
                this.settle(id, outcome);
            }
        } finally {
            this.pumping = false;
        }
    }

    /** Shows the reminder of a dismissed question, unless the queue shows one for it already. */
    private remind(q: ext.Elicitation): void {
        const shown = this.sb.questions.remind(q.id, () =>
            vscode.window.showWarningMessage(reminderText(q.server), reminderButtons.answer, reminderButtons.decline, reminderButtons.cancel),
        );
        void shown
            ?.then((pick) => this.reminded(q, pick))
            .catch((err: unknown) => {
                this.sb.output.error(`question ${q.id}: ${errorMessage(err)}`);
                void vscode.window.showErrorMessage(`Switchboard: ${errorMessage(err)}`);
            });
    }

    private async reminded(q: ext.Elicitation, pick: string | undefined): Promise<void> {
        if (pick === reminderButtons.answer) await answerQuestions(this.sb, this, q.id);
        else if (pick === reminderButtons.decline) await this.reply(q, "decline");
        else if (pick === reminderButtons.cancel) await this.reply(q, "cancel");
        // Dismissed: the question stays pending (the status bar, Answer Server Questions...).
    }

    /** Declines or cancels a question from its reminder. */
    private async reply(q: ext.Elicitation, action: "decline" | "cancel"): Promise<void> {
        // Its form is on screen again: the form sends the answer and closes.
        if (this.active?.id === q.id && this.active.respond(action)) return;
        try {
            await this.sb.exec(ext.Cmd.elicit, { id: q.id, action });
            this.sb.output.info(`answered question ${q.id} of '${q.server}': ${action}`);
        } catch (err) {
            const code = (err as { code?: unknown } | undefined)?.code;
            if (code === ErrorCodes.InvalidParams || !this.sb.questions.has(q.id)) {
                void vscode.window.showInformationMessage(`Switchboard: the question from MCP server '${q.server}' had already ended.`);
                return;
            }
            this.sb.output.error(`answering question ${q.id}: ${errorMessage(err)}`);
            void vscode.window.showErrorMessage(`Switchboard: could not answer MCP server '${q.server}': ${errorMessage(err)}`);
        }
    }

    dispose(): void {
        for (const s of this.subs) s.dispose();
        this.queue.length = 0;
        this.drafts.clear();
        this.active?.close({ id: this.active.id, action: "cancel", by: "disconnect" });
    }
}

interface QuestionItem extends vscode.QuickPickItem {
    question: ext.Elicitation;
}

export function questionAge(e: ext.Elicitation, now: Date = new Date()): string {
    const t = Date.parse(e.requestedAt);
    return Number.isNaN(t) ? "" : `${Math.max(0, Math.round((now.getTime() - t) / 1000))} s ago`;
}

export function questionItem(e: ext.Elicitation): vscode.QuickPickItem {
    const n = e.fields.length;
    return {
        label: `$(question) ${e.server}`,
        description: [`${n} field${n === 1 ? "" : "s"}`, questionAge(e)].filter(Boolean).join(" · "),
        detail: noIcons(form.clip(e.message, 300)),
    };
}

/** "Answer Server Questions...": the pending questions; the picked one's form opens. */
export async function answerQuestions(sb: Switchboard, questions: Questions, id?: string): Promise<Outcome | undefined> {
    await sb.ensureRunning();
    const hold = questions.hold();
    try {
        const pending = await sb.exec(ext.Cmd.elicitations);
        if (Array.isArray(pending)) sb.syncQuestions(pending);
        const list = Array.isArray(pending) ? pending : [];
        if (id) {
            if (list.some((e) => e.id === id)) return await openAfter(hold, questions, id);
            void vscode.window.showInformationMessage("Switchboard: that question was already answered or has ended.");
            return undefined;
        }
        if (list.length === 0) {
            void vscode.window.showInformationMessage("Switchboard: no MCP server is waiting for an answer.");
            return undefined;
        }
        const items: QuestionItem[] = list.map((e) => ({ ...questionItem(e), question: e }));
        const pick = await vscode.window.showQuickPick(items, { title: "Switchboard: questions from MCP servers", placeHolder: "Answer which question?", matchOnDetail: true });
        if (!pick) return undefined;
        return await openAfter(hold, questions, pick.question.id);
    } finally {
        hold.dispose();
    }
}

function openAfter(hold: vscode.Disposable, questions: Questions, id: string): Promise<Outcome> {
    const done = questions.answer(id);
    hold.dispose();
    return done;
}
