// Pure logic: status bar text, server and approval presentation, allowlist choices, settings,
// binary lookup, and the chat transcript fold. No vscode module needed.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { approvalState, approvalText, applyApprovalRequested, applyApprovalResolved, applyEvent, newTurn } from "../src/chat/transcript";
import { findBinary, hostSettings } from "../src/config";
import * as fmt from "../src/format";
import type { Decision, ServerStatus, ToolInfo } from "../src/lsp_types";

const srv = (name: string, state: ServerStatus["state"], extra: Partial<ServerStatus> = {}): ServerStatus => ({
    name,
    state,
    transport: "stdio",
    source: "editor settings",
    tools: 3,
    instructions: false,
    ...extra,
});

test("status summary counts ready, failed and pending", () => {
    const s = fmt.statusSummary("running", [srv("a", "ready"), srv("b", "failed", { error: "exit 1" }), srv("c", "ready")], 2);
    assert.equal(s.text, "$(server) 2/3 ready $(error) 1 failed $(bell-dot) 2 to approve");
    assert.match(s.tooltip, /1 failed: b/);
    assert.match(s.tooltip, /2 tool calls waiting for approval/);
    assert.equal(s.severity, "error");
    assert.equal(s.label, "Switchboard: 2 of 3 servers ready, 1 failed, 2 pending approvals");
    assert.equal(fmt.statusSummary("running", [srv("a", "ready")], 1).severity, "warning");
    assert.equal(fmt.statusSummary("running", [srv("a", "ready")], 0).text, "$(server) 1/1 ready");
    assert.equal(fmt.statusSummary("stopped", [], 0).severity, "error");
    const q = fmt.statusSummary("running", [srv("a", "ready")], 1, 2);
    assert.equal(q.text, "$(server) 1/1 ready $(bell-dot) 1 to approve $(question) 2 questions");
    assert.equal(q.label, "Switchboard: 1 of 1 servers ready, 1 pending approval, 2 server questions");
    assert.match(q.tooltip, /2 questions from MCP servers waiting for an answer/);
    assert.equal(fmt.statusSummary("running", [srv("a", "ready")], 0, 1).severity, "warning");
});

test("status bar: untrusted servers and pending approvals have their own glyph and a word each", () => {
    const s = fmt.statusSummary("running", [srv("a", "ready"), srv("w", "untrusted")], 1, 1);
    assert.equal(s.text, "$(server) 1/2 ready $(workspace-untrusted) 1 untrusted $(bell-dot) 1 to approve $(question) 1 question");
    const glyphs = s.text.match(/\$\([a-z-]+\)/g) ?? [];
    assert.equal(new Set(glyphs).size, glyphs.length, "every glyph means one thing");
    assert.ok(!s.text.includes("$(shield)"), "no shield: it read as both untrusted and pending");
    for (const part of s.text.split(/ (?=\$\()/)) assert.match(part, /^\$\([a-z-]+\) \d+(\/\d+)? [a-z ]+$/, `labelled: ${part}`);
});

test("status bar: servers that need a sign-in are counted and named", () => {
    const s = fmt.statusSummary("running", [srv("a", "ready"), srv("linear", "needs-auth", { error: "sign-in required" })], 0);
    assert.equal(s.text, "$(server) 1/2 ready $(account) 1 need sign-in");
    assert.equal(s.label, "Switchboard: 1 of 2 servers ready, 1 need sign-in");
    assert.match(s.tooltip, /1 need you to sign in: linear/);
    assert.equal(fmt.serverLabel(srv("linear", "needs-auth")), "$(account) linear");
});

test("a server blocked by the organisation's policy is shown as such, with the reason and contact, never as a failure", () => {
    const why = "Blocked by your organisation: deniedMcpServers[0] {\"serverName\":\"shell\"} in /etc/switchboard/managed-settings.json:3:5. Contact it@example.com.";
    const b = srv("shell", "blocked", { tools: 0, error: why, policy: { rule: "/etc/switchboard/managed-settings.json#/deniedMcpServers/0", source: "/etc/switchboard/managed-settings.json" } });
    const s = fmt.statusSummary("running", [srv("a", "ready"), b], 0);
    assert.equal(s.text, "$(server) 1/2 ready $(circle-slash) 1 blocked");
    assert.equal(s.label, "Switchboard: 1 of 2 servers ready, 1 blocked by your organisation");
    assert.match(s.tooltip, /1 blocked by your organisation: shell/);
    assert.equal(s.severity, "normal", "a policy's block is a state, not an error");
    assert.equal(fmt.serverDescription(b), "blocked by your organisation");
    assert.equal(fmt.serverDetail(b), why);
    const report = fmt.serverReport(b, []);
    assert.match(report, /## Blocked by your organisation/);
    assert.match(report, /Contact it@example\.com\./);
    assert.match(report, /#\/deniedMcpServers\/0/);
    assert.ok(!report.includes("## Error"), report);
});

test("server report shows each tool's parameters from its input schema", () => {
    const tools: ToolInfo[] = [
        {
            name: "mcp__a__search",
            server: "a",
            tool: "search",
            description: "Search the web",
            inputSchema: {
                type: "object",
                properties: {
                    query: { type: "string", description: "What to look for" },
                    limit: { type: "integer", minimum: 1, maximum: 50, default: 10 },
                    safe: { type: "boolean" },
                    kind: { type: "string", enum: ["web", "news"] },
                },
                required: ["query"],
            },
            allowlisted: false,
        },
        { name: "mcp__a__ping", server: "a", tool: "ping", description: "", inputSchema: { type: "object" }, allowlisted: true },
    ];
    const report = fmt.serverReport(srv("a", "ready"), tools);
    assert.match(report, /### `search`/);
    assert.match(report, /\| `query` \| string \| yes \| What to look for \|/);
    assert.match(report, /\| `limit` \| integer \| no \| 1 to 50; default 10 \|/);
    assert.match(report, /\| `kind` \| string \| no \| one of: web, news \|/);
    assert.match(report, /### `ping` \(auto-approved\)\n\nNo parameters\./);
    assert.match(report, /Switchboard: Call Tool/, "says how to call one");
    // Server-controlled text cannot break the table or inject Markdown links.
    const evil = fmt.serverReport(srv("a", "ready"), [
        { ...tools[0], inputSchema: { type: "object", properties: { "x|y": { type: "string", description: "a | b\n[click](http://evil)" } } } },
    ]);
    assert.doesNotMatch(evil, /\[click\]\(http/);
    assert.match(evil, /`x\\\|y`/);
});

test("server report marks tools with a view, tools only for views, and the organisation's deny or ask", () => {
    const base = { server: "a", description: "", inputSchema: { type: "object" } };
    const tools: ToolInfo[] = [
        { ...base, name: "mcp__a__clock", tool: "clock", allowlisted: false, view: true, policy: "ask", policyRule: "/etc/switchboard/managed-settings.json#/permissions/ask/0" },
        { ...base, name: "mcp__a__tick", tool: "tick", allowlisted: false, view: true, appOnly: true },
        { ...base, name: "mcp__a__rm", tool: "rm", allowlisted: true, policy: "deny", policyRule: "/etc/switchboard/managed-settings.json#/permissions/deny/0" },
    ];
    const report = fmt.serverReport(srv("a", "ready"), tools);
    assert.match(report, /### `clock` \(always asks \(organisation\), has a view\)\n\nRule: `\/etc\/switchboard\/managed-settings.json#\/permissions\/ask\/0`/);
    assert.match(report, /### `tick` \(has a view, only for its view\)/);
    // A denied tool is never called auto-approved, whatever the allowlist says.
    assert.match(report, /### `rm` \(blocked by your organisation\)\n/);
    assert.deepEqual(fmt.toolMarks(tools[2]), ["blocked by your organisation"]);
});

test("server detail prefers the error, then the stderr tail", () => {
    assert.equal(fmt.serverDetail(srv("a", "failed", { error: "boom\nmore", stderrTail: "x\ny\n" })), "Error: boom ⏎ more");
    assert.equal(fmt.serverDetail(srv("a", "ready", { stderrTail: "first\nlast line\n\n" })), "stderr: last line");
    assert.equal(fmt.serverDetail(srv("a", "ready")), "from editor settings");
    const tools: ToolInfo[] = [{ name: "mcp__a__echo", server: "a", tool: "echo", description: "Echo", inputSchema: {}, allowlisted: true }];
    const report = fmt.serverReport(srv("a", "failed", { error: "bad", stderrTail: "oops" }), tools);
    assert.match(report, /State: \*\*failed\*\*/);
    assert.match(report, /### `echo` \(auto-approved\)\n\nEcho\n/);
    assert.match(report, /## stderr/);
});

test("server report says what the sandbox allows and what it blocked", () => {
    const boxed = fmt.serverReport(srv("a", "ready", {
        transport: "stdio",
        sandbox: "sandboxed: no network, writes only ./build and its own folder",
        blocked: ["blocked: read of ~/.ssh/id_rsa (never open to a sandboxed server)", "blocked: [x](http://evil)"],
    }), []);
    assert.match(boxed, /- Sandbox: sandboxed: no network, writes only \.\/build and its own folder/);
    assert.match(boxed, /## Blocked by the sandbox\n\n- blocked: read of ~\/\.ssh\/id_rsa/);
    assert.doesNotMatch(boxed, /\[x\]\(http/);
    assert.match(fmt.serverReport(srv("b", "ready", { transport: "stdio" }), []), /- Sandbox: none \(runs with your full rights\)/);
});

test("argument preview is cut", () => {
    assert.equal(fmt.argumentPreview({ text: "hi" }), '{"text":"hi"}');
    assert.equal(fmt.argumentPreview({ text: "x".repeat(500) }, 20).length, 20);
});

test("allow choices reflect the list and map back to entries", () => {
    const p = "mcp__s__";
    const tools: ToolInfo[] = ["echo", "big"].map((t) => ({ name: p + t, server: "s", tool: t, description: "", inputSchema: {}, allowlisted: false }));
    const c = fmt.allowChoices(p, tools, ["mcp__s__echo", "mcp__s__gone", "mcp__other__x"]);
    assert.deepEqual(
        c.map((x) => [x.entry, x.picked]),
        [
            ["mcp__s__*", false],
            ["mcp__s__echo", true],
            ["mcp__s__big", false],
            ["mcp__s__gone", true],
        ],
    );
    assert.deepEqual(fmt.entriesFromPicks(p, [c[2], c[1]]), ["mcp__s__big", "mcp__s__echo"]);
    assert.deepEqual(fmt.entriesFromPicks(p, [c[0], c[1]]), ["mcp__s__*"]);
    assert.deepEqual(fmt.entriesFromPicks(p, []), []);
    assert.ok(fmt.allowChoices(p, tools, ["mcp__s__*"]).every((x) => x.picked));
});

test("host settings keep only valid values", () => {
    const settings: Record<string, unknown> = {
        servers: { a: { command: "x" } },
        mode: "always-allow",
        approvalTimeoutSeconds: 30,
        provider: {},
        configFiles: [],
        path: "/ignored",
    };
    assert.deepEqual(
        hostSettings(<T>(k: string) => ({ key: k, globalValue: settings[k] as T })),
        { servers: { a: { command: "x" } }, mode: "always-allow", approvalTimeoutSeconds: 30 },
    );
    assert.deepEqual(
        hostSettings(<T>(k: string) => ({ key: k, globalValue: ({ mode: "nonsense", approvalTimeoutSeconds: -1 } as Record<string, unknown>)[k] as T })),
        {},
    );
});

test("binary lookup: setting, then SWITCHBOARD_PATH, then PATH", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sb-bin-"));
    const exe = path.join(dir, "switchboard");
    fs.writeFileSync(exe, "#!/bin/sh\n", { mode: 0o755 });
    const plain = path.join(dir, "plain");
    fs.writeFileSync(plain, "", { mode: 0o644 });
    assert.deepEqual(findBinary({ setting: exe, env: {} }), { path: exe, source: "setting" });
    assert.match(findBinary({ setting: plain, env: { PATH: dir } }).problem ?? "", /switchboard.path is set to/);
    assert.deepEqual(findBinary({ setting: "", env: { SWITCHBOARD_PATH: exe, PATH: "" } }), { path: exe, source: "env" });
    assert.deepEqual(findBinary({ setting: undefined, env: { PATH: `/nonexistent${path.delimiter}${dir}` } }), { path: exe, source: "PATH" });
    assert.match(findBinary({ setting: undefined, env: { PATH: "/nonexistent" } }).problem ?? "", /not found/);
    assert.match(findBinary({ setting: "switchboard", env: {} }).problem ?? "", /must be an absolute path/);
    fs.rmSync(dir, { recursive: true });
});

test("transcript folds the session event order", () => {
    const t = newTurn("t1", "c1", "hello");
    const ev = (kind: string, extra: object = {}) => ({ turn: "t1", conversation: "c1", kind, ...extra });
    assert.equal(applyEvent(t, ev("text", { text: "Hel" })), false);
    applyEvent(t, ev("text", { text: "lo" }));
    applyEvent(t, ev("toolCall", { toolCall: { id: "c1", name: "mcp__s__echo", arguments: { text: "x" }, approval: "pending" } }));
    assert.equal(t.tools[0].approval, "waiting");
    applyApprovalRequested(t, { id: "a1", tool: "mcp__s__echo", server: "s", arguments: {}, mode: "single-confirm", turn: "t1", requestedAt: "" });
    assert.equal(t.tools[0].approvalId, "a1");
    applyApprovalResolved(t, { id: "a1", decision: "always", by: "user" });
    assert.equal(t.tools[0].approval, "allowed");
    applyEvent(t, ev("toolCall", { toolCall: { id: "c1", name: "mcp__s__echo", approval: "allowed", decidedBy: "user" } }));
    applyEvent(t, ev("toolResult", { result: { id: "c1", name: "mcp__s__echo", isError: false, text: "x", truncated: false } }));
    assert.equal(t.tools.length, 1);
    assert.deepEqual(t.tools[0].result, { isError: false, text: "x", truncated: false, shown: "x" });
    assert.equal(t.tools[0].decidedBy, "user");
    applyEvent(t, ev("error", { error: "model failed" }));
    assert.equal(applyEvent(t, ev("done", { stopReason: "error" })), true);
    assert.equal(t.text, "Hello");
    assert.deepEqual(t.parts, [
        { kind: "text", text: "Hello" },
        { kind: "tool", id: "c1" },
    ]);
    assert.equal(t.state, "error");
    assert.equal(t.error, "model failed");

    const c = newTurn("t2", "c1", "x");
    applyEvent(c, { turn: "t2", conversation: "c1", kind: "done", stopReason: "cancelled" });
    assert.equal(c.state, "cancelled");
    assert.equal(approvalState("denied"), "denied");
    assert.equal(approvalState(""), undefined);
});

test("chat says which grant was given: once, always for the tool, or the whole server", () => {
    const cases: [Decision, string, string][] = [
        ["once", "allowed", "allowed by you, this time only"],
        ["always", "allowed", "allowed by you, always for this tool"],
        ["server", "allowed", "allowed by you, always for every tool of a"],
        ["deny", "denied", "denied by you"],
    ];
    const seen = new Set<string>();
    for (const [decision, approval, want] of cases) {
        const t = newTurn("t1", "c1", "p");
        applyEvent(t, { turn: "t1", conversation: "c1", kind: "toolCall", toolCall: { id: "call1", name: "mcp__a__x", arguments: {}, approval: "pending" } });
        applyApprovalRequested(t, { id: "ap1", tool: "mcp__a__x", server: "a", arguments: {}, mode: "single-confirm", turn: "t1", requestedAt: "" });
        applyApprovalResolved(t, { id: "ap1", decision, by: "user" });
        // The host's later toolCall event says only "allowed by user": the grant stays known.
        applyEvent(t, { turn: "t1", conversation: "c1", kind: "toolCall", toolCall: { id: "call1", name: "mcp__a__x", arguments: {}, approval, decidedBy: "user" } });
        applyEvent(t, { turn: "t1", conversation: "c1", kind: "toolResult", result: { id: "call1", name: "mcp__a__x", isError: false, text: "ok", truncated: false, bytes: 2 } });
        assert.equal(approvalText(t.tools[0]), want, decision);
        seen.add(approvalText(t.tools[0]));
    }
    assert.equal(seen.size, cases.length, "no two grants read the same");
    const byHost = (decidedBy: string, approval = "allowed"): string => {
        const t = newTurn("t1", "c1", "p");
        applyEvent(t, { turn: "t1", conversation: "c1", kind: "toolCall", toolCall: { id: "c", name: "mcp__a__x", arguments: {}, approval, decidedBy } });
        return approvalText(t.tools[0]);
    };
    assert.equal(byHost("allowlist"), "allowed (on your allowlist)");
    assert.equal(byHost("mode"), "allowed (mode always-allow)");
    assert.equal(byHost("timeout", "denied"), "denied (no answer in time)");
});

test("the host's label and summary are what a person reads", () => {
    const t = newTurn("t1", "c1", "p");
    applyEvent(t, { turn: "t1", conversation: "c1", kind: "toolCall", toolCall: { id: "c", name: "mcp__a__x", arguments: {}, approval: "denied", decidedBy: "user", label: "denied by you" } });
    const model = "the user denied it (decided by user: denied by the user). Do not retry it unless the user asks.";
    applyEvent(t, { turn: "t1", conversation: "c1", kind: "toolResult", result: { id: "c", name: "mcp__a__x", isError: true, text: model, truncated: false, bytes: 1, summary: "You denied mcp__a__x." } });
    assert.equal(approvalText(t.tools[0]), "denied by you");
    assert.equal(t.tools[0].result?.shown, "You denied mcp__a__x.");
    assert.equal(t.tools[0].result?.text, model, "the model's text is kept for the model");
    const a = newTurn("t1", "c1", "p");
    applyEvent(a, { turn: "t1", conversation: "c1", kind: "toolCall", toolCall: { id: "c", name: "mcp__a__x", arguments: {}, approval: "allowed", decidedBy: "user", label: "allowed once by you" } });
    applyEvent(a, { turn: "t1", conversation: "c1", kind: "toolResult", result: { id: "c", name: "mcp__a__x", isError: false, text: "long", truncated: true, bytes: 9 } });
    assert.equal(approvalText(a.tools[0]), "allowed once by you");
    assert.equal(a.tools[0].result?.shown, "long\n[truncated]");
});

test("paths under the home folder are written with ~", () => {
    assert.equal(fmt.tildePath("/home/me/.config/switchboard/allow_tool", "/home/me"), "~/.config/switchboard/allow_tool");
    assert.equal(fmt.tildePath("/home/meg/x", "/home/me"), "/home/meg/x");
    assert.equal(fmt.tildePath("/etc/x", ""), "/etc/x");
});

test("a shared server says how many windows use it, and a daemon of another build is named", () => {
    const shared = srv("s", "ready", { shared: { scope: "user", windows: 3, daemonPid: 42, daemonBuild: "1.4.2", warning: "restart it" } });
    assert.equal(fmt.serverDescription(shared), "ready · 3 tools · stdio · shared (3 windows)");
    assert.equal(fmt.serverDescription(srv("own", "ready")), "ready · 3 tools · stdio");
    const report = fmt.serverReport(shared, []);
    assert.match(report, /- Shared: shared \(3 windows\), user scope, daemon pid 42/);
    assert.match(report, /- Warning: restart it/);
    // The list says it too: only it tells a person to restart a daemon of another build.
    assert.equal(fmt.serverDetail(shared), "Warning: restart it");
    assert.equal(fmt.serverDetail(srv("s", "failed", { error: "boom", shared: { scope: "user", windows: 1, daemonPid: 42, warning: "restart it" } })), "Error: boom");
    // `switchboard daemon stop`: the server stopped, said as news, not as an error.
    assert.equal(fmt.serverDetail(srv("s", "stopped", { error: "the shared-server daemon was stopped with `switchboard daemon stop`; Reconnect starts the server again" })),
        "the shared-server daemon was stopped with `switchboard daemon stop`; Reconnect starts the server again");
    assert.equal(fmt.sharedLabel(1), "shared (1 window)");
});

test("the server list names a 2026-07-28 server's protocol, as README says the editors' lists do", () => {
    assert.equal(fmt.serverDescription(srv("new", "ready", { protocolVersion: "2026-07-28" })), "ready · 3 tools · stdio · MCP 2026-07-28");
    // The older revision is the usual case: not shown (as in Neovim's list).
    assert.equal(fmt.serverDescription(srv("old", "ready", { protocolVersion: "2025-11-25" })), "ready · 3 tools · stdio");
    const both = srv("s", "ready", { protocolVersion: "2026-07-28", shared: { scope: "user", windows: 2, daemonPid: 42 } });
    assert.equal(fmt.serverDescription(both), "ready · 3 tools · stdio · MCP 2026-07-28 · shared (2 windows)");
});

test("Call Tool with no tool says why: blocked by the organisation or failed is not \"yet\"", () => {
    assert.equal(fmt.noToolsText([]), "Switchboard: no MCP servers are configured.");
    assert.equal(
        fmt.noToolsText([srv("a", "blocked"), srv("b", "blocked"), srv("c", "failed")]),
        "Switchboard: no MCP server offers a tool (2 blocked by your organisation, 1 failed); Show Servers says why.",
    );
    assert.equal(fmt.noToolsText([srv("a", "ready", { tools: 0 })]), "Switchboard: no MCP server offers a tool yet.");
});

test("server text in a quick pick cannot draw VS Code's icons ($(name) is escaped as VS Code's own escapeIcons does)", () => {
    assert.equal(fmt.noIcons("$(pass) ready \\$(x) $(sync~spin)"), "\\$(pass) ready \\$(x) \\$(sync~spin)");
    assert.equal(fmt.serverDetail(srv("s", "failed", { error: "$(pass) all fine" })), "Error: \\$(pass) all fine");
    assert.equal(fmt.serverDetail(srv("s", "ready", { stderrTail: "x\n$(shield) verified" })), "stderr: \\$(shield) verified");
    assert.equal(fmt.serverDetail(srv("s", "blocked", { error: "Blocked $(x)" })), "Blocked \\$(x)");
});

test("visible escapes what hides or reorders text, as the host does; emoji stay", () => {
    const cases: [string, string][] = [
        ["pa\u202eth", "pa\\u202eth"],
        ["a\u200bb\u0085", "a\\u200bb\\u0085"],
        ["x\ufe01\u{e0100}", "x\\ufe01\\U000e0100"],
        ["ok \u2764\ufe0f", "ok \u2764\ufe0f"],
        ["\u2764\ufe0f\ufe0f", "\u2764\ufe0f\\ufe0f"],
        ["R\ufe0fe", "R\\ufe0fe"],
        ["\u2139\ufe0f \u2102\ufe0f \u2500\ufe0f", "\u2139\ufe0f \u2102\\ufe0f \u2500\\ufe0f"],
        ["\u001b[2J\n", "\\x1b[2J\\n"],
        ["café", "café"],
    ];
    for (const [input, want] of cases) assert.equal(fmt.visible(input), want, JSON.stringify(input));
});
