// The webview document that shows one MCP App view (views.ts). Pure: no vscode import, so the
// unit tests check it under node.
//
// The view's HTML runs in a frame inside the webview: sandbox="allow-scripts" (no
// allow-same-origin: an opaque origin, so it cannot reach the webview's document, its scripts,
// its storage or acquireVsCodeApi), srcdoc with the view's own CSP as its first tag, and the webview
// document's CSP is that same policy (a srcdoc frame inherits it), widened only by the webview's
// own resource origin so that dist/view.js (the ext-apps AppBridge) can load. So whatever the
// view's HTML does to its meta tag, it gets no more than it declared.

import type { ViewResult } from "./lsp_types";

/** The webview document's CSP: the view's, plus the extension's script origin. */
export function webviewPolicy(viewCsp: string, cspSource: string): string {
    const parts = viewCsp.split(";").map((p) => p.trim()).filter((p) => p !== "");
    let script = false;
    const out = parts.map((p) => {
        if (p.startsWith("script-src ")) {
            script = true;
            return `${p} ${cspSource}`;
        }
        return p;
    });
    if (!script) out.push(`script-src ${cspSource}`);
    return out.join("; ");
}

/**
 * The view's HTML with its CSP as the first thing it holds (after a leading doctype alone). Not
 * after the first "<head" its text has: that may sit in a comment, a script's text or a title,
 * where the meta tag would not count (nor would one after a script that ran first), and the view
 * would run under its host document's wider policy. Placed first, the parser puts it in the head
 * it makes; the view's own <html> keeps its attributes, its <head> tag is ignored.
 */
export function withPolicyMeta(html: string, csp: string): string {
    const meta = `<meta http-equiv="Content-Security-Policy" content="${attr(csp)}">`;
    // HTML's whitespace only (not \s: a no-break space is text, which would start the body), and
    // a doctype ends at its first ">" even inside quotes, as the tokenizer ends it.
    const lead = /^[\t\n\f\r ]*(?:<!doctype[^>]*>)?/i.exec(html)?.[0] ?? "";
    return lead + meta + html.slice(lead.length);
}

function attr(s: string): string {
    return s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** JSON safe inside a <script> element: no "<", so no "</script>". */
export function scriptJSON(v: unknown): string {
    return JSON.stringify(v).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

/** Where a view document is shown: its own panel, or inline in the chat view's transcript. */
export type Embed = "panel" | "inline";

/** The tallest an inline view may make its frame (px); the panel is its fullscreen mode. */
export const inlineMaxHeight = 600;

export interface HostContext {
    theme: "light" | "dark";
    locale: string;
    timeZone?: string;
}

/**
 * The document for view v; script is dist/view.js as a webview URI. embed "panel" is the whole
 * webview of a view's panel; "inline" is the document the chat view writes into a frame of its
 * own (chat/panel.ts), one per view in the transcript: the same policy, frame and bridge, only
 * its messages go to the chat document instead of acquireVsCodeApi (which only the chat
 * document has).
 */
export function viewDocument(v: ViewResult, script: string, cspSource: string, ctx: HostContext, version: string, embed: Embed = "panel"): string {
    const inline = embed === "inline";
    const data = {
        html: withPolicyMeta(v.html, v.csp),
        allow: v.allow,
        toolInput: v.toolInput ?? {},
        toolResult: v.toolResult,
        version,
        embed,
        hostContext: {
            theme: ctx.theme, locale: ctx.locale, timeZone: ctx.timeZone, platform: "desktop", userAgent: "switchboard (VS Code)",
            displayMode: "inline", availableDisplayModes: ["inline", "fullscreen"], toolInfo: (v.toolInfo as { tool?: unknown }) ?? undefined,
            containerDimensions: { maxHeight: inline ? inlineMaxHeight : 4000 },
        },
    };
    const title = attr(`${v.tool}: a view from MCP server '${v.server}'`);
    // VS Code's theme variables exist only in the webview's own document, not in a frame the chat
    // document makes: the inline document picks its colours from the theme itself.
    const colors = !inline ? "" : ctx.theme === "dark" ? "body { color: #ccc; } .note { border-color: #444; }" : "body { color: #333; } .note { border-color: #ddd; }";
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(webviewPolicy(v.csp, cspSource))}">
<title>${title}</title>
<style>
body { margin: 0; padding: 0; color: var(--vscode-foreground); font-family: var(--vscode-font-family); }
.note { padding: 4px 8px; opacity: .75; font-size: .9em; border-bottom: 1px solid var(--vscode-panel-border); }
iframe { display: block; width: 100%; height: ${inline ? 160 : 320}px; border: 0; }
body.fullscreen iframe { height: calc(100vh - 30px); }
${colors}
</style></head>
<body>
<div class="note">${title}. Its tool calls ask you as any call does.</div>
<iframe id="app" sandbox="allow-scripts" allow="${attr(v.allow)}" referrerpolicy="no-referrer"></iframe>
<script type="application/json" id="data">${scriptJSON(data)}</script>
<script src="${attr(script)}"></script>
</body></html>`;
}
