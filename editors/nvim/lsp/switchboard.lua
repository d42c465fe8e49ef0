-- vim.lsp.Config for Neovim 0.11+:  vim.lsp.enable('switchboard')
-- Override fields with vim.lsp.config('switchboard', { init_options = { ... } }) or by calling
-- require('switchboard').setup({ autostart = false, ... }) first (its options are used here).
local sb = require('switchboard')
local base = sb.client_config()

---@type vim.lsp.Config
return {
  cmd = base.cmd,
  cmd_env = base.cmd_env,
  root_markers = { '.switchboard', '.mcp.json', '.vscode', '.git' },
  init_options = base.init_options,
  settings = base.settings,
  capabilities = base.capabilities,
  handlers = base.handlers,
  on_init = base.on_init,
  on_exit = base.on_exit,
}
