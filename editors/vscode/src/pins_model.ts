// The review of changed tool definitions (issue 13) without vscode: what the diff editors show.

import type { PinsChangedParams, PinsResult } from "./lsp_types";

export type PinKind = "changed" | "new" | "removed";

/** One tool to review: the approved definition (left) against the current one (right). */
export interface PinReviewItem {
    server: string;
    tool: string;
    kind: PinKind;
    approved: string;
    current: string;
    diff: string;
}

/** Every tool of the result to review, changed first, then new, then removed (one server, or all). */
export function reviewItems(r: PinsResult, server?: string): PinReviewItem[] {
    const out: PinReviewItem[] = [];
    for (const s of r.servers ?? []) {
        if (server !== undefined && s.server !== server) continue;
        for (const kind of ["changed", "new", "removed"] as const) {
            for (const c of s[kind] ?? []) {
                out.push({ server: s.server, tool: c.tool, kind, approved: c.old ?? "", current: c.new ?? "", diff: c.diff });
            }
        }
    }
    return out;
}

/** The diff editor's title for one item. */
export function diffTitle(i: PinReviewItem): string {
    const what = i.kind === "changed" ? "approved ↔ now" : i.kind === "new" ? "new tool" : "removed tool";
    return `${i.server}: ${i.tool} (${what})`;
}

/** The toast for switchboard/pinsChanged: the host's sentence. */
export function pinsChangedMessage(p: PinsChangedParams): string {
    return `Switchboard: ${p.message}`;
}

export const reviewTitle = "Review";
export const acceptAllTitle = "Accept all";
export const acceptTitle = "Accept";
export const keepBlockedTitle = "Keep blocked";
