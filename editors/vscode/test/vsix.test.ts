// The platform .vsix that scripts/package.sh built (test.sh sets SWITCHBOARD_VSIX_PLATFORM): it
// carries an executable switchboard for its platform, and the generic one carries none.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { extRoot } from "./harness";

const platform = process.env["SWITCHBOARD_VSIX_PLATFORM"];
const generic = path.join(extRoot, "switchboard.vsix");

function entries(vsix: string): Map<string, string> {
    // unzip -Z: "-rwxr-xr-x  3.0 unx 11722914 bx ... extension/bin/switchboard"
    const out = execFileSync("unzip", ["-Z", vsix], { encoding: "utf8" });
    const m = new Map<string, string>();
    for (const line of out.split("\n")) {
        const f = line.trim().split(/\s+/);
        if (f.length >= 9 && /^[-d]/.test(f[0])) m.set(f[f.length - 1], f[0]);
    }
    return m;
}

test("the platform .vsix carries an executable switchboard and names its platform", { skip: !platform && "SWITCHBOARD_VSIX_PLATFORM is not set (scripts/test.sh sets it)" }, () => {
    const vsix = platform as string;
    const target = /switchboard-([a-z0-9]+-[a-z0-9]+)\.vsix$/.exec(vsix)?.[1];
    assert.ok(target, vsix);
    const files = entries(vsix);
    const exe = target.startsWith("win32") ? "extension/bin/switchboard.exe" : "extension/bin/switchboard";
    assert.match(files.get(exe) ?? "(missing)", /^-rwx/, `${exe} is executable in the zip`);
    assert.ok(files.has("extension/dist/main.js"));
    assert.ok(files.has("extension/dist/view.js"), "the MCP Apps view bridge (views.ts) ships");
    const manifest = execFileSync("unzip", ["-p", vsix, "extension.vsixmanifest"], { encoding: "utf8" });
    assert.match(manifest, new RegExp(`TargetPlatform="${target}"`));
    // The binary runs here (this machine's target) and is the one the tests use.
    const dir = fs.mkdtempSync(path.join(extRoot, "test", ".work", "vsix-"));
    execFileSync("unzip", ["-q", vsix, exe, "-d", dir]);
    const out = execFileSync(path.join(dir, exe), ["--version"], { encoding: "utf8" });
    assert.match(out, /switchboard/i);
});

test("the generic .vsix carries no binary", { skip: !fs.existsSync(generic) && "no switchboard.vsix" }, () => {
    assert.ok(![...entries(generic).keys()].some((f) => f.startsWith("extension/bin/")));
});
