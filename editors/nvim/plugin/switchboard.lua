-- Switchboard: the :Switchboard command. Modules load on first use; nothing starts until
-- require('switchboard').setup() (or, on 0.11+, vim.lsp.enable('switchboard')).
if vim.g.loaded_switchboard then
  return
end
vim.g.loaded_switchboard = true

if vim.fn.has('nvim-0.7') ~= 1 then
  vim.api.nvim_echo({ { 'switchboard.nvim needs Neovim 0.7 or newer', 'ErrorMsg' } }, true, {})
  return
end

vim.api.nvim_create_user_command('Switchboard', function(opts)
  require('switchboard.commands').run(vim.split(vim.trim(opts.args), '%s+', { trimempty = true }))
end, {
  nargs = '*',
  desc = 'Switchboard: servers | reconnect [server] | approve | elicit | allow [server] | trust [server] | chat [prompt] | cancel | tools [server] | call NAME [JSON] | log',
  complete = function(arglead, cmdline, pos)
    return require('switchboard.commands').complete(arglead, cmdline, pos)
  end,
})
