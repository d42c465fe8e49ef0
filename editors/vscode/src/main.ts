// Extension entry point: activate and deactivate only.

import type * as vscode from "vscode";
import { Chat } from "./chat";
import { Switchboard } from "./client";
import { registerCommands } from "./commands";
import { Questions } from "./elicit";
import { registerPins } from "./pins";
import { Attachments, registerResources } from "./resources";
import { StatusBar } from "./status";
import { registerTasks } from "./tasks";
import { startTestHook } from "./testhook";

let sb: Switchboard | undefined;

/** The extension's API (used by tests): the connection, the chat, the questions, and the first start. */
export interface Api {
    sb: Switchboard;
    chat: Chat;
    questions: Questions;
    status: StatusBar;
    started: Promise<boolean>;
}

export function activate(context: vscode.ExtensionContext): Api {
    sb = new Switchboard(undefined, context.extensionPath);
    const attachments = new Attachments();
    const chat = new Chat(sb, attachments);
    const status = new StatusBar(sb);
    const questions = new Questions(sb);
    context.subscriptions.push(status, chat, questions, ...registerCommands(sb, chat, questions), ...registerPins(sb));
    context.subscriptions.push(...registerResources(sb, attachments, (p) => chat.runPrompt(p)));
    context.subscriptions.push(...registerTasks(sb));
    const started = sb.start();
    const hook = startTestHook(sb, started);
    if (hook) context.subscriptions.push(hook);
    return { sb, chat, questions, status, started };
}

export async function deactivate(): Promise<void> {
    const s = sb;
    sb = undefined;
    await s?.dispose();
}
