// lsp_ext.ts holds every host method and command name and nothing else, and they are exactly the
// switchboard names of host/wire/names.go (host/wire/names_test.go checks the same from the Go side).
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { Cmd, Notify } from "../src/lsp_ext";

const root = path.resolve(__dirname, "..", "..", "..");

test("lsp_ext.ts has only switchboard method names, the same as host/wire/names.go", () => {
    const ts = fs.readFileSync(path.join(root, "editors/vscode/src/lsp_ext.ts"), "utf8");
    const literals = [...ts.matchAll(/"([^"\\]*)"|'([^'\\]*)'|`([^`\\]*)`/g)].map((m) => m[1] ?? m[2] ?? m[3]);
    assert.ok(literals.length > 0);
    for (const l of literals) assert.match(l, /^switchboard[./][A-Za-z./]+$/, `unexpected literal ${JSON.stringify(l)}`);
    assert.deepEqual(new Set(literals), new Set([...Object.values(Cmd), ...Object.values(Notify)]));

    const go = fs.readFileSync(path.join(root, "host/wire/names.go"), "utf8");
    const hostNames = new Set([...go.matchAll(/"(switchboard[./][A-Za-z./]+)"/g)].map((m) => m[1]));
    assert.deepEqual(new Set(literals), hostNames);
});
