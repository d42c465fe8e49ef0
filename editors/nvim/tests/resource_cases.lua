-- MCP resources and prompts (:Switchboard resources, attach, prompt), against cmd/mcptest
-- --resources (server "res").
local T = require('harness')

local function script(text)
  local path = T.dir .. '/chat.script'
  T.write(path, text)
  return { type = 'script', script = path }
end

local function res_opts(provider)
  return { servers = { res = { command = T.mcptest, args = { '--resources' } } }, provider = provider }
end

local function bufname_is(name)
  return function()
    return vim.api.nvim_buf_get_name(0) == name
  end
end

T.case('resources: browse a template with completion, open read-only, updates, attach to chat', function()
  T.start(res_opts(script(table.concat({
    'expect last_user ~ "(?s)<attached-resource server=\\"res\\" uri=\\"mcptest://notes/beta\\">\\n> note beta\\n</attached-resource>\\n\\nsummarize it$"',
    'reply text "Summarized."',
    '',
  }, '\n'))))
  T.answer('switchboard_resources', T.pick('res: notes'))
  T.answer('switchboard_complete', T.pick('beta'))
  vim.cmd('Switchboard resources res')
  local name = 'switchboard-mcp://res/mcptest://notes/beta'
  T.wait('resource buffer', bufname_is(name))
  T.eq(vim.api.nvim_buf_get_lines(0, 0, -1, false), { 'note beta' })
  T.eq(vim.bo.modifiable, false, 'read-only')
  local sel = T.selects_of('switchboard_complete')[1]
  T.eq(sel.labels, { 'alpha', 'beta', 'gamma', '(type a value)' }, 'completion of the template variable')
  vim.cmd('Switchboard attach')
  T.has(T.notes_text(), 'attached mcptest://notes/beta')
  vim.cmd('Switchboard chat summarize it')
  local chat = require('switchboard.chat')
  T.wait('turn done', function()
    local c = chat.get()
    return c and c.last_done ~= nil
  end)
  local tr = table.concat(chat.transcript(), '\n')
  T.has(tr, '(attached mcptest://notes/beta)')
  T.has(tr, 'Summarized.')
  T.eq(#require('switchboard.resources').pending, 0, 'attachments go with one message')
end)

T.case('resources: an open subscribed resource is re-read when the server updates it', function()
  T.start(res_opts())
  T.answer('switchboard_resources', T.pick('res: counter'))
  vim.cmd('Switchboard resources')
  local name = 'switchboard-mcp://res/mcptest://counter'
  T.wait('counter buffer', bufname_is(name))
  T.eq(vim.api.nvim_buf_get_lines(0, 0, -1, false), { 'counter 0' })
  local buf = vim.api.nvim_get_current_buf()
  T.exec(require('switchboard.protocol').cmd.call_tool, { name = 'mcp__res__bump', mode = 'always-allow' })
  T.wait('counter updated', function()
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] == 'counter 1'
  end)
end)

T.case('prompt: arguments asked with completion, sent as a chat turn', function()
  T.start(res_opts(script(table.concat({
    'expect last_user ~ "(?s)<server-prompt server=\\"res\\" name=\\"review\\">\\n> user: Please give a thorough review of gamma.\\n</server-prompt>"',
    'reply text "Reviewed."',
    '',
  }, '\n'))))
  T.answer('switchboard_complete', T.by_prompt({ topic = 'gamma', style = 'thorough' }, true))
  vim.cmd('Switchboard prompt res review')
  local chat = require('switchboard.chat')
  T.wait('turn done', function()
    local c = chat.get()
    return c and c.last_done ~= nil
  end)
  local tr = table.concat(chat.transcript(), '\n')
  T.has(tr, 'Reviewed.')
  T.hasnt(tr, 'error')
  local cmds = require('switchboard.commands')
  T.eq(cmds.complete('', 'Switchboard prompt res ', 0), { 'review' }, 'prompt names complete')
  T.ok(vim.tbl_contains(cmds.complete('re', 'Switchboard re', 0), 'resources'), 'subcommand completes')
end)
