// Settings and binary lookup (no vscode import, so it is unit-tested under plain node).

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { modes, type Mode } from "./lsp_types";

/**
 * The settings that choose what runs (path, servers, configFiles), where secrets go (provider) or
 * how the gate decides (mode, approvalTimeoutSeconds). They are `machine` scope in package.json, and
 * the extension also reads only their user-level value, for VS Code versions and forks that do not
 * honour scope: a repository's .vscode/settings.json must not be able to set them.
 */
export const userOnlySettings = [
    "path",
    "servers",
    "configFiles",
    "mode",
    "approvalTimeoutSeconds",
    "provider",
    "toolSearchThreshold",
    "alwaysLoadedTools",
    "pinning",
    "daemonIdleSeconds",
] as const;
export type UserOnlySetting = (typeof userOnlySettings)[number];

/** The levels of one setting, as WorkspaceConfiguration.inspect returns them. */
export interface Inspected<T> {
    key: string;
    defaultValue?: T;
    globalValue?: T;
    workspaceValue?: T;
    workspaceFolderValue?: T;
    defaultLanguageValue?: T;
    globalLanguageValue?: T;
    workspaceLanguageValue?: T;
    workspaceFolderLanguageValue?: T;
}

/** Inspects one setting of the "switchboard" section (WorkspaceConfiguration.inspect). */
export type SettingsInspector = <T>(key: string) => Inspected<T> | undefined;

/** The user-level value of a setting (user or remote-machine settings), else its default; never a workspace's. */
export function userValue<T>(inspect: SettingsInspector, key: string): T | undefined {
    const i = inspect<T>(key);
    if (!i) return undefined;
    return i.globalValue !== undefined ? i.globalValue : i.defaultValue;
}

/** The user-only settings that a workspace (or workspace folder) sets, in userOnlySettings order. */
export function workspaceOverrides(...inspectors: SettingsInspector[]): UserOnlySetting[] {
    return userOnlySettings.filter((key) =>
        inspectors.some((inspect) => {
            const i = inspect<unknown>(key);
            return (
                i !== undefined &&
                (i.workspaceValue !== undefined ||
                    i.workspaceFolderValue !== undefined ||
                    i.workspaceLanguageValue !== undefined ||
                    i.workspaceFolderLanguageValue !== undefined)
            );
        }),
    );
}

/** The one sentence that tells the user a workspace's values of these settings are ignored. */
export function workspaceOverrideMessage(keys: readonly string[]): string | undefined {
    if (keys.length === 0) return undefined;
    const names = keys.map((k) => `switchboard.${k}`);
    const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
    const [it, is] = names.length === 1 ? ["it", "it is"] : ["them", "they are"];
    return `This workspace's settings set ${list}; Switchboard takes ${it} from your user settings only, so ${is} ignored.`;
}

/** initializationOptions, and settings.switchboard of workspace/didChangeConfiguration (PROTOCOL.md 1). */
export interface HostSettings {
    servers?: Record<string, unknown>;
    configFiles?: string[];
    mode?: Mode;
    approvalTimeoutSeconds?: number;
    provider?: Record<string, unknown>;
    toolSearchThreshold?: number;
    alwaysLoadedTools?: string[];
    pinning?: "enforce" | "warn" | "off";
    daemonIdleSeconds?: number;
}

/** The host's settings, from the user level only (see userOnlySettings). */
export function hostSettings(inspect: SettingsInspector): HostSettings {
    const get = <T>(key: UserOnlySetting): T | undefined => userValue<T>(inspect, key);
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
    const threshold = get<number>("toolSearchThreshold");
    if (typeof threshold === "number" && Number.isFinite(threshold)) out.toolSearchThreshold = threshold;
    const pinned = get<string[]>("alwaysLoadedTools");
    if (Array.isArray(pinned) && pinned.length > 0) out.alwaysLoadedTools = pinned.filter((t) => typeof t === "string");
    const pinning = get<string>("pinning");
    if (pinning === "enforce" || pinning === "warn" || pinning === "off") out.pinning = pinning;
    const idle = get<number>("daemonIdleSeconds");
    if (typeof idle === "number" && Number.isFinite(idle) && idle >= 0) out.daemonIdleSeconds = idle;
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
    source?: "setting" | "bundled" | "env" | "PATH";
    /** Why nothing usable was found (for the error message). */
    problem?: string;
}

export interface LookupInput {
    /** The user-level switchboard.path; a relative path is refused (never resolved against a workspace). */
    setting: string | undefined;
    /** The binary shipped inside a platform-specific .vsix (bundledBinary), when there is one. */
    bundled?: string;
    env: NodeJS.ProcessEnv;
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

/** Where a platform-specific .vsix carries the switchboard binary: <extension>/bin/switchboard[.exe]. */
export function bundledBinary(extensionPath: string | undefined, platform: NodeJS.Platform = process.platform): string | undefined {
    if (!extensionPath) return undefined;
    return path.join(extensionPath, "bin", platform === "win32" ? "switchboard.exe" : "switchboard");
}

/**
 * Makes the bundled binary executable when the .vsix unpacking lost its mode bits (zip tools
 * differ). Returns the path when the file exists, else undefined.
 */
export function prepareBundled(p: string | undefined, platform: NodeJS.Platform = process.platform): string | undefined {
    if (!p) return undefined;
    try {
        const st = fs.statSync(p);
        if (!st.isFile()) return undefined;
        if (platform !== "win32" && (st.mode & 0o111) === 0) fs.chmodSync(p, st.mode | 0o755);
        return p;
    } catch {
        return undefined;
    }
}

/**
 * Finds the switchboard binary: the user's switchboard.path, else the binary bundled in the .vsix,
 * else $SWITCHBOARD_PATH, else PATH. None of these can come from a workspace: the setting is read
 * at user level only, the bundled binary is the extension's own, and the environment is the
 * editor's. A wrong user setting is reported, never silently replaced.
 */
export function findBinary(input: LookupInput): BinaryLookup {
    const isExec = input.isExecutable ?? isExecutableFile;
    const setting = input.setting?.trim();
    if (setting) {
        const p = expandHome(setting);
        if (!path.isAbsolute(p)) {
            return { problem: `switchboard.path must be an absolute path, and "${setting}" is not; set the full path of the switchboard binary in your user settings.` };
        }
        if (isExec(p)) return { path: p, source: "setting" };
        return { problem: `switchboard.path is set to "${setting}", which is not an executable file.` };
    }
    if (input.bundled && isExec(input.bundled)) return { path: input.bundled, source: "bundled" };
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
    return { problem: "The switchboard binary was not found: this .vsix carries none, switchboard.path is not set and there is no switchboard on PATH." };
}
