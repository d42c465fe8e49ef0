// Settings and binary lookup (no vscode import, so it is unit-tested under plain node).

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { modes, type Mode } from "./lsp_types";

/** Reads one setting of the "switchboard" section (WorkspaceConfiguration.get). */
export type SettingsGetter = <T>(key: string) => T | undefined;

/** initializationOptions, and settings.switchboard of workspace/didChangeConfiguration (PROTOCOL.md 1). */
export interface HostSettings {
    servers?: Record<string, unknown>;
    configFiles?: string[];
    mode?: Mode;
    approvalTimeoutSeconds?: number;
    provider?: Record<string, unknown>;
}

export function hostSettings(get: SettingsGetter): HostSettings {
    const out: HostSettings = {};
    const servers = get<Record<string, unknown>>("servers");
    if (isObject(servers)) out.servers = servers;
    const files = get<string[]>("configFiles");
    if (Array.isArray(files) && files.length > 0) out.configFiles = files.filter((f) => typeof f === "string").map(expandHome);
    const mode = get<string>("mode");
    if (typeof mode === "string" && (modes as readonly string[]).includes(mode)) out.mode = mode as Mode;
    const timeout = get<number>("approvalTimeoutSeconds");
    if (typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0) out.approvalTimeoutSeconds = timeout;
    const provider = get<Record<string, unknown>>("provider");
    if (isObject(provider) && Object.keys(provider).length > 0) out.provider = provider;
    return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function expandHome(p: string): string {
    if (p === "~") return os.homedir();
    if (p.startsWith("~/")) return path.join(os.homedir(), p.slice(2));
    return p;
}

export interface BinaryLookup {
    /** The executable to run, when one was found. */
    path?: string;
    /** Where it came from. */
    source?: "setting" | "env" | "PATH";
    /** Why nothing usable was found (for the error message). */
    problem?: string;
}

export interface LookupInput {
    setting: string | undefined;
    env: NodeJS.ProcessEnv;
    /** Folder that a relative setting is resolved against (the first workspace folder). */
    base?: string;
    isExecutable?: (p: string) => boolean;
}

export function isExecutableFile(p: string): boolean {
    try {
        const st = fs.statSync(p);
        if (!st.isFile()) return false;
        fs.accessSync(p, fs.constants.X_OK);
        return true;
    } catch {
        return false;
    }
}

/** Finds the switchboard binary: setting switchboard.path, else $SWITCHBOARD_PATH, else PATH. */
export function findBinary(input: LookupInput): BinaryLookup {
    const isExec = input.isExecutable ?? isExecutableFile;
    const setting = input.setting?.trim();
    if (setting) {
        let p = expandHome(setting);
        if (!path.isAbsolute(p) && input.base) p = path.join(input.base, p);
        if (isExec(p)) return { path: p, source: "setting" };
        return { problem: `switchboard.path is set to "${setting}", which is not an executable file.` };
    }
    const env = input.env["SWITCHBOARD_PATH"]?.trim();
    if (env) {
        if (isExec(env)) return { path: env, source: "env" };
        return { problem: `SWITCHBOARD_PATH is set to "${env}", which is not an executable file.` };
    }
    const exe = process.platform === "win32" ? ["switchboard.exe", "switchboard.cmd", "switchboard"] : ["switchboard"];
    const dirs = (input.env["PATH"] ?? "").split(path.delimiter).filter((d) => d.length > 0);
    for (const d of dirs) {
        for (const name of exe) {
            const p = path.join(d, name);
            if (isExec(p)) return { path: p, source: "PATH" };
        }
    }
    return { problem: "The switchboard binary was not found: switchboard.path is not set and there is no switchboard on PATH." };
}
