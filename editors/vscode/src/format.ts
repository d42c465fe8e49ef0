// Pure presentation logic (no vscode import), unit-tested under plain node.

import type { Approval, ServerState, ServerStatus, ToolInfo } from "./lsp_types";

export interface StatusSummary {
    text: string;
    /** The same in words, for screen readers (and the end-to-end test). */
    label: string;
    tooltip: string;
    /** "error" when a server failed, "warning" when approvals or questions wait, else "normal". */
    severity: "normal" | "warning" | "error";
}

export function countStates(servers: readonly ServerStatus[]): Record<ServerState, number> {
    const n: Record<ServerState, number> = { starting: 0, ready: 0, failed: 0, disabled: 0, untrusted: 0, stopped: 0, "needs-auth": 0, blocked: 0 };
    for (const s of servers) {
        if (s.state in n) n[s.state]++;
    }
    return n;
}

/** The status bar text: servers ready/failed, pending approvals and questions from MCP servers. */
export function statusSummary(
    connection: "starting" | "running" | "stopped",
    servers: readonly ServerStatus[],
    pending: number,
    questions = 0,
): StatusSummary {
    if (connection === "stopped") {
        return { text: "$(debug-disconnect) Switchboard", label: "Switchboard: not running", tooltip: "Switchboard: not running", severity: "error" };
    }
    if (connection === "starting") {
        return { text: "$(loading~spin) Switchboard", label: "Switchboard: starting", tooltip: "Switchboard: starting", severity: "normal" };
    }
    const n = countStates(servers);
    // Each glyph means one thing and carries a word: a bare "4/4" or one shield for two meanings
    // left people guessing.
    const parts = [`$(server) ${n.ready}/${servers.length} ready`];
    if (n.starting > 0) parts.push(`$(sync~spin) ${n.starting} starting`);
    if (n.failed > 0) parts.push(`$(error) ${n.failed} failed`);
    if (n.untrusted > 0) parts.push(`$(workspace-untrusted) ${n.untrusted} untrusted`);
    if (n["needs-auth"] > 0) parts.push(`$(account) ${n["needs-auth"]} need sign-in`);
    if (n.blocked > 0) parts.push(`$(circle-slash) ${n.blocked} blocked`);
    if (pending > 0) parts.push(`$(bell-dot) ${pending} to approve`);
    if (questions > 0) parts.push(`$(question) ${questions} question${questions === 1 ? "" : "s"}`);
    const lines = [`Switchboard: ${n.ready} of ${servers.length} MCP servers ready`];
    if (n.starting > 0) lines.push(`${n.starting} starting`);
    if (n.failed > 0) lines.push(`${n.failed} failed: ${servers.filter((s) => s.state === "failed").map((s) => s.name).join(", ")}`);
    if (n.untrusted > 0) lines.push(`${n.untrusted} waiting for trust`);
    if (n["needs-auth"] > 0) lines.push(`${n["needs-auth"]} need you to sign in: ${servers.filter((s) => s.state === "needs-auth").map((s) => s.name).join(", ")}`);
    if (n.blocked > 0) lines.push(`${n.blocked} blocked by your organisation: ${servers.filter((s) => s.state === "blocked").map((s) => s.name).join(", ")}`);
    if (pending > 0) lines.push(`${pending} tool call${pending === 1 ? "" : "s"} waiting for approval`);
    if (questions > 0) lines.push(`${questions} question${questions === 1 ? "" : "s"} from MCP servers waiting for an answer`);
    lines.push("Click for the list.");
    const severity = n.failed > 0 ? "error" : pending > 0 || questions > 0 ? "warning" : "normal";
    const words = [`Switchboard: ${n.ready} of ${servers.length} servers ready`];
    if (n.starting > 0) words.push(`${n.starting} starting`);
    if (n.failed > 0) words.push(`${n.failed} failed`);
    if (n.untrusted > 0) words.push(`${n.untrusted} untrusted`);
    if (n["needs-auth"] > 0) words.push(`${n["needs-auth"]} need sign-in`);
    if (n.blocked > 0) words.push(`${n.blocked} blocked by your organisation`);
    if (pending > 0) words.push(`${pending} pending approval${pending === 1 ? "" : "s"}`);
    if (questions > 0) words.push(`${questions} server question${questions === 1 ? "" : "s"}`);
    return { text: parts.join(" "), label: words.join(", "), tooltip: lines.join("\n"), severity };
}

const stateIcon: Record<string, string> = {
    ready: "$(pass)",
    starting: "$(sync~spin)",
    failed: "$(error)",
    disabled: "$(circle-slash)",
    untrusted: "$(workspace-untrusted)",
    "needs-auth": "$(account)",
    stopped: "$(debug-stop)",
    blocked: "$(circle-slash)",
};

export function serverLabel(s: ServerStatus): string {
    return `${stateIcon[s.state] ?? "$(question)"} ${s.name}`;
}

export function serverDescription(s: ServerStatus): string {
    if (s.state === "blocked") return "blocked by your organisation";
    const tools = `${s.tools} tool${s.tools === 1 ? "" : "s"}`;
    // The older revision is the usual case: only the new one is named (as in Neovim's list).
    const era = s.protocolVersion === "2026-07-28" ? " · MCP 2026-07-28" : "";
    const shared = s.shared ? ` · ${sharedLabel(s.shared.windows)}` : "";
    return `${s.state} · ${tools} · ${s.transport}${era}${shared}`;
}

/** "shared (3 windows)": a server that runs once for several windows. */
export function sharedLabel(windows: number): string {
    return `shared (${windows} window${windows === 1 ? "" : "s"})`;
}

/** One line of detail for a quick pick: the error, else a shared server's warning, else the last stderr line, else the source. */
export function serverDetail(s: ServerStatus): string {
    // The policy's sentence, or why a shared server stopped (`switchboard daemon stop`): not a failure.
    if ((s.state === "blocked" || s.state === "stopped") && s.error) return noIcons(oneLine(s.error));
    if (s.error) return `Error: ${noIcons(oneLine(s.error))}`;
    if (s.shared?.warning) return `Warning: ${noIcons(oneLine(s.shared.warning))}`; // a daemon of another build: what to do
    const tail = lastLine(s.stderrTail);
    if (tail) return `stderr: ${noIcons(tail)}`;
    return `from ${noIcons(s.source)}`;
}

/**
 * Call Tool with no tool to offer: why, from the servers' states (a policy that blocks every
 * server, or servers that failed, is not "yet").
 */
export function noToolsText(servers: readonly ServerStatus[]): string {
    if (servers.length === 0) return "Switchboard: no MCP servers are configured.";
    const n = countStates(servers);
    const why: string[] = [];
    if (n.blocked > 0) why.push(`${n.blocked} blocked by your organisation`);
    if (n.failed > 0) why.push(`${n.failed} failed`);
    if (n.untrusted > 0) why.push(`${n.untrusted} waiting for trust`);
    if (n["needs-auth"] > 0) why.push(`${n["needs-auth"]} need sign-in`);
    if (n.starting > 0) why.push(`${n.starting} starting`);
    if (why.length === 0) return "Switchboard: no MCP server offers a tool yet.";
    return `Switchboard: no MCP server offers a tool (${why.join(", ")}); Show Servers says why.`;
}

/** A tool's marks, in a few words each: auto-approved, has a view, only for views, what the organisation's policy says. */
export function toolMarks(t: ToolInfo): string[] {
    const marks: string[] = [];
    if (t.policy === "deny") marks.push("blocked by your organisation");
    else if (t.policy === "ask") marks.push("always asks (organisation)");
    if (t.allowlisted && t.policy !== "deny") marks.push("auto-approved");
    if (t.view) marks.push("has a view");
    if (t.appOnly) marks.push("only for its view");
    return marks;
}

/** A full Markdown report of one server: state, tools, error and stderr tail. */
export function serverReport(s: ServerStatus, tools: readonly ToolInfo[]): string {
    const out: string[] = [];
    out.push(`# MCP server \`${s.name}\``, "");
    out.push(`- State: **${s.state}**`);
    out.push(`- Transport: ${s.transport}`);
    if (s.protocolVersion) out.push(`- Protocol: MCP ${s.protocolVersion}`);
    if (s.shared) {
        out.push(`- Shared: ${sharedLabel(s.shared.windows)}, ${s.shared.scope} scope, daemon pid ${s.shared.daemonPid}`);
        if (s.shared.warning) out.push(`- Warning: ${mdText(oneLine(s.shared.warning))}`);
    }
    out.push(`- Source: ${s.source}`);
    if (s.command) out.push(`- Command: \`${s.command}\``);
    if (s.sandbox) out.push(`- Sandbox: ${mdText(s.sandbox)}`);
    else if (s.transport === "stdio") out.push("- Sandbox: none (runs with your full rights)");
    out.push(`- Tools: ${s.tools}`);
    out.push(`- Instructions: ${s.instructions ? "yes" : "no"}`);
    if (s.state === "blocked") {
        out.push("", "## Blocked by your organisation", "", fence(s.error ?? "Blocked by your organisation's policy."));
        if (s.policy) out.push("", `Rule: ${codeSpan(s.policy.rule)}`);
    } else if (s.error) out.push("", "## Error", "", fence(s.error));
    if (s.blocked && s.blocked.length > 0) {
        out.push("", "## Blocked by the sandbox", "", ...s.blocked.map((b) => `- ${mdText(oneLine(b))}`));
    }
    if (tools.length > 0) {
        out.push("", "## Tools", "", "Run one with **Switchboard: Call Tool...** (it asks for each parameter and goes through approval).");
        for (const t of tools) {
            const marks = toolMarks(t);
            out.push("", `### ${codeSpan(t.tool)}${marks.length > 0 ? ` (${marks.join(", ")})` : ""}`, "");
            if (t.policyRule) out.push(`Rule: ${codeSpan(t.policyRule)}`, "");
            if (t.description) out.push(mdText(oneLine(t.description)), "");
            const params = schemaParams(t.inputSchema);
            if (params.length === 0) {
                out.push("No parameters.");
                continue;
            }
            out.push("| Parameter | Type | Required | Notes |", "| --- | --- | --- | --- |");
            for (const p of params) {
                const notes = [p.description, p.limits].filter((x) => x).join("; ");
                out.push(`| ${codeSpan(p.name)} | ${mdText(p.type)} | ${p.required ? "yes" : "no"} | ${mdText(notes)} |`);
            }
        }
    }
    if (s.stderrTail) out.push("", "## stderr (last lines)", "", fence(s.stderrTail));
    return out.join("\n") + "\n";
}

export function approvalLabel(a: Approval): string {
    return `$(bell-dot) ${a.tool}`;
}

export function approvalDescription(a: Approval, now: Date = new Date()): string {
    const t = Date.parse(a.requestedAt);
    const age = Number.isNaN(t) ? "" : ` · ${Math.max(0, Math.round((now.getTime() - t) / 1000))} s ago`;
    return `server ${a.server}${age}`;
}

/** A one-line preview of the arguments of a tool call, cut to max characters. */
export function argumentPreview(args: unknown, max = 120): string {
    let s: string;
    try {
        s = JSON.stringify(args ?? {});
    } catch {
        s = String(args);
    }
    if (s === undefined) s = "";
    return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

/**
 * Server text for a quick pick's label, description or detail, which draw "$(name)" as one of VS
 * Code's icons: escaped as VS Code's own escapeIcons does, so a server cannot draw a check mark.
 */
export function noIcons(s: string): string {
    return s.replace(/(\\)?\$\(([a-z0-9~-]+)\)/gi, (m: string, escaped?: string) => (escaped ? m : `\\${m}`));
}

/**
 * Text a server wrote, for a notification: each "](" as `]\(`. VS Code renders "[label](target)"
 * in a notification as a link that hides its target behind the label and runs a command: target
 * (with its arguments: a terminal's sendSequence types into a shell) when it is clicked. The host
 * writes its own messages so (safetext.NoLinks); this is for text the extension puts in one.
 */
export function noLinks(s: string): string {
    return s.replace(/\]\(/g, "]\\(");
}

export function oneLine(s: string): string {
    return s.replace(/\s*\n\s*/g, " ⏎ ").trim();
}

export function lastLine(s: string | undefined): string {
    if (!s) return "";
    const lines = s.split("\n").map((l) => l.trim()).filter((l) => l.length > 0);
    return lines.length > 0 ? lines[lines.length - 1] : "";
}

/** One parameter of a tool, read from its JSON Schema (top-level properties only). */
export interface SchemaParam {
    name: string;
    type: string;
    required: boolean;
    description: string;
    /** Range, length, choices and default, in words. */
    limits: string;
    schema: Record<string, unknown>;
}

function rec(v: unknown): Record<string, unknown> | undefined {
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function typeOf(p: Record<string, unknown>): string {
    const t = p["type"];
    if (typeof t === "string") {
        const items = rec(p["items"]);
        return t === "array" && typeof items?.["type"] === "string" ? `array of ${items["type"]}` : t;
    }
    if (Array.isArray(t)) return t.filter((x) => typeof x === "string").join(" or ");
    if (Array.isArray(p["enum"])) return "choice";
    if (Array.isArray(p["anyOf"]) || Array.isArray(p["oneOf"])) return "any of several";
    return "any";
}

/** The parameters of a tool's input schema, required ones first. */
export function schemaParams(inputSchema: unknown): SchemaParam[] {
    const schema = rec(inputSchema);
    const props = rec(schema?.["properties"]);
    if (!props) return [];
    const required = new Set(Array.isArray(schema?.["required"]) ? (schema["required"] as unknown[]).filter((x) => typeof x === "string") : []);
    // Required first, each group in the schema's order.
    const names = Object.keys(props);
    const ordered = [...names.filter((n) => required.has(n)), ...names.filter((n) => !required.has(n))];
    return ordered.map((name) => [name, props[name]] as const).map(([name, raw]) => {
        const p = rec(raw) ?? {};
        const limits: string[] = [];
        const min = p["minimum"], max = p["maximum"];
        if (typeof min === "number" && typeof max === "number") limits.push(`${min} to ${max}`);
        else if (typeof min === "number") limits.push(`at least ${min}`);
        else if (typeof max === "number") limits.push(`at most ${max}`);
        if (typeof p["minLength"] === "number") limits.push(`at least ${p["minLength"]} characters`);
        if (typeof p["maxLength"] === "number") limits.push(`at most ${p["maxLength"]} characters`);
        if (Array.isArray(p["enum"])) limits.push(`one of: ${p["enum"].map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(", ")}`);
        if (typeof p["format"] === "string") limits.push(`format ${p["format"]}`);
        if (p["default"] !== undefined) limits.push(`default ${typeof p["default"] === "string" ? p["default"] : JSON.stringify(p["default"])}`);
        return {
            name,
            type: typeOf(p),
            required: required.has(name),
            description: typeof p["description"] === "string" ? oneLine(p["description"]) : typeof p["title"] === "string" ? oneLine(p["title"]) : "",
            limits: limits.join("; "),
            schema: p,
        };
    });
}

/**
 * Server-controlled text as plain Markdown text on one line: no links, images, HTML, code spans or
 * table breaks. Only those characters are escaped, so the source stays readable.
 */
export function mdText(s: string): string {
    return oneLine(s).replace(/[\\`[\]<>|]/g, (c) => `\\${c}`);
}

/** Server-controlled text as an inline code span that cannot end early or break a table. */
export function codeSpan(s: string): string {
    const t = oneLine(s).replace(/\|/g, "\\|");
    return t.includes("`") ? `\`\` ${t.replace(/`/g, "\u02cb")} \`\`` : `\`${t}\``;
}

function fence(s: string): string {
    const ticks = s.includes("```") ? "````" : "```";
    return `${ticks}\n${s.replace(/\n$/, "")}\n${ticks}`;
}

/** The tools-plus-whole-server choice model of "Manage Tool Approvals...". */
export interface AllowChoice {
    label: string;
    entry: string; // the allowlist entry this choice stands for
    picked: boolean;
    wholeServer: boolean;
}

export function allowChoices(prefix: string, tools: readonly ToolInfo[], entries: readonly string[]): AllowChoice[] {
    const mine = entries.filter((e) => e.startsWith(prefix));
    const whole = mine.includes(prefix + "*");
    const choices: AllowChoice[] = [
        { label: `Whole server (${prefix}*)`, entry: prefix + "*", picked: whole, wholeServer: true },
    ];
    const seen = new Set<string>();
    for (const t of tools) {
        seen.add(t.name);
        choices.push({ label: noIcons(t.tool), entry: t.name, picked: whole || mine.includes(t.name) || t.allowlisted, wholeServer: false });
    }
    // Entries for tools the server no longer lists stay visible, so they can be revoked.
    for (const e of mine) {
        if (e === prefix + "*" || seen.has(e)) continue;
        choices.push({ label: e.slice(prefix.length), entry: e, picked: true, wholeServer: false });
    }
    return choices;
}

/** The entries to save for one prefix, from the picked choices. */
export function entriesFromPicks(prefix: string, picked: readonly AllowChoice[]): string[] {
    if (picked.some((c) => c.wholeServer)) return [prefix + "*"];
    return picked.map((c) => c.entry).sort();
}

/** A path with the home folder written as ~. */
export function tildePath(p: string, home: string): string {
    if (!home) return p;
    if (p === home) return "~";
    const h = home.endsWith("/") || home.endsWith("\\") ? home : home + (p.includes("\\") && !p.includes("/") ? "\\" : "/");
    return p.startsWith(h) ? `~${p.slice(h.length - 1)}` : p;
}

// Characters that act on or hide from what a person reads: C0/C1 controls, bidi controls,
// zero-width and other invisible characters, format characters (Cf), marks that show as nothing
// (variation selectors, Mongolian and Khmer ones), the line and paragraph separators. The host's
// escaper (mcpbridge/safetext) escapes the same set; this is for text the extension shows that
// the host hands on as data (a tool's input schema, whose property names are its arguments).
const invisible =
    // eslint-disable-next-line no-control-regex, no-misleading-character-class -- these characters are what it finds
    /^(?:[\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u206f\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb\u{e0100}-\u{e01ef}]|\p{Cf})$/u;
// The characters a presentation selector makes an emoji of (the bases of Unicode's emoji
// variation sequences, by block; keycap digits excepted): the host's list (safetext.emojiBases).
const emojiBases: readonly (readonly [number, number])[] = [
    [0xa9, 0xa9], [0xae, 0xae], [0x203c, 0x203c], [0x2049, 0x2049], [0x2122, 0x2122], [0x2139, 0x2139],
    [0x2194, 0x2199], [0x21a9, 0x21aa], [0x231a, 0x231b], [0x2328, 0x2328], [0x23cf, 0x23cf],
    [0x23e9, 0x23f3], [0x23f8, 0x23fa], [0x24c2, 0x24c2], [0x25aa, 0x25ab], [0x25b6, 0x25b6],
    [0x25c0, 0x25c0], [0x25fb, 0x25fe], [0x2600, 0x27bf], [0x2934, 0x2935], [0x2b05, 0x2b07],
    [0x2b1b, 0x2b1c], [0x2b50, 0x2b50], [0x2b55, 0x2b55], [0x3030, 0x3030], [0x303d, 0x303d],
    [0x3297, 0x3297], [0x3299, 0x3299], [0x1f000, 0x1faff],
];
const emojiBase = (cp: number): boolean => emojiBases.some(([lo, hi]) => cp >= lo && cp <= hi);

/** s with every such character written as a visible escape (`\u202e`, `\U000e0100`). A
 * presentation selector (U+FE0E, U+FE0F) stays right after an emoji base (U+2764 U+FE0F);
 * anywhere else it shows nothing and is escaped. */
export function visible(s: string): string {
    let out = "";
    let prev = "";
    for (const c of s) {
        const cp = c.codePointAt(0) ?? 0;
        const selector = cp === 0xfe0e || cp === 0xfe0f;
        const hide = selector ? !(prev !== "" && emojiBase(prev.codePointAt(0) ?? 0)) : invisible.test(c);
        prev = c;
        if (!hide) {
            out += c;
        } else if (cp === 0x0a) {
            out += "\\n";
        } else if (cp === 0x09) {
            out += "\\t";
        } else if (cp === 0x0d) {
            out += "\\r";
        } else if (cp < 0x20 || cp === 0x7f) {
            out += `\\x${cp.toString(16).padStart(2, "0")}`;
        } else {
            out += cp > 0xffff ? `\\U${cp.toString(16).padStart(8, "0")}` : `\\u${cp.toString(16).padStart(4, "0")}`;
        }
    }
    return out;
}
