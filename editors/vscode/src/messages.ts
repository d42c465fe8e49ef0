// What the host's window/showMessage notifications are about (no vscode import, unit-tested), so
// that the extension can add the action each one needs: a failed server gets Reconnect, and the
// "too many tools" warning is shown once per session with a way to trim the tools.

export type HostMessage =
    | { kind: "serverFailed"; server: string }
    | { kind: "toolCount"; count: number }
    | { kind: "other" };

// host/servers.go: "Switchboard: MCP server '<name>' failed: <reason>" (names never hold a quote).
const failedRe = /^Switchboard: MCP server '([^']+)' failed: /;
// session/loop.go: "Switchboard sends <n> tools to the model; ..."
const toolCountRe = /\bsends (\d+) tools to the model\b/;

export function classifyHostMessage(message: string): HostMessage {
    const failed = failedRe.exec(message);
    if (failed) return { kind: "serverFailed", server: failed[1] };
    const many = toolCountRe.exec(message);
    if (many) return { kind: "toolCount", count: Number(many[1]) };
    return { kind: "other" };
}
