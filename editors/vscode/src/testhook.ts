// Test-only hook, inert unless the environment variable SWITCHBOARD_VSCODE_TESTDIR names a folder.
//
// The end-to-end test drives the real workbench through the browser, but some steps (start a tool
// call, ask the real VS Code API what it sees) have no UI. With the variable set, the extension
// writes <dir>/activated.json at activation and then polls <dir> for request files NAME.req.json
// {"command": string, "arguments": unknown[]}; it runs vscode.commands.executeCommand and writes
// NAME.res.json {"result"} or {"error"}. Nothing is read or run when the variable is unset.

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { Switchboard } from "./client";
import { errorMessage } from "./client";

export const testDirEnv = "SWITCHBOARD_VSCODE_TESTDIR";

export function startTestHook(sb: Switchboard, started: Promise<boolean>): vscode.Disposable | undefined {
    const dir = process.env[testDirEnv];
    if (!dir) return undefined;
    fs.mkdirSync(dir, { recursive: true });
    const seen = new Set<string>();
    const write = (file: string, value: unknown): void => {
        const tmp = path.join(dir, `.${file}.tmp`);
        fs.writeFileSync(tmp, JSON.stringify(value, null, 2));
        fs.renameSync(tmp, path.join(dir, file));
    };
    void started.then((ok) =>
        write("activated.json", {
            started: ok,
            vscodeVersion: vscode.version,
            binary: sb.binary ?? null,
            pid: process.pid,
            trusted: vscode.workspace.isTrusted,
        }),
    );
    sb.output.warn(`test hook active: ${dir}`);
    // window/showDocument with external (the OAuth sign-in page): recorded in showDocument.jsonl
    // and answered as opened, for the test plays the browser (code-server's openExternal of a
    // loopback URL never settled in the e2e). Other showDocument requests open the document.
    void started.then((ok) => {
        if (!ok || !sb.client) return;
        sb.client.onRequest("window/showDocument", async (p: { uri: string; external?: boolean; takeFocus?: boolean }) => {
            if (p.external) {
                fs.appendFileSync(path.join(dir, "showDocument.jsonl"), JSON.stringify({ uri: p.uri }) + "\n");
                return { success: true };
            }
            await vscode.window.showTextDocument(vscode.Uri.parse(p.uri), { preserveFocus: p.takeFocus === false });
            return { success: true };
        });
    });
    const poll = (): void => {
        let names: string[];
        try {
            names = fs.readdirSync(dir);
        } catch {
            return;
        }
        for (const name of names) {
            if (!name.endsWith(".req.json") || seen.has(name)) continue;
            seen.add(name);
            const base = name.slice(0, -".req.json".length);
            let req: { command?: unknown; arguments?: unknown };
            try {
                req = JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")) as typeof req;
            } catch (err) {
                write(`${base}.res.json`, { error: `bad request: ${errorMessage(err)}` });
                continue;
            }
            const args = Array.isArray(req.arguments) ? (req.arguments as unknown[]) : [];
            if (typeof req.command !== "string") {
                write(`${base}.res.json`, { error: "request has no command" });
                continue;
            }
            Promise.resolve(vscode.commands.executeCommand(req.command, ...args)).then(
                (result) => write(`${base}.res.json`, { result: toJson(result) }),
                (err: unknown) => write(`${base}.res.json`, { error: errorMessage(err) }),
            );
        }
    };
    const timer = setInterval(poll, 200);
    return new vscode.Disposable(() => clearInterval(timer));
}

function toJson(v: unknown): unknown {
    try {
        return JSON.parse(
            JSON.stringify(v, (_k, val: unknown) => {
                if (val instanceof vscode.Uri) return val.toString();
                return val;
            }) ?? "null",
        );
    } catch {
        return String(v);
    }
}
