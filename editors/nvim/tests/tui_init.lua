-- init file of the tmux test (tui.sh): the real TUI with Neovim's own vim.ui.select (inputlist)
-- and vim.ui.input (input()), the real host and mcptest. Once "demo" is ready it calls
-- mcp__demo__echo, whose approval prompt the test answers with keys. :SBAsk [message] then calls
-- mcp__demo__ask (a form, asked field by field) and writes what the server got to
-- $SWITCHBOARD_TUI_RESULT. :SBSlow starts a long call (its progress in both windows' statuslines).
local dir = os.getenv('SWITCHBOARD_PLUGIN_DIR')
vim.opt.runtimepath:prepend(dir)
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.cmd('runtime plugin/switchboard.lua')
vim.o.statusline = "%f %= %{v:lua.require'switchboard'.statusline()}"
vim.o.laststatus = 2

vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('SWITCHBOARD_TUI_FILE')))
-- Two windows: every statusline must follow the host, not only the current window's.
vim.cmd('vsplit')
local sb = require('switchboard').setup({
  cmd = { os.getenv('SWITCHBOARD_BIN'), 'serve' },
  servers = { demo = { command = os.getenv('SWITCHBOARD_MCPTEST'), args = { '--elicit' } } },
  approvalTimeoutSeconds = 60,
})

local uv = vim.uv or vim.loop
local timer = uv.new_timer()
local started = false
timer:start(100, 100, vim.schedule_wrap(function()
  if started then
    return
  end
  for _, s in ipairs(sb.servers()) do
    if s.name == 'demo' and s.state == 'ready' then
      started = true
      timer:stop()
      vim.cmd('Switchboard call mcp__demo__echo {"text":"typed in tmux"}')
    end
  end
end))

vim.api.nvim_create_user_command('SBAsk', function(cmd)
  local schema = vim.fn.json_encode({
    type = 'object',
    properties = {
      name = { type = 'string', title = 'Name', minLength = 1 },
      nickname = { type = 'string', title = 'Nickname' },
      agree = { type = 'boolean', title = 'Agree' },
    },
    required = { 'name', 'agree' },
  })
  local args = { message = cmd.args ~= '' and cmd.args or 'TUI question', schema = schema }
  require('switchboard.commands').call_tool('mcp__demo__ask', args, 'always-allow', function(err, res)
    local f = io.open(os.getenv('SWITCHBOARD_TUI_RESULT'), 'w')
    f:write(err and vim.inspect(err) or res.text)
    f:close()
  end)
end, { nargs = '?' })

-- :SBSlow: a long tool call (mcp__demo__slow, no approval asked) whose progress the statuslines show.
vim.api.nvim_create_user_command('SBSlow', function()
  require('switchboard.commands').call_tool('mcp__demo__slow', { seconds = 60, steps = 2 }, 'always-allow', function() end)
end, {})
