// "Switchboard: Call Tool...": pick a tool, fill a form built from its input schema (typed fields
// with the elicitation form's validation; JSON for the rest), then switchboard.callTool. The call
// passes the confirm gate like any other; the result opens as a read-only document.

import * as vscode from "vscode";
import type { Switchboard } from "./client";
import * as form from "./elicit_form";
import * as fmt from "./format";
import * as ext from "./lsp_types";
import type { Reports } from "./report";
import { parseArgument, toolArguments, toolFields, type ToolField } from "./tool_form";

interface ToolItem extends vscode.QuickPickItem {
    tool: ext.ToolInfo;
}

interface ChoiceItem extends vscode.QuickPickItem {
    value?: unknown;
    skip?: boolean;
}

type Step = { kind: "value"; value: unknown } | { kind: "skip" } | { kind: "back" } | { kind: "cancel" };

/** Picks a tool (or takes the one named), asks its parameters, calls it; returns the result. */
export async function callTool(sb: Switchboard, reports: Reports, name?: string): Promise<ext.ToolResult | undefined> {
    await sb.ensureRunning();
    const tools = await sb.exec(ext.Cmd.tools);
    let tool = name ? tools.find((t) => t.name === name) : undefined;
    if (name && !tool) {
        void vscode.window.showWarningMessage(`Switchboard: there is no tool ${name}; Show Servers lists the tools.`);
        return undefined;
    }
    if (!tool) {
        if (tools.length === 0) {
            void vscode.window.showInformationMessage(fmt.noToolsText(await sb.exec(ext.Cmd.servers)));
            return undefined;
        }
        // By server, each under its name.
        const sorted = [...tools].sort((a, b) => (a.server === b.server ? a.tool.localeCompare(b.tool) : a.server.localeCompare(b.server)));
        const items: (ToolItem | vscode.QuickPickItem)[] = [];
        let server: string | undefined;
        for (const t of sorted) {
            if (t.server !== server) {
                server = t.server;
                items.push({ label: server, kind: vscode.QuickPickItemKind.Separator });
            }
            items.push(toolItem(t));
        }
        const pick = await vscode.window.showQuickPick(items, { title: "Switchboard: Call Tool", placeHolder: "Which tool?", matchOnDescription: true, matchOnDetail: true });
        if (!pick || !("tool" in pick)) return undefined;
        tool = (pick).tool;
    }
    const fields = toolFields(tool.inputSchema);
    const values = await askFields(tool, fields);
    if (!values) return undefined;
    const args = toolArguments(fields, values);
    const called = tool;
    const result = await vscode.window.withProgress(
        // In the status bar: a notification here would sit on top of the approval prompt.
        { location: vscode.ProgressLocation.Window, title: `Switchboard: calling ${called.tool}…` },
        () => sb.exec(ext.Cmd.callTool, { name: called.name, arguments: args }),
    );
    await reports.show(`calls/${called.name}`, resultReport(called, args, result));
    return result;
}

function toolItem(t: ext.ToolInfo): ToolItem {
    const params = fmt.schemaParams(t.inputSchema).map((p) => (p.required ? p.name : `${p.name}?`));
    return {
        label: fmt.noIcons(t.tool),
        description: [t.server, ...fmt.toolMarks(t)].join(" · "),
        detail: [params.length > 0 ? `(${params.join(", ")})` : "()", fmt.noIcons(form.clip(t.description ?? "", 200))].filter((x) => x).join(" "),
        tool: t,
    };
}

/** The call and its result as Markdown (server text fenced, never interpreted). */
export function resultReport(tool: ext.ToolInfo, args: Record<string, unknown>, r: ext.ToolResult): string {
    const out = [`# ${fmt.codeSpan(tool.tool)} of MCP server ${fmt.codeSpan(tool.server)}`, ""];
    out.push(`- Arguments: ${fmt.codeSpan(JSON.stringify(args))}`);
    if (r.summary) {
        // Denied, not run or failed: the host's sentence for people (the text is the model's wording).
        out.push(`- Result: ${fmt.mdText(r.summary)}`, "");
        return out.join("\n");
    }
    out.push(`- Result: ${r.isError ? "**error**" : "ok"}, ${r.bytes} bytes${r.truncated ? " (truncated)" : ""}`);
    const text = r.text ?? "";
    let ticks = "```";
    while (text.includes(ticks)) ticks += "`";
    out.push("", ticks, text.replace(/\n$/, ""), ticks, "");
    return out.join("\n");
}

async function askFields(tool: ext.ToolInfo, fields: readonly ToolField[]): Promise<Map<string, unknown> | undefined> {
    const values = new Map<string, unknown>();
    for (const f of fields) {
        const d = f.json ? undefined : form.defaultValue(f.field);
        if (d !== undefined) values.set(f.field.name, d);
    }
    let i = 0;
    while (i < fields.length) {
        const r = await askField(tool, fields[i], i, fields.length, values.get(fields[i].field.name));
        switch (r.kind) {
            case "value":
                values.set(fields[i].field.name, r.value);
                i++;
                break;
            case "skip":
                values.delete(fields[i].field.name);
                i++;
                break;
            case "back":
                i = Math.max(0, i - 1);
                break;
            case "cancel":
                return undefined;
        }
    }
    return values;
}

function prompt(f: ToolField): string {
    const label = `${form.fieldLabel(f.field)}${f.field.required ? "" : " (optional)"}`;
    return f.field.description ? `${label}: ${form.clip(f.field.description, 300)}` : label;
}

function askField(tool: ext.ToolInfo, f: ToolField, i: number, steps: number, current: unknown): Promise<Step> {
    const kind = f.json ? "text" : form.fieldKind(f.field);
    const input: vscode.InputBox | vscode.QuickPick<ChoiceItem> = kind === "text" || kind === "number" ? vscode.window.createInputBox() : vscode.window.createQuickPick<ChoiceItem>();
    input.title = `Switchboard: Call ${tool.tool} (${tool.server})`;
    input.step = i + 1;
    input.totalSteps = steps;
    input.ignoreFocusOut = true;
    if (i > 0) input.buttons = [vscode.QuickInputButtons.Back];
    const subs: vscode.Disposable[] = [];
    return new Promise<Step>((resolve) => {
        let done = false;
        const finish = (s: Step): void => {
            if (done) return;
            done = true;
            for (const d of subs) d.dispose();
            input.dispose();
            resolve(s);
        };
        subs.push(
            input.onDidTriggerButton((b) => b === vscode.QuickInputButtons.Back && finish({ kind: "back" })),
            input.onDidHide(() => finish({ kind: "cancel" })),
        );
        if ("validationMessage" in input) {
            const box = input;
            box.prompt = prompt(f);
            box.placeholder = f.json ? `JSON: ${f.schemaType}${f.field.required ? "" : ", empty to skip"}` : form.limitsText(f.field);
            box.value = current === undefined ? "" : f.json ? JSON.stringify(current) : form.valueText(current as ext.ElicitValue);
            subs.push(
                box.onDidChangeValue((t) => (box.validationMessage = parseArgument(f, t).problem)),
                box.onDidAccept(() => {
                    const parsed = parseArgument(f, box.value);
                    if (parsed.problem) {
                        box.validationMessage = parsed.problem;
                        return;
                    }
                    if (parsed.value === undefined) {
                        const empty = form.emptyProblem(f.field);
                        if (empty) {
                            box.validationMessage = empty;
                            return;
                        }
                        finish({ kind: "skip" });
                        return;
                    }
                    finish({ kind: "value", value: parsed.value });
                }),
            );
        } else {
            const qp = input;
            const multi = kind === "multi";
            let items: ChoiceItem[];
            if (kind === "yesno") {
                items = [
                    { label: "Yes", value: true },
                    { label: "No", value: false },
                ];
            } else {
                const titles = form.choiceTitles(f.field);
                items = (f.field.enum ?? []).map((v, k) => ({ label: fmt.noIcons(titles[k]), description: titles[k] === v ? undefined : fmt.noIcons(v), value: v }));
            }
            if (!f.field.required && !multi) items.push({ label: "(skip)", description: "leave it out", skip: true });
            qp.items = items;
            qp.canSelectMany = multi;
            qp.placeholder = prompt(f);
            if (multi && Array.isArray(current)) qp.selectedItems = items.filter((it) => (current as unknown[]).includes(it.value));
            else {
                const active = items.find((it) => !it.skip && it.value === current);
                if (active) qp.activeItems = [active];
            }
            subs.push(
                qp.onDidAccept(() => {
                    if (multi) {
                        const value = qp.selectedItems.map((it) => it.value).filter((v): v is string => typeof v === "string");
                        if (value.length === 0 && !f.field.required) return finish({ kind: "skip" });
                        const problem = form.checkValue(f.field, value);
                        if (problem) {
                            qp.placeholder = `${problem} ${prompt(f)}`;
                            return;
                        }
                        return finish({ kind: "value", value });
                    }
                    const pick = qp.selectedItems[0] ?? qp.activeItems[0];
                    if (pick?.skip) finish({ kind: "skip" });
                    else if (pick && pick.value !== undefined) finish({ kind: "value", value: pick.value });
                }),
            );
        }
        input.show();
    });
}
