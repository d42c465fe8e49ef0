// The Call Tool form's rules (no vscode import, unit-tested under plain node): a tool's JSON Schema
// becomes the elicitation form's typed fields (elicit_form.ts validates them); what cannot be asked
// field by field (objects, arrays of free values, unions) is asked as JSON text.

import * as form from "./elicit_form";
import { visible } from "./format";
import type { ElicitField, ElicitFormat } from "./lsp_types";

export interface ToolField {
    field: ElicitField;
    /** Asked as JSON text (the field's own type is not a simple one). */
    json: boolean;
    /** The schema's type, in words, for JSON fields. */
    schemaType: string;
}

const formats: readonly ElicitFormat[] = ["email", "uri", "date", "date-time"];

function rec(v: unknown): Record<string, unknown> | undefined {
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const strings = (v: unknown): string[] | undefined => (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string") ? (v) : undefined);

/**
 * The fields of a tool's input schema (top-level properties): required ones first, each group in
 * the schema's order (which the host's JSON may have sorted by name).
 */
export function toolFields(inputSchema: unknown): ToolField[] {
    return requiredFirst(fieldsInOrder(inputSchema));
}

function requiredFirst(fields: ToolField[]): ToolField[] {
    return [...fields.filter((f) => f.field.required), ...fields.filter((f) => !f.field.required)];
}

function fieldsInOrder(inputSchema: unknown): ToolField[] {
    const schema = rec(inputSchema);
    const props = rec(schema?.["properties"]);
    if (!props) return [];
    const required = new Set(strings(schema?.["required"]) ?? []);
    return Object.entries(props).map(([name, raw]) => {
        const p = rec(raw) ?? {};
        // What the server wrote is shown escaped (the host hands the schema on as it is: its
        // property names are the call's arguments); the name itself stays the argument's.
        const base: ElicitField = { name, type: "string", required: required.has(name) };
        if (typeof p["title"] === "string") base.title = visible(p["title"]);
        else if (visible(name) !== name) base.title = visible(name);
        if (typeof p["description"] === "string") base.description = visible(p["description"]);
        const t = p["type"];
        const items = rec(p["items"]);
        if (t === "string" || (t === undefined && strings(p["enum"]))) {
            const f: ElicitField = { ...base, type: "string" };
            const e = strings(p["enum"]);
            if (e) f.enum = e;
            if (e && e.some((v) => visible(v) !== v)) f.enumTitles = e.map(visible);
            if (typeof p["format"] === "string" && (formats as readonly string[]).includes(p["format"])) f.format = p["format"] as ElicitFormat;
            if (num(p["minLength"]) !== undefined) f.minLength = num(p["minLength"]);
            if (num(p["maxLength"]) !== undefined) f.maxLength = num(p["maxLength"]);
            if (typeof p["default"] === "string") f.default = p["default"];
            return { field: f, json: false, schemaType: "string" };
        }
        if (t === "number" || t === "integer") {
            const f: ElicitField = { ...base, type: t };
            if (num(p["minimum"]) !== undefined) f.minimum = num(p["minimum"]);
            if (num(p["maximum"]) !== undefined) f.maximum = num(p["maximum"]);
            if (num(p["default"]) !== undefined) f.default = p["default"];
            return { field: f, json: false, schemaType: t };
        }
        if (t === "boolean") {
            const f: ElicitField = { ...base, type: "boolean" };
            if (typeof p["default"] === "boolean") f.default = p["default"];
            return { field: f, json: false, schemaType: "boolean" };
        }
        if (t === "array" && strings(items?.["enum"])) {
            const f: ElicitField = { ...base, type: "array", enum: strings(items?.["enum"]) };
            if (f.enum?.some((v) => visible(v) !== v)) f.enumTitles = f.enum.map(visible);
            if (num(p["minItems"]) !== undefined) f.minItems = num(p["minItems"]);
            if (num(p["maxItems"]) !== undefined) f.maxItems = num(p["maxItems"]);
            return { field: f, json: false, schemaType: "array" };
        }
        const schemaType = Array.isArray(t) ? t.join(" or ") : typeof t === "string" ? (t === "array" && typeof items?.["type"] === "string" ? `array of ${items["type"]}` : t) : "any JSON value";
        return { field: base, json: true, schemaType };
    });
}

/** Text typed for a field to an argument value: undefined for empty text, or the problem. */
export function parseArgument(f: ToolField, text: string): { value?: unknown; problem?: string } {
    if (!f.json) return form.parseText(f.field, text);
    if (text.trim() === "") return {};
    try {
        return { value: JSON.parse(text) as unknown };
    } catch {
        return { problem: `Must be JSON (${f.schemaType}), for example ${f.schemaType.startsWith("array") ? "[1, 2]" : f.schemaType === "object" ? '{"key": "value"}' : '"text"'}.` };
    }
}

/** The arguments of the call: every answered field, in the fields' order. */
export function toolArguments(fields: readonly ToolField[], values: ReadonlyMap<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const f of fields) {
        const v = values.get(f.field.name);
        if (v !== undefined) out[f.field.name] = v;
    }
    return out;
}
