// Loads the bundled extension (dist/main.js, with the real vscode-languageclient inside) under plain
// node, with `require("vscode")` answered by test/stubs/vscode, against the real switchboard binary
// and the test MCP server cmd/mcptest, each in a fresh XDG config and state folder.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import Module from "node:module";
import * as os from "node:os";
import * as path from "node:path";

const here = __dirname;
export const extRoot = path.resolve(here, "..");
export const repoRoot = path.resolve(extRoot, "../..");
const stubPath = path.join(here, "stubs", "vscode", "index.js");

type Resolve = (request: string, ...rest: unknown[]) => string;
const mod = Module as unknown as { _resolveFilename: Resolve };
const original = mod._resolveFilename;
mod._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]) {
    if (request === "vscode") return stubPath;
    return original.call(this, request, ...rest);
};

export const vscode = require("vscode");
export const stub = vscode.__stub;

/** Builds (or takes from $SWITCHBOARD_BIN / $MCPTEST_BIN) the two Go binaries, copied into dir. */
export function binaries(dir: string): { switchboard: string; mcptest: string } {
    const out = path.join(dir, "bin");
    fs.mkdirSync(out, { recursive: true });
    const get = (env: string, pkg: string, name: string): string => {
        const dst = path.join(out, name);
        const given = process.env[env];
        if (given) {
            fs.copyFileSync(given, dst);
            fs.chmodSync(dst, 0o755);
        } else {
            execFileSync("go", ["build", "-o", dst, pkg], { cwd: repoRoot, stdio: "inherit" });
        }
        return dst;
    };
    return { switchboard: get("SWITCHBOARD_BIN", "./cmd/switchboard", "switchboard"), mcptest: get("MCPTEST_BIN", "./cmd/mcptest", "mcptest") };
}

export interface Env {
    dir: string;
    bin: { switchboard: string; mcptest: string };
    allowlist: string;
    events: string;
}

/** A fresh folder with XDG dirs, set in process.env so the host (a child) inherits them. */
export function freshEnv(name: string): Env {
    const base = path.join(extRoot, "test", ".work");
    fs.mkdirSync(base, { recursive: true });
    const dir = fs.mkdtempSync(path.join(base, `${name}-`));
    const bin = binaries(dir);
    process.env["XDG_CONFIG_HOME"] = path.join(dir, "config");
    process.env["XDG_STATE_HOME"] = path.join(dir, "state");
    process.env["XDG_DATA_HOME"] = path.join(dir, "data");
    process.env["SWITCHBOARD_EVENTS"] = path.join(dir, "events.jsonl");
    delete process.env["SWITCHBOARD_PATH"];
    delete process.env["SWITCHBOARD_VSCODE_TESTDIR"];
    fs.mkdirSync(path.join(dir, "config", "switchboard"), { recursive: true });
    return { dir, bin, allowlist: path.join(dir, "config", "switchboard", "allow_tool"), events: path.join(dir, "events.jsonl") };
}

export function readAllowlist(env: Env): string[] {
    try {
        return fs
            .readFileSync(env.allowlist, "utf8")
            .split("\n")
            .map((l) => l.trim())
            .filter((l) => l && !l.startsWith("#"));
    } catch {
        return [];
    }
}

/** Processes whose command line mentions dir (the copied binaries live there). */
export function processesUnder(dir: string): string[] {
    const out = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
    return out
        .split("\n")
        .filter((l) => l.includes(dir) && !l.includes(" ps -eo"))
        .map((l) => l.trim());
}

export async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
        try {
            const v = await fn();
            if (v) return v;
        } catch (err) {
            last = err;
        }
        if (Date.now() > deadline) {
            throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
        }
        await new Promise((r) => setTimeout(r, 50));
    }
}

export function loadExtension(): { activate: (ctx: unknown) => any; deactivate: () => Promise<void> } {
    const main = path.join(extRoot, "dist", "main.js");
    if (!fs.existsSync(main)) throw new Error(`${main} is missing: run npm run build first`);
    return require(main);
}

export function fakeContext(): { subscriptions: { dispose(): unknown }[] } {
    return { subscriptions: [] };
}

export function tmpFile(prefix: string): string {
    return path.join(fs.mkdtempSync(path.join(os.tmpdir(), prefix)), "f");
}
