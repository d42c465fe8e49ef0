// The Switchboard protocol extensions: every workspace command and notification name of
// host/wire/PROTOCOL.md (sections 3 and 6), mirrored from host/wire/names.go.
//
// This is the only file of the extension that spells a host method or command name, and every
// string literal in it is one: host/methods_test.go reads this file and compares the set with the
// host's. Their params and result shapes are in lsp_types.ts; extension-only ids are in ids.ts.

// Workspace commands (workspace/executeCommand).
export const Cmd = {
    servers: "switchboard.servers",
    tools: "switchboard.tools",
    reconnect: "switchboard.reconnect",
    allowlistGet: "switchboard.allowlist.get",
    allowlistSet: "switchboard.allowlist.set",
    approvals: "switchboard.approvals",
    approve: "switchboard.approve",
    trust: "switchboard.trust",
    callTool: "switchboard.callTool",
    chat: "switchboard.chat",
    cancel: "switchboard.cancel",
    elicitations: "switchboard.elicitations",
    elicit: "switchboard.elicit",
    signIn: "switchboard.signIn",
    signOut: "switchboard.signOut",
    models: "switchboard.models",
    pins: "switchboard.pins",
    pinsAccept: "switchboard.pins.accept",
    resources: "switchboard.resources",
    readResource: "switchboard.readResource",
    unsubscribe: "switchboard.unsubscribe",
    prompts: "switchboard.prompts",
    getPrompt: "switchboard.getPrompt",
    complete: "switchboard.complete",
    input: "switchboard.input",
    tasks: "switchboard.tasks",
    cancelTask: "switchboard.cancelTask",
    view: "switchboard.view",
    viewCallTool: "switchboard.view.callTool",
    viewOpenLink: "switchboard.view.openLink",
    viewOpenInBrowser: "switchboard.view.openInBrowser",
    viewUpdateModelContext: "switchboard.view.updateModelContext",
    viewMessage: "switchboard.view.message",
    chatEnd: "switchboard.chat.end",
} as const;

// Notifications from the host.
export const Notify = {
    serversChanged: "switchboard/serversChanged",
    approvalRequested: "switchboard/approvalRequested",
    approvalResolved: "switchboard/approvalResolved",
    event: "switchboard/event",
    pinsChanged: "switchboard/pinsChanged",
    elicitationRequested: "switchboard/elicitationRequested",
    elicitationResolved: "switchboard/elicitationResolved",
    resourcesChanged: "switchboard/resourcesChanged",
    inputRequested: "switchboard/inputRequested",
    inputResolved: "switchboard/inputResolved",
    showTaskResult: "switchboard/showTaskResult",
    viewMessage: "switchboard/viewMessage",
} as const;

export type CommandName = (typeof Cmd)[keyof typeof Cmd];
export type NotificationName = (typeof Notify)[keyof typeof Notify];
