-- Switchboard wire names, mirrored from host/wire/names.go (host/wire/PROTOCOL.md sections 3 and 6).
--
-- This is the only Lua file that spells a Switchboard command or notification name, and every
-- string literal in it is one: host/methods_test.go reads this file and compares the set with the
-- names of the host. Standard LSP method names belong to Neovim and are not repeated here.
-- (Keep quote characters out of the comments: the file is parsed for literals.)
local M = {}

-- Workspace commands (workspace/executeCommand).
M.cmd = {
  servers = 'switchboard.servers',
  tools = 'switchboard.tools',
  reconnect = 'switchboard.reconnect',
  allowlist_get = 'switchboard.allowlist.get',
  allowlist_set = 'switchboard.allowlist.set',
  approvals = 'switchboard.approvals',
  approve = 'switchboard.approve',
  trust = 'switchboard.trust',
  call_tool = 'switchboard.callTool',
  chat = 'switchboard.chat',
  cancel = 'switchboard.cancel',
  elicitations = 'switchboard.elicitations',
  elicit = 'switchboard.elicit',
  sign_in = 'switchboard.signIn',
  sign_out = 'switchboard.signOut',
  models = 'switchboard.models',
  pins = 'switchboard.pins',
  pins_accept = 'switchboard.pins.accept',
  resources = 'switchboard.resources',
  read_resource = 'switchboard.readResource',
  unsubscribe = 'switchboard.unsubscribe',
  prompts = 'switchboard.prompts',
  get_prompt = 'switchboard.getPrompt',
  complete = 'switchboard.complete',
  input = 'switchboard.input',
  tasks = 'switchboard.tasks',
  cancel_task = 'switchboard.cancelTask',
  view = 'switchboard.view',
  view_call_tool = 'switchboard.view.callTool',
  view_open_link = 'switchboard.view.openLink',
  view_open_in_browser = 'switchboard.view.openInBrowser',
  view_update_model_context = 'switchboard.view.updateModelContext',
  view_message = 'switchboard.view.message',
  chat_end = 'switchboard.chat.end',
}

-- Notifications from the host.
M.notify = {
  servers_changed = 'switchboard/serversChanged',
  approval_requested = 'switchboard/approvalRequested',
  approval_resolved = 'switchboard/approvalResolved',
  event = 'switchboard/event',
  elicitation_requested = 'switchboard/elicitationRequested',
  elicitation_resolved = 'switchboard/elicitationResolved',
  pins_changed = 'switchboard/pinsChanged',
  resources_changed = 'switchboard/resourcesChanged',
  input_requested = 'switchboard/inputRequested',
  input_resolved = 'switchboard/inputResolved',
  show_task_result = 'switchboard/showTaskResult',
  view_message = 'switchboard/viewMessage',
}

return M
