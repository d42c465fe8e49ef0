// "Switchboard: Choose Model...": the provider's models (switchboard.models) in a quick pick; the
// pick is written to the user setting switchboard.provider.model (see models.ts).

import * as vscode from "vscode";
import type { Switchboard } from "./client";
import type { SettingsInspector } from "./config";
import { configSection } from "./ids";
import * as ext from "./lsp_types";
import { modelItems, providerWithModel } from "./models";

export async function chooseModel(sb: Switchboard): Promise<string | undefined> {
    await sb.ensureRunning();
    const res = await sb.exec(ext.Cmd.models);
    if (res.models.length === 0) {
        void vscode.window.showInformationMessage("Switchboard: the provider lists no models.");
        return undefined;
    }
    const pick = await vscode.window.showQuickPick(modelItems(res), {
        title: "Switchboard: Choose Model",
        placeHolder: res.current ? `Current model: ${res.current}` : "Pick the model the agent uses",
        matchOnDescription: true,
    });
    if (!pick) return undefined;
    const cfg = vscode.workspace.getConfiguration(configSection);
    const inspect: SettingsInspector = <T>(key: string) => cfg.inspect<T>(key);
    await cfg.update("provider", providerWithModel(inspect, pick.id), vscode.ConfigurationTarget.Global);
    void vscode.window.showInformationMessage(`Switchboard: the agent now uses ${pick.id}.`);
    return pick.id;
}
