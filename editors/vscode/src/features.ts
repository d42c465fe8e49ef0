// Client capabilities the extension declares beyond the languageclient's own (no vscode import).

import type { ClientCapabilities, FeatureState, StaticFeature } from "vscode-languageclient";

/**
 * Declares `capabilities.experimental.switchboard.elicitation = true` in initialize: the host then
 * sends forms as switchboard/elicitationRequested (host/wire/PROTOCOL.md section 7); `pinReview`
 * (the extension reviews changed tools itself) and `textOnce` (a big tool result's text comes once,
 * in `text`: the extension never reads `content`) and `viewMessages` (a turn a view started is shown: view_message.ts) and `taskResults` (a task's result the person asks
 * to see comes as switchboard/showTaskResult, shown by tasks.ts). Other experimental keys, and other
 * keys under `switchboard`, are kept.
 */
export class ElicitationFeature implements StaticFeature {
    fillClientCapabilities(capabilities: ClientCapabilities): void {
        const experimental: Record<string, unknown> = isObject(capabilities.experimental) ? capabilities.experimental : {};
        const mine = isObject(experimental["switchboard"]) ? experimental["switchboard"] : {};
        experimental["switchboard"] = { ...mine, elicitation: true, pinReview: true, textOnce: true, taskResults: true, viewMessages: true };
        capabilities.experimental = experimental;
    }

    initialize(): void {}

    getState(): FeatureState {
        return { kind: "static" };
    }

    clear(): void {}
}

/**
 * Declares `capabilities.experimental.switchboard.inputs = true`: the host then asks for a config
 * file's ${input:ID} with switchboard/inputRequested (inputs.ts). Other keys are kept.
 */
export class InputsFeature implements StaticFeature {
    fillClientCapabilities(capabilities: ClientCapabilities): void {
        const experimental: Record<string, unknown> = isObject(capabilities.experimental) ? capabilities.experimental : {};
        const mine = isObject(experimental["switchboard"]) ? experimental["switchboard"] : {};
        experimental["switchboard"] = { ...mine, inputs: true };
        capabilities.experimental = experimental;
    }

    initialize(): void {}

    getState(): FeatureState {
        return { kind: "static" };
    }

    clear(): void {}
}

function isObject(v: unknown): v is Record<string, unknown> {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}
