// lsp_types.ts against the contract: every interface that mirrors a struct of host/wire has the
// same fields, with the same optionality, as host/wire/shapes.json (generated from the Go structs).
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import ts from "typescript";

const root = path.resolve(__dirname, "..", "..", "..");

interface Field {
    type: string;
    optional?: boolean;
    nullable?: boolean;
}
interface Shapes {
    commands: string[];
    notifications: string[];
    types: Record<string, Record<string, Field>>;
}

const shapes: Shapes = JSON.parse(fs.readFileSync(path.join(root, "host/wire/shapes.json"), "utf8"));

/** The interfaces of a TS file: name -> field -> optional. */
function interfaces(file: string): Map<string, Map<string, boolean>> {
    const src = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const out = new Map<string, Map<string, boolean>>();
    src.forEachChild((node) => {
        if (!ts.isInterfaceDeclaration(node)) return;
        const fields = new Map<string, boolean>();
        for (const m of node.members) {
            if (ts.isPropertySignature(m) && m.name && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name))) {
                fields.set(m.name.text, m.questionToken !== undefined);
            }
        }
        out.set(node.name.text, fields);
    });
    return out;
}

// Interfaces the extension names differently from the Go struct they mirror.
const renamed: Record<string, string> = {
    SwitchboardEvent: "Event",
    EventToolCall: "ToolCallEvent",
    EventToolResult: "ToolResultEvent",
    HostSettings: "InitOptions",
};

// Interfaces the extension declares but may leave out fields of, with the reason. Empty: none.
const partial: Record<string, string> = {};

test("every interface of lsp_types.ts and config.ts that mirrors a wire struct has exactly its fields", () => {
    const mine = new Map([
        ...interfaces(path.join(root, "editors/vscode/src/lsp_types.ts")),
        ...interfaces(path.join(root, "editors/vscode/src/config.ts")),
    ]);
    let checked = 0;
    for (const [tsName, fields] of mine) {
        const name = renamed[tsName] ?? tsName;
        const want = shapes.types[name];
        if (!want) continue;
        checked++;
        for (const [field, optional] of fields) {
            const w = want[field];
            assert.ok(w, `${name}.${field} is not in the contract (host/wire/shapes.json)`);
            if (!w.optional && !w.nullable) assert.equal(optional, false, `${name}.${field} is always sent: it must not be optional`);
        }
        if (partial[name]) continue;
        for (const field of Object.keys(want)) {
            assert.ok(fields.has(field), `${name} lacks ${field} (host/wire/shapes.json has it)`);
        }
    }
    for (const [tsName, name] of Object.entries(renamed)) assert.ok(mine.has(tsName) && shapes.types[name], `${tsName} / ${name} gone`);
    assert.ok(checked >= 10, `only ${checked} interfaces matched a wire struct`);
});

test("lsp_ext.ts names are the contract's", async () => {
    const { Cmd, Notify } = await import("../src/lsp_ext");
    assert.deepEqual(new Set(Object.values(Cmd)), new Set(shapes.commands));
    assert.deepEqual(new Set(Object.values(Notify)), new Set(shapes.notifications));
});
