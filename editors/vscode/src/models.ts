// The pure parts of "Switchboard: Choose Model..." (choose_model.ts): a quick pick fed by
// switchboard.models that writes the user setting switchboard.provider.model. Only the user-level provider object is read and written
// back: a workspace's provider (which the host ignores, see config.ts) is never copied into the
// user's settings.

import { userValue, type SettingsInspector } from "./config";
import type * as ext from "./lsp_types";

export interface ModelItem {
    label: string;
    description?: string;
    id: string;
}

/** The quick-pick items, the current model first and marked. */
export function modelItems(res: ext.ModelsResult): ModelItem[] {
    const items = res.models.map((m) => {
        const notes: string[] = [];
        if (m.id === res.current) notes.push("current");
        if (m.displayName && m.displayName !== m.id) notes.push(m.displayName);
        return { label: m.id, id: m.id, ...(notes.length ? { description: notes.join(" · ") } : {}) };
    });
    const cur = items.findIndex((i) => i.id === res.current);
    if (cur > 0) items.unshift(...items.splice(cur, 1));
    return items;
}

/** The user-level provider object with model set to id (other fields kept, nothing from a workspace). */
export function providerWithModel(inspect: SettingsInspector, id: string): Record<string, unknown> {
    const user = userValue<Record<string, unknown>>(inspect, "provider");
    const base = typeof user === "object" && user !== null && !Array.isArray(user) ? user : {};
    return { ...base, model: id };
}
