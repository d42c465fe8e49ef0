// Runs inside the view's webview (bundled to dist/view.js): the ext-apps host bridge (AppBridge)
// between the view's sandboxed frame and the extension. The view's tools/call, ui/open-link,
// ui/update-model-context and ui/message go to the extension, which sends them to the host
// (switchboard.view.callTool / openLink / updateModelContext): the same confirm gate as any call,
// and the view's context quoted as its text. Messages are taken only from the view's frame (the bridge checks
// the source) and, for the extension's replies, only from the webview's parent.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

declare function acquireVsCodeApi(): { postMessage(m: unknown): void };

/** MCP's CallToolResult, as the bridge types it. */
type ToolResult = Parameters<AppBridge["sendToolResult"]>[0];

interface Data {
    html: string;
    embed?: "panel" | "inline";
    toolInput: Record<string, unknown>;
    toolResult: Record<string, unknown>;
    version: string;
    hostContext: Record<string, unknown>;
}

const data = JSON.parse(document.getElementById("data")?.textContent ?? "{}") as Data;
const inline = data.embed === "inline";
/** The tallest the view's frame may be (view_html.ts: 600 px inline, 4000 px in its panel). */
const maxHeight = Number((data.hostContext?.containerDimensions as { maxHeight?: unknown } | undefined)?.maxHeight) || 4000;
const vscode = inline
    ? { postMessage: (m: unknown) => window.parent.postMessage({ type: "switchboard.view", msg: m }, "*") }
    : acquireVsCodeApi();
const frame = document.getElementById("app") as HTMLIFrameElement;
const waiting = new Map<number, (r: unknown) => void>();
let seq = 0;
let mode: "inline" | "fullscreen" = "inline";

// A secret of this document: the extension echoes it in its replies. The view's frame cannot read
// this document (an opaque origin), so it cannot forge a reply whatever it posts.
const secret = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");

function ask(type: string, payload: Record<string, unknown>): Promise<unknown> {
    const rid = ++seq;
    vscode.postMessage({ type, rid, secret, ...payload });
    return new Promise((resolve) => waiting.set(rid, resolve));
}

window.addEventListener("message", (e: MessageEvent) => {
    if (e.source === frame.contentWindow) return; // the view's own messages are the bridge's
    if (inline && e.source !== window.parent) return; // the chat document relays the extension
    const m = e.data as { type?: string; rid?: number; secret?: string; result?: unknown; theme?: string } | undefined;
    if (m?.type === "reply" && typeof m.rid === "number" && m.secret === secret) {
        waiting.get(m.rid)?.(m.result);
        waiting.delete(m.rid);
    } else if (m?.type === "theme" && (m.theme === "light" || m.theme === "dark")) {
        bridge.setHostContext({ ...data.hostContext, theme: m.theme, displayMode: mode });
    }
});

const bridge = new AppBridge(null, { name: "switchboard", version: data.version }, {
    openLinks: {}, serverTools: {}, logging: {}, updateModelContext: { text: {}, structuredContent: {} },
    // ui/message: the host asks the person, then starts a turn of the view's chat (view_message.ts).
    message: { text: {} },
}, {
    hostContext: data.hostContext,
});
bridge.oncalltool = async (params) => (await ask("callTool", { name: params.name, arguments: params.arguments ?? {} })) as ToolResult;
bridge.onopenlink = async (params) => (await ask("openLink", { url: params.url })) as { isError?: boolean };
bridge.onupdatemodelcontext = async (params) => {
    const r = (await ask("updateModelContext", { content: params.content ?? [], structuredContent: params.structuredContent })) as { error?: string };
    if (r?.error) throw new Error(r.error);
    return {};
};
bridge.onmessage = async (params) => (await ask("message", { role: params.role, content: params.content ?? [] })) as { isError?: boolean };
bridge.onsizechange = ({ height }) => {
    if (typeof height !== "number" || mode !== "inline") return;
    frame.style.height = `${Math.max(40, Math.min(maxHeight, Math.ceil(height)))}px`;
    // The chat document sizes this document's frame to fit.
    if (inline) window.parent.postMessage({ type: "switchboard.size", height: document.documentElement.scrollHeight }, "*");
};
bridge.onrequestdisplaymode = ({ mode: want }) => {
    if (inline) {
        // Inline, fullscreen is the view's panel (views.ts), opened beside the chat; this frame stays inline.
        if (want === "fullscreen") vscode.postMessage({ type: "fullscreen" });
        return Promise.resolve({ mode: "inline" as const });
    }
    mode = want === "fullscreen" ? "fullscreen" : "inline";
    document.body.classList.toggle("fullscreen", mode === "fullscreen");
    bridge.setHostContext({ ...data.hostContext, displayMode: mode });
    return Promise.resolve({ mode });
};
bridge.onloggingmessage = () => undefined;
bridge.oninitialized = () => {
    void bridge.sendToolInput({ arguments: data.toolInput });
    void bridge.sendToolResult(data.toolResult as ToolResult);
    vscode.postMessage({ type: "initialized" });
};
void bridge.connect(new PostMessageTransport(frame.contentWindow!, frame.contentWindow!)).then(() => {
    frame.srcdoc = data.html;
    if (inline) window.parent.postMessage({ type: "switchboard.size", height: document.documentElement.scrollHeight }, "*");
});
