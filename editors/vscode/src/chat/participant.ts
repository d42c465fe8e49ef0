// The @switchboard chat participant, registered where VS Code's chat API exists.

import * as vscode from "vscode";
import type { Switchboard } from "../client";
import { errorMessage } from "../client";
import * as fmt from "../format";
import type * as ext from "../lsp_types";
import { chatParticipantId, ui } from "../ids";
import { attachPicked, pickPrompt, routeChatMessage } from "../resources";
import type { ChatSessions } from "./session";
import { approvalText, turnUsageText, type TurnView } from "./transcript";

interface ResultMetadata {
    conversation?: string;
}

/** Whether this VS Code has the chat participant API (1.90+; guarded for forks without it). */
export function hasChatApi(): boolean {
    const chat = (vscode as { chat?: { createChatParticipant?: unknown } }).chat;
    return typeof chat?.createChatParticipant === "function";
}

function lastConversation(context: vscode.ChatContext): string | undefined {
    for (let i = context.history.length - 1; i >= 0; i--) {
        const h = context.history[i];
        if (h instanceof vscode.ChatResponseTurn && h.participant === chatParticipantId) {
            const meta = h.result.metadata as ResultMetadata | undefined;
            if (meta?.conversation) return meta.conversation;
        }
    }
    return undefined;
}

export function registerParticipant(sb: Switchboard, sessions: ChatSessions): vscode.Disposable | undefined {
    if (!hasChatApi()) return undefined;
    const handler: vscode.ChatRequestHandler = async (request, context, stream, token) => {
        let shownText = 0;
        let shownContext = false;
        const shownTools = new Map<string, string>();
        const render = (t: TurnView): void => {
            if (!shownContext && t.viewContext.length > 0) {
                shownContext = true;
                stream.markdown(t.viewContext.map((l) => `_${fmt.mdText(l)}_\n\n`).join(""));
            }
            if (t.text.length > shownText) {
                stream.markdown(t.text.slice(shownText));
                shownText = t.text.length;
            }
            for (const c of t.tools) {
                const state = approvalText(c) + (c.result ? (c.result.isError ? " · error" : " · done") : "");
                // A waiting call is shown once its approval id is known, so the button can name it.
                if (c.approval === "waiting" && !c.approvalId) continue;
                if (shownTools.get(c.id) === state) continue;
                shownTools.set(c.id, state);
                if (c.approval === "waiting") {
                    stream.markdown(`\n\n\`${c.name}\` ${fmt.argumentPreview(c.arguments)} is waiting for approval.\n\n`);
                    stream.button({ command: ui.approvePending, title: "Approve…", arguments: [c.approvalId] });
                } else if (c.result) {
                    // A denied, unrun or failed call: the host's sentence for people, never the model's text.
                    const why = c.result.summary ? ` — ${fmt.mdText(c.result.summary)}` : "";
                    stream.markdown(`\n\n\`${c.name}\`: ${state}${why}\n\n`);
                    // VS Code's chat cannot show a view's page: it opens in a panel (views.ts), and again from here.
                    if (c.view && !c.view.error) stream.button({ command: ui.openView, title: "Open the view", arguments: [c.view] });
                } else {
                    stream.progress(`${c.name}: ${state}`);
                }
            }
        };
        try {
            // "@" / "@server" attaches an MCP resource; "/name" or "/server:name" runs a server's prompt.
            const route = routeChatMessage(request.prompt);
            let prompt = request.prompt;
            let extra: { serverPrompt?: ext.GetPromptParams; shown?: string } | undefined;
            if (route.kind === "attach") {
                const r = sessions.attachments && (await attachPicked(sb, sessions.attachments, route.server));
                stream.markdown(r ? `Attached \`${r.uri}\` to your next message.` : "Nothing attached.");
                return {};
            }
            if (route.kind === "prompt") {
                const serverPrompt = await pickPrompt(sb, route.server, route.name);
                if (!serverPrompt) return {};
                extra = { serverPrompt };
                prompt = route.rest;
            }
            const t = await sessions.run(prompt, lastConversation(context), render, token, extra);
            const usage = turnUsageText(t);
            if (usage) stream.markdown(`\n\n---\n${usage.split("\n").join("  \n")}\n`);
            if (t.state === "error") {
                return { errorDetails: { message: t.error ?? "The turn failed." }, metadata: { conversation: t.conversation } };
            }
            return { metadata: { conversation: t.conversation } };
        } catch (err) {
            return { errorDetails: { message: errorMessage(err) } };
        }
    };
    const participant = vscode.chat.createChatParticipant(chatParticipantId, handler);
    participant.iconPath = new vscode.ThemeIcon("plug");
    sb.output.info("chat participant @switchboard registered");
    return participant;
}
