// Identifiers that belong to the VS Code extension itself (contributed commands, settings,
// views). Host method and workspace-command names are in lsp_ext.ts only.
//
// The contributed command ids must differ from the host's workspace commands: vscode-languageclient
// registers every command of the server's executeCommandProvider under its own name.

export const ui = {
    reconnectAll: "switchboard.ui.reconnectAll",
    reconnectServer: "switchboard.ui.reconnectServer",
    showServers: "switchboard.ui.showServers",
    manageApprovals: "switchboard.ui.manageApprovals",
    approvePending: "switchboard.ui.approvePending",
    elicitations: "switchboard.ui.elicitations",
    openChat: "switchboard.ui.openChat",
    cancelTurn: "switchboard.ui.cancelTurn",
    showOutput: "switchboard.ui.showOutput",
    statusMenu: "switchboard.ui.statusMenu",
    callTool: "switchboard.ui.callTool",
    chooseModel: "switchboard.ui.chooseModel",
    reviewPins: "switchboard.ui.reviewPins",
    browseResources: "switchboard.ui.browseResources",
    attachResource: "switchboard.ui.attachResource",
    runPrompt: "switchboard.ui.runPrompt",
    showTasks: "switchboard.ui.showTasks",
    openView: "switchboard.ui.openView",
} as const;

export const configSection = "switchboard";
export const chatParticipantId = "switchboard.agent";
export const outputChannelName = "Switchboard";
export const clientId = "switchboard";
export const clientName = "Switchboard";
export const chatPanelViewType = "switchboard.chatPanel";
export const statusBarId = "switchboard.status";
export const tasksBarId = "switchboard.tasks";
