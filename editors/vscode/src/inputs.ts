// A config file's ${input:ID} without a value (switchboard/inputRequested): asked with an input
// box (masked for a password) or a quick pick (pickString), answered with switchboard.input. The
// value goes to the host only: it is never shown, logged or kept here. No vscode import.

import type { InputParams, InputRequest } from "./lsp_types";

/** The part of vscode.window this needs. */
export interface InputAsker {
    showInputBox(options: { title?: string; prompt?: string; password?: boolean; ignoreFocusOut?: boolean }): Thenable<string | undefined>;
    showQuickPick(items: string[], options: { title?: string; placeHolder?: string; ignoreFocusOut?: boolean }): Thenable<string | undefined>;
}

/** Asks the person for one input and sends the answer (or cancel) through send. */
export async function answerInput(req: InputRequest, ui: InputAsker, send: (p: InputParams) => Thenable<unknown>): Promise<void> {
    if (typeof req?.id !== "string") return;
    const title = `Switchboard: MCP server '${req.server}'`;
    let value: string | undefined;
    if (Array.isArray(req.options) && req.options.length > 0) {
        value = await ui.showQuickPick(req.options, { title, placeHolder: req.message, ignoreFocusOut: true });
    } else {
        value = await ui.showInputBox({ title, prompt: req.message, password: req.password === true, ignoreFocusOut: true });
    }
    await send(value === undefined ? { id: req.id, cancel: true } : { id: req.id, value });
}
