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
import { ViewPanels } from "./views";
import { startTestHook } from "./testhook";

let sb: Switchboard | undefined;

/** The extension's API (used by tests): the connection, the chat, the questions, and the first start. */
export interface Api {
    sb: Switchboard;
    chat: Chat;
    questions: Questions;
    status: StatusBar;
    views: ViewPanels;
    started: Promise<boolean>;
}

export function activate(context: vscode.ExtensionContext): Api {
    sb = new Switchboard(undefined, context.extensionPath);
    const attachments = new Attachments();
    const chat = new Chat(sb, attachments);
    const status = new StatusBar(sb);
    const questions = new Questions(sb);
    const views = new ViewPanels(sb, context.extensionUri, (context.extension?.packageJSON as { version?: string } | undefined)?.version);
    chat.panel.attachViews(views); // a chat view's results show their views inline
    context.subscriptions.push(status, chat, questions, views, ...registerCommands(sb, chat, questions, views), ...registerPins(sb));
    context.subscriptions.push(...registerResources(sb, attachments, (p) => chat.runPrompt(p)));
    context.subscriptions.push(...registerTasks(sb));
    const started = sb.start();
    const hook = startTestHook(sb, started);
    if (hook) context.subscriptions.push(hook);
    return { sb, chat, questions, status, views, started };
}

export async function deactivate(): Promise<void> {
    const s = sb;
    sb = undefined;
    await s?.dispose();
}
