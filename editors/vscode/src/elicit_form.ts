// The rules of an elicitation form (no vscode import, unit-tested under plain node): how a field is
// asked, what an answer must look like, and how text typed into an input box becomes a value.
// The checks mirror the host's (mcpbridge/elicit_schema.go, ValidateElicitation), so that the host
// rarely refuses an answer; when it does, refusedField finds the field its message names.

import type { ElicitField, ElicitValue } from "./lsp_types";

/** How a field is asked: an input box (text, number) or a quick pick (choice, yesno, multi). */
export type FieldKind = "text" | "number" | "choice" | "yesno" | "multi";

export function fieldKind(f: ElicitField): FieldKind {
    switch (f.type) {
        case "number":
        case "integer":
            return "number";
        case "boolean":
            return "yesno";
        case "array":
            return "multi";
        default:
            return f.enum && f.enum.length > 0 ? "choice" : "text";
    }
}

/** The field's title, else its name. */
export function fieldLabel(f: ElicitField): string {
    return f.title?.trim() ? f.title.trim() : f.name;
}

/** The labels of a field's choices: enumTitles when they fit, else the values. */
export function choiceTitles(f: ElicitField): string[] {
    const values = f.enum ?? [];
    const titles = f.enumTitles;
    return values.map((v, i) => (titles && titles.length === values.length && titles[i] ? titles[i] : v));
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
const num = (x: number): string => String(x);

/** Unicode code points, as the host counts (utf8.RuneCountInString). */
export function length(s: string): number {
    return [...s].length;
}

// RFC 5322 dot-atom text as Go's net/mail reads it (non-ASCII allowed), or a domain literal.
const atext = `[^\\s\\x00-\\x1f\\x7f()<>\\[\\]:;@\\\\,".]+`;
const dotAtom = `${atext}(?:\\.${atext})*`;
const emailRe = new RegExp(`^${dotAtom}@(?:${dotAtom}|\\[[^\\[\\]\\\\\\s]*\\])$`, "u");
const schemeRe = /^[A-Za-z][A-Za-z0-9+.-]*:/;
// eslint-disable-next-line no-control-regex
const controlRe = /[\x00-\x1f\x7f]/;
const badEscapeRe = /%(?![0-9A-Fa-f]{2})/;
const dateRe = /^(\d{4})-(\d{2})-(\d{2})$/;
// Go's time.Parse(time.RFC3339): upper-case T and Z, a fraction after "." or ",", offsets up to 24:60.
const dateTimeRe = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})([.,]\d+)?(Z|[+-](\d{2}):(\d{2}))$/;
// The authority of a hierarchical URI: what Go's url.Parse checks of the host and port.
const authorityRe = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;
const hostPortRe = /^(?:\[[^\]\s]*\]|[^\s%:[\]]*)(?::\d*)?$/;

function validDate(y: number, m: number, d: number): boolean {
    if (m < 1 || m > 12 || d < 1) return false;
    const days = new Date(Date.UTC(y, m, 0)).getUTCDate(); // day 0 of the next month: the last day of m
    return d <= days;
}

function validURI(s: string): boolean {
    if (!schemeRe.test(s) || controlRe.test(s) || badEscapeRe.test(s)) return false;
    const authority = authorityRe.exec(s)?.[1];
    if (authority === undefined) return true;
    const host = authority.slice(authority.lastIndexOf("@") + 1);
    return hostPortRe.test(host);
}

/** Why s does not have the format, or undefined. */
export function checkFormat(format: string | undefined, s: string): string | undefined {
    switch (format) {
        case "email":
            return emailRe.test(s) ? undefined : "Must be an email address.";
        case "uri":
            return validURI(s) ? undefined : "Must be a URI with a scheme (https://...).";
        case "date": {
            const m = dateRe.exec(s);
            return m && validDate(Number(m[1]), Number(m[2]), Number(m[3])) ? undefined : "Must be a date (YYYY-MM-DD).";
        }
        case "date-time": {
            const m = dateTimeRe.exec(s);
            const ok =
                m !== null &&
                validDate(Number(m[1]), Number(m[2]), Number(m[3])) &&
                Number(m[4]) <= 23 &&
                Number(m[5]) <= 59 &&
                Number(m[6]) <= 59 &&
                (m[8] === "Z" || (Number(m[9]) <= 24 && Number(m[10]) <= 60));
            return ok ? undefined : "Must be a date and time (RFC 3339, e.g. 2026-11-30T12:00:00Z).";
        }
        default:
            return undefined;
    }
}

/** Why v is not a valid value of f (the host's rules), or undefined. */
export function checkValue(f: ElicitField, v: unknown): string | undefined {
    switch (f.type) {
        case "string": {
            if (typeof v !== "string") return "Must be text.";
            const n = length(v);
            if (f.minLength !== undefined && n < f.minLength) return `Must be at least ${plural(f.minLength, "character")}.`;
            if (f.maxLength !== undefined && n > f.maxLength) return `Must be at most ${plural(f.maxLength, "character")}.`;
            if (f.enum && f.enum.length > 0 && !f.enum.includes(v)) return `Must be one of ${choiceTitles(f).join(", ")}.`;
            return checkFormat(f.format, v);
        }
        case "number":
        case "integer": {
            if (typeof v !== "number" || !Number.isFinite(v)) return "Must be a number.";
            if (f.type === "integer" && !Number.isInteger(v)) return "Must be a whole number.";
            if (f.minimum !== undefined && v < f.minimum) return `Must be at least ${num(f.minimum)}.`;
            if (f.maximum !== undefined && v > f.maximum) return `Must be at most ${num(f.maximum)}.`;
            return undefined;
        }
        case "boolean":
            return typeof v === "boolean" ? undefined : "Must be yes or no.";
        case "array": {
            if (!Array.isArray(v)) return "Must be a list of choices.";
            if (f.minItems !== undefined && v.length < f.minItems) return `Pick at least ${plural(f.minItems, "choice")}.`;
            if (f.maxItems !== undefined && v.length > f.maxItems) return `Pick at most ${plural(f.maxItems, "choice")}.`;
            const allowed = f.enum ?? [];
            if (v.some((x) => typeof x !== "string" || !allowed.includes(x))) return `Each choice must be one of ${choiceTitles(f).join(", ")}.`;
            return undefined;
        }
        default:
            return undefined;
    }
}

/** The first problem of a whole answer: a missing required field or a bad value. */
export function checkContent(fields: readonly ElicitField[], content: Record<string, unknown>): { field: string; message: string } | undefined {
    for (const name of Object.keys(content)) {
        if (!fields.some((f) => f.name === name)) return { field: name, message: `"${name}" is not a field of this form.` };
    }
    for (const f of fields) {
        const v = content[f.name];
        if (v === undefined || v === null) {
            if (f.required) return { field: f.name, message: `${fieldLabel(f)} is required.` };
            continue;
        }
        const problem = checkValue(f, v);
        if (problem) return { field: f.name, message: `${fieldLabel(f)}: ${problem}` };
    }
    return undefined;
}

/** The field's default when it is a valid value (the host drops invalid ones too). */
export function defaultValue(f: ElicitField): ElicitValue | undefined {
    const d = f.default;
    if (d === undefined || d === null) return undefined;
    if (checkValue(f, d) !== undefined) return undefined;
    return d as ElicitValue;
}

// A JSON-like decimal number; also a leading "+" or a bare ".5".
const numberRe = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Text typed for a field (input box) to a value: undefined for empty text, or the problem. */
export function parseText(f: ElicitField, text: string): { value?: ElicitValue; problem?: string } {
    if (fieldKind(f) === "number") {
        const t = text.trim();
        if (t === "") return {};
        if (!numberRe.test(t)) return { problem: f.type === "integer" ? "Must be a whole number." : "Must be a number." };
        const value = Number(t);
        const problem = checkValue(f, value);
        return problem ? { problem } : { value };
    }
    if (text === "") return {};
    const problem = checkValue(f, text);
    return problem ? { problem } : { value: text };
}

/** What the input box shows about an empty answer: required, or how to skip. */
export function emptyProblem(f: ElicitField): string | undefined {
    return f.required ? `${fieldLabel(f)} is required.` : undefined;
}

/** A value as the text of an input box. */
export function valueText(v: ElicitValue | undefined): string {
    if (v === undefined) return "";
    return Array.isArray(v) ? v.join(", ") : String(v);
}

/** A short description of what the field takes, for the input's placeholder. */
export function limitsText(f: ElicitField): string {
    const parts: string[] = [];
    switch (fieldKind(f)) {
        case "number": {
            const what = f.type === "integer" ? "a whole number" : "a number";
            if (f.minimum !== undefined && f.maximum !== undefined) parts.push(`${what} from ${num(f.minimum)} to ${num(f.maximum)}`);
            else if (f.minimum !== undefined) parts.push(`${what}, at least ${num(f.minimum)}`);
            else if (f.maximum !== undefined) parts.push(`${what}, at most ${num(f.maximum)}`);
            else parts.push(what);
            break;
        }
        case "text": {
            const fmt = { email: "an email address", uri: "a URI (https://...)", date: "a date (YYYY-MM-DD)", "date-time": "a date and time (2026-11-30T12:00:00Z)" };
            parts.push(f.format && f.format in fmt ? fmt[f.format] : "text");
            if (f.minLength !== undefined && f.maxLength !== undefined) parts.push(`${f.minLength} to ${plural(f.maxLength, "character")}`);
            else if (f.minLength !== undefined && f.minLength > 0) parts.push(`at least ${plural(f.minLength, "character")}`);
            else if (f.maxLength !== undefined) parts.push(`at most ${plural(f.maxLength, "character")}`);
            break;
        }
        case "multi":
            if (f.minItems !== undefined && f.maxItems !== undefined) parts.push(`pick ${f.minItems} to ${f.maxItems}`);
            else if (f.minItems !== undefined) parts.push(`pick at least ${f.minItems}`);
            else if (f.maxItems !== undefined) parts.push(`pick at most ${f.maxItems}`);
            else parts.push("pick any");
            break;
        default:
            break;
    }
    if (!f.required) parts.push(fieldKind(f) === "multi" ? "none to skip" : "empty to skip");
    return parts.join(", ");
}

/** The field a host refusal names ("switchboard.elicit: \"count\" (How many): must be ..."). */
export function refusedField(fields: readonly ElicitField[], message: string): string | undefined {
    for (const m of message.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
        let name: string;
        try {
            name = JSON.parse(`"${m[1]}"`) as string;
        } catch {
            name = m[1];
        }
        if (fields.some((f) => f.name === name)) return name;
    }
    return undefined;
}

/** Cuts text to max characters on one line, with an ellipsis. */
export function clip(s: string, max: number): string {
    const line = s.replace(/\s+/g, " ").trim();
    const chars = [...line];
    return chars.length > max ? chars.slice(0, max - 1).join("") + "…" : line;
}
