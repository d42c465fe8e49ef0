-- The plugin as a user meets it: one host per root, reminders for dismissed approvals, trust that
-- can be changed, progress, the statusline, the tools warning, the chat buffer.
local T = require('harness')

local function initialize_count()
  local n = 0
  for _, e in ipairs(T.events()) do
    if e.kind == 'lifecycle' and e.event == 'initialize' then
      n = n + 1
    end
  end
  return n
end

-- Opens a real file (filetype detection on, as in a user's config) and checks that exactly one
-- host runs, also while it initializes, and after a second file is opened during that time.
local function one_host_case(setup_first)
  return function()
    vim.cmd('filetype on')
    local a, b = T.dir .. '/work/a.lua', T.dir .. '/work/b.lua'
    T.write(a, 'return 1\n')
    T.write(b, 'return 2\n')
    local sb = require('switchboard')
    if setup_first then
      sb.setup(T.opts())
      vim.cmd('edit ' .. vim.fn.fnameescape(a))
    else
      vim.cmd('edit ' .. vim.fn.fnameescape(a))
      sb.setup(T.opts())
    end
    T.eq(vim.bo.filetype, 'lua', 'FileType fired')
    vim.cmd('edit ' .. vim.fn.fnameescape(b))
    T.eq(#T.all_clients('switchboard'), 1, 'hosts started while the first initializes')
    T.wait('client initialized', function()
      local c = sb.client()
      return c and c.initialized and vim.lsp.buf_is_attached(0, c.id)
    end)
    local c = sb.client()
    vim.cmd('buffer ' .. vim.fn.bufnr(a))
    T.ok(vim.lsp.buf_is_attached(0, c.id), 'the first file is attached too')
    T.wait_servers(function(l)
      local d = T.server(l, 'demo')
      return d and d.state == 'ready'
    end)
    T.eq(#T.all_clients('switchboard'), 1, 'hosts')
    T.eq(initialize_count(), 1, 'initialize requests the host received')
    vim.cmd('filetype off')
  end
end

T.case('one host: setup() in init.lua before any file, then files open (FileType on)', one_host_case(true))
T.case('one host: a file open first, then setup()', one_host_case(false))

--- Calls mcp__demo__echo; returns wait() (the result) and done().
local function call_echo(text)
  local done, res, err = false, nil, nil
  require('switchboard.commands').call_tool('mcp__demo__echo', { text = text }, nil, function(e, r)
    done, res, err = true, r, e
  end)
  return function()
    T.wait('callTool result', function()
      return done
    end)
    T.ok(not err, 'callTool error: ' .. vim.inspect(err))
    return res
  end, function()
    return done
  end
end

local function notes_with(text)
  return vim.tbl_filter(function(n)
    return n.msg:find(text, 1, true) ~= nil
  end, T.notes)
end

for _, async in ipairs({ false, true }) do
  T.case(('a dismissed approval: told once how to answer, reminded in Normal mode only (%s UI)'):format(
    async and 'asynchronous' or 'synchronous'), function()
    local sb = T.start({ remind_seconds = 0.05 })
    T.ui_async = async
    T.answer('switchboard_approval', function()
      return 0 -- Esc
    end)
    local remind = require('switchboard.remind')
    local columns = vim.o.columns
    vim.o.columns = 160
    local echoes = {}
    remind.echo = function(chunks)
      table.insert(echoes, chunks[1][1])
    end
    local wait, done = call_echo('dismissed')
    T.wait('the notice', function()
      return #notes_with('waiting for your approval') > 0
    end)
    T.wait('two reminders', function()
      return #echoes >= 2
    end)
    local notice = notes_with('waiting for your approval')
    T.eq(#notice, 1, 'notices')
    T.eq(notice[1].level, vim.log.levels.WARN, 'notice level')
    T.has(notice[1].msg, 'mcp__demo__echo is waiting for your approval (denied in ')
    T.has(notice[1].msg, 'Answer with :Switchboard approve or a code action.')
    T.hasnt(notice[1].msg, '\n', 'one line')
    T.has(echoes[1], 'mcp__demo__echo waiting for approval (denied in ')
    T.has(echoes[1], ' s): :Switchboard approve')
    -- A narrow window: the tool name is cut, the command stays; it fits (no hit-enter prompt).
    for _, room in ipairs({ 50, 40 }) do
      local narrow = remind.line(room)
      T.ok(#narrow <= room, 'fits: ' .. narrow)
      T.has(narrow, ': :Switchboard approve')
    end
    vim.o.columns = columns
    T.has(sb.statusline(), '1 approval')
    -- Never while the user types or answers a prompt.
    remind.stop()
    local n = #echoes
    for _, mode in ipairs({ 'i', 'c', 'R', 'r' }) do
      remind.tick(mode)
    end
    T.eq(#echoes, n, 'reminders outside Normal mode')
    remind.tick('n')
    T.eq(#echoes, n + 1, 'a reminder in Normal mode')
    T.ok(not done(), 'the call ran without an answer')
    T.answer('switchboard_approval', T.pick('Allow once'))
    vim.cmd('Switchboard approve')
    T.has(wait().text, 'dismissed')
    T.wait('nothing left to remind of', function()
      return remind.line() == nil
    end)
    T.eq(#notes_with('waiting for your approval'), 1, 'notices in all')
  end)
end

local function health_text()
  vim.cmd('checkhealth switchboard')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('silent! bwipeout!')
  return text
end

T.case([[trust can be undone: :Switchboard trust, the servers list asks again, :checkhealth says how]], function()
  T.write(T.dir .. '/work/.mcp.json', vim.fn.json_encode({ mcpServers = { ws = { command = T.mcptest } } }))
  T.answer('switchboard_trust', T.pick("Don't trust"))
  T.start()
  local list = T.wait_servers(function(l)
    local s = T.server(l, 'ws')
    return s and s.state == 'untrusted' and #T.selects_of('switchboard_trust') == 1
  end, 'ws not trusted')
  local question = T.server(list, 'ws').trustPrompt
  T.ok(type(question) == 'string' and question:find("'ws'", 1, true), 'trustPrompt: ' .. vim.inspect(question))
  local health = health_text()
  T.has(health, ':Switchboard trust ws')
  T.hasnt(health, 'switchboard.trust', 'a host command name as advice')
  -- The servers list: picking the untrusted server asks again, with the whole question.
  T.answer('switchboard_servers', T.pick('ws'))
  vim.cmd('Switchboard servers')
  T.wait('asked again from the servers list', function()
    return #T.selects_of('switchboard_trust') == 2
  end)
  local again = T.selects_of('switchboard_trust')[2]
  T.eq(again.prompt, (question:gsub('%s*\n%s*', ' ')), 'the question shown')
  T.eq(again.labels, { 'Trust', "Don't trust" })
  T.wait('the answer is confirmed', function()
    return T.notes_text():find("'ws' is not trusted and stays stopped; :Switchboard trust ws asks again", 1, true)
  end)
  -- Completion knows the subcommand and the server names.
  T.eq(require('switchboard.commands').complete('tr', 'Switchboard tr', 14), { 'trust' })
  T.ok(vim.tbl_contains(require('switchboard.commands').complete('', 'Switchboard trust ', 18), 'ws'), 'server completion')
  -- :Switchboard trust (no name, one untrusted server): asked for it; Trust starts it.
  T.answer('switchboard_trust', T.pick('Trust'))
  vim.cmd('Switchboard trust')
  T.wait_servers(function(l)
    local s = T.server(l, 'ws')
    return s and s.state == 'ready'
  end, 'ws trusted and ready')
  T.eq(#T.selects_of('switchboard_trust'), 3)
  T.wait('the answer is confirmed', function()
    return T.notes_text():find("MCP server 'ws' is trusted and starts now.", 1, true)
  end)
  T.notes = {}
  vim.cmd('Switchboard trust')
  T.wait('nothing to trust', function()
    return T.notes_text():find('every MCP server is trusted', 1, true)
  end)
end)

T.case('progress of a long tool call: statusline, vim.lsp.status(), :Switchboard cancel', function()
  local sb = T.start()
  local autocmds = 0
  vim.api.nvim_create_autocmd('User', {
    pattern = 'SwitchboardProgress',
    callback = function()
      autocmds = autocmds + 1
    end,
  })
  local done, res
  require('switchboard.commands').call_tool('mcp__demo__slow', { seconds = 60, steps = 2 }, 'always-allow', function(e, r)
    T.ok(not e, vim.inspect(e))
    done, res = true, r
  end)
  T.wait('progress in the statusline', function()
    return sb.statusline():find('mcp__demo__slow', 1, true) ~= nil
  end)
  T.ok(autocmds > 0, 'User SwitchboardProgress fired')
  T.has(sb.statusline(), 'SB 1/1 mcp__demo__slow ')
  T.hasnt(sb.statusline(), 'Switchboard:', 'the title prefix in the statusline')
  if vim.lsp.status then
    T.wait('vim.lsp.status()', function()
      return vim.lsp.status():find('Switchboard: mcp__demo__slow', 1, true) ~= nil
    end)
  else
    local msgs = vim.lsp.util.get_progress_messages()
    T.ok(vim.tbl_filter(function(m)
      return m.title == 'Switchboard: mcp__demo__slow'
    end, msgs)[1], 'get_progress_messages(): ' .. vim.inspect(msgs))
  end
  vim.cmd('Switchboard cancel')
  T.wait('the call ends', function()
    return done
  end)
  T.eq(res.isError, true, 'a cancelled call is an error result')
  T.has(res.text, 'cancelled')
  local last
  T.wait('progress gone from the statusline', function()
    last = sb.statusline()
    return last == 'SB 1/1'
  end, nil, nil, function()
    return last
  end)
end)

T.case('reconnect says one line (no hit-enter prompt), failures named', function()
  T.start({ servers = { broken = { command = T.mcptest, args = { '--exit-at-start' } }, other = { command = T.mcptest } } })
  vim.cmd('Switchboard reconnect')
  T.wait('reconnect reply', function()
    return T.notes_text():find('reconnected:', 1, true) ~= nil
  end)
  local mine = vim.tbl_filter(function(n)
    return n.msg:sub(1, 13) == 'switchboard: '
  end, T.notes)
  T.eq(#mine, 2, 'notices') -- "reconnecting all servers..." and the outcome
  local line = mine[2].msg
  T.hasnt(line, '\n', 'one line')
  T.has(line, 'switchboard: reconnected: ')
  T.has(line, '2 ready')
  T.has(line, '1 failed (broken); :Switchboard servers shows why')
  T.eq(mine[2].level, vim.log.levels.WARN)
  T.notes = {}
  vim.cmd('Switchboard reconnect broken')
  T.wait('reconnect broken', function()
    return T.notes_text():find('broken failed', 1, true) ~= nil
  end)
  for _, n in ipairs(T.notes) do
    T.hasnt(n.msg, '\n', 'one line')
  end
end)

T.case('the statusline examples (status.lua header, help) work, also on 0.7; every window redraws', function()
  local sb = T.start()
  local header = T.read(T.plugin_dir .. '/lua/switchboard/status.lua')
  local example = header:match('\n%-%-%s+(vim%.o%.statusline = [^\n]+)')
  T.ok(example, 'example in the header')
  local help = T.read(T.plugin_dir .. '/doc/switchboard.txt')
  local help_example = help:match('\n%s+(set statusline=[^\n]+)')
  T.ok(help_example, 'example in the help')
  T.wait('servers known', function()
    return sb.statusline() == 'SB 1/1'
  end)
  -- What a user has after a restart: client ids that are not a sequence in the module's tables.
  sb.state.version[1000] = 'x'
  for _, run in ipairs({ example, help_example }) do
    local expr = run:match('%%{(.-)}')
    local okx, v = pcall(vim.api.nvim_eval, expr)
    T.ok(okx, expr .. ': ' .. tostring(v))
    T.eq(v, 'SB 1/1', expr)
    if run:sub(1, 4) == 'set ' then
      vim.cmd(run)
    else
      assert(loadstring(run))()
    end
    local ok, res = pcall(vim.api.nvim_eval_statusline, vim.o.statusline, {})
    T.ok(ok, run .. ': ' .. tostring(res))
    T.has(res.str, 'SB 1/1', run)
    vim.o.statusline = ''
  end
  -- Every window's statusline is redrawn (redrawstatus!), not only the current one.
  local cmds = {}
  local orig = vim.cmd
  vim.cmd = function(c, ...)
    table.insert(cmds, c)
    return orig(c, ...)
  end
  sb._fire('SwitchboardServers')
  vim.cmd = orig
  T.ok(vim.tbl_contains(cmds, 'redrawstatus!'), 'redrawstatus!: ' .. vim.inspect(cmds))
end)

T.case(':checkhealth: workspace files, bad entries, the provider and its key (never its value)', function()
  T.write(T.dir .. '/work/.mcp.json', vim.fn.json_encode({
    mcpServers = {
      good = { command = T.mcptest },
      ['bad__name'] = { command = T.mcptest },
      typo = { command = T.mcptest, agrs = { '-v' } },
      ['esc\27[31m'] = { command = T.mcptest },
    },
  }))
  T.write(T.dir .. '/work/.vscode/mcp.json', '{ not json')
  vim.env.SB_TEST_KEY = nil
  require('switchboard').setup(T.opts({ autostart = false, provider = { type = 'openai', model = 'm1', apiKeyEnv = 'SB_TEST_KEY' } }))
  local text = health_text()
  T.has(text, 'workspace MCP file readable: ' .. T.dir .. '/work/.mcp.json')
  T.has(text, 'server "bad__name": bad name (no "__" inside)')
  T.has(text, 'server "typo": unknown key "agrs"')
  T.has(text, 'server "esc^[[31m"')
  T.hasnt(text, '\27', 'a raw escape character')
  T.has(text, 'This server is skipped; the others still start.')
  T.has(text, 'workspace MCP file is not valid JSON')
  T.has(text, 'provider openai, model m1')
  T.has(text, '$SB_TEST_KEY is not set')
  vim.env.SB_TEST_KEY = 'sk-secret-value'
  text = health_text()
  vim.env.SB_TEST_KEY = nil
  T.has(text, '$SB_TEST_KEY is set')
  T.hasnt(text, 'sk-secret-value', 'the key itself')
  require('switchboard').setup(T.opts({ autostart = false }))
  T.has(health_text(), 'no provider set: the chat is unavailable')
end)

local function chat_script(text)
  local path = T.dir .. '/chat.script'
  T.write(path, text)
  return { type = 'script', script = path }
end

T.case('chat: Markdown, tool calls folded; the >20 tools warning once, one line, in the chat', function()
  local sb, c = T.start({
    servers = { demo = { command = T.mcptest }, more = { command = T.mcptest } },
    provider = chat_script(table.concat({
      'reply tool_call id=c1 name=mcp__demo__echo args={"text":"ping"}',
      '',
      'reply text "Done."',
      '',
    }, '\n')),
  })
  T.answer('switchboard_approval', T.pick('Allow once'))
  local notices = require('switchboard.notices')
  T.ok(not notices.tools_warned, 'warned before')
  vim.cmd('Switchboard chat use the tools')
  local chat = require('switchboard.chat')
  T.wait('turn done', function()
    local ch = chat.get()
    return ch and ch.last_done ~= nil
  end)
  T.wait('the warning', function()
    return notices.tools_warned and #T.notes > 0
  end)
  local text = table.concat(chat.transcript(), '\n')
  T.ok(text:find('\n> %*%*note:%*%* Switchboard sends %d+ tools to the model;'), 'the note in the chat')
  T.has(text, ':Switchboard tools lists them.')
  local warn = vim.tbl_filter(function(n)
    return n.msg:find('tools go to the model', 1, true) ~= nil
  end, T.notes)
  T.eq(#warn, 1, 'notices')
  T.hasnt(warn[1].msg, '\n', 'one line')
  T.ok(#warn[1].msg < vim.v.echospace, 'fits the command area: ' .. warn[1].msg)
  T.has(warn[1].msg, ': :Switchboard tools')
  T.hasnt(T.notes_text(), 'LSP[switchboard] Switchboard sends', "Neovim's own (hit-enter) message")
  -- Once per session: the next warning (another count, a restarted host) is not shown.
  local h = sb.handlers()['window/showMessage']
  h(nil, { type = 2, message = 'Switchboard sends 31 tools to the model; more than 20 ...' }, { client_id = c.id })
  vim.wait(0)
  T.eq(#vim.tbl_filter(function(n)
    return n.msg:find('tools', 1, true) ~= nil
  end, T.notes), 1, 'notices after a second warning')
  -- Other messages still go to Neovim's handler.
  local orig, passed = vim.lsp.handlers['window/showMessage'], nil
  vim.lsp.handlers['window/showMessage'] = function(_, params)
    passed = params.message
  end
  h(nil, { type = 3, message = 'something else' }, { client_id = c.id })
  vim.lsp.handlers['window/showMessage'] = orig
  T.eq(passed, 'something else', "other messages go to Neovim's handler")
  -- The chat buffer: Markdown, each tool call a closed fold with its result inside.
  local ch = chat.get()
  T.eq(vim.bo[ch.buf].filetype, 'markdown')
  local win = vim.fn.bufwinid(ch.buf)
  T.eq(vim.wo[win].foldmethod, 'expr')
  local lines = vim.api.nvim_buf_get_lines(ch.buf, 0, -1, false)
  local tool
  for i, l in ipairs(lines) do
    if l:find('[tool] mcp__demo__echo', 1, true) then
      tool = i
    end
  end
  T.ok(tool, 'tool line')
  T.has(lines[tool + 1], '    = ping')
  vim.api.nvim_win_call(win, function()
    T.eq(vim.fn.foldclosed(tool), tool, 'the tool call is a closed fold')
    T.eq(vim.fn.foldclosedend(tool), tool + 1, 'its result is inside')
    T.eq(vim.fn.foldlevel(tool - 1), 0, 'the text above is not folded')
  end)
  -- :Switchboard tools says what to do about 30 tools.
  vim.cmd('Switchboard tools')
  T.wait('tools list', function()
    return vim.api.nvim_buf_get_name(0):find('switchboard://tools', 1, true) ~= nil
  end)
  T.wait('the tools list', function()
    return #vim.api.nvim_buf_get_lines(0, 0, -1, false) > 16
  end, nil, nil, function()
    return vim.api.nvim_buf_get_lines(0, 0, -1, false)
  end)
  T.ok(vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]:match('^%d+ tools go to the model; 20 or fewer work best%.'),
    'what to do, on top of the tools list')
end)

T.case("MCP task: a long status message is shortened in the statusline, never the time it has run", function()
  -- A hostile server's status message is long once escaped (clear\x1b[2J ...): the statusline
  -- keeps its start and still ends with the elapsed time, cut on a character boundary.
  local sb = T.start({ servers = { demo = { command = T.mcptest, args = { '--tasks', '--task-poll-ms', '1', '--hostile' } } } })
  local done
  require('switchboard.commands').call_tool('mcp__demo__task_slow', { polls = 1000000 }, 'always-allow', function()
    done = true
  end)
  local line
  T.wait("the task's line in the statusline", function()
    line = sb.statusline()
    return line:find('mcp__demo__task_slow step ', 1, true) ~= nil
  end, nil, nil, function()
    return line
  end)
  T.ok(line:find(' · %d[%dhms ]*$') ~= nil, 'ends with the elapsed time: ' .. line)
  T.has(line, '...', 'the message shortened')
  T.ok(not line:find('[\27\7\r]'), 'no raw control characters: ' .. line)
  T.eq(vim.fn.strchars(line) > 0 and vim.fn.iconv(line, 'utf-8', 'utf-16') ~= '', true, 'valid UTF-8: ' .. line)
  T.ok(require('switchboard.progress').cancel(), 'cancel sent')
  T.wait('the call ends', function()
    return done
  end)
end)

T.case('MCP task: its line in the statusline; :Switchboard tasks lists it and cancels it', function()
  local sb = T.start({ servers = { demo = { command = T.mcptest, args = { '--tasks', '--task-poll-ms', '1' } } } })
  local done, res
  require('switchboard.commands').call_tool('mcp__demo__task_slow', { polls = 1000000 }, 'always-allow', function(e, r)
    T.ok(not e, vim.inspect(e))
    done, res = true, r
  end)
  T.wait("the task's line in the statusline", function()
    return sb.statusline():find('mcp__demo__task_slow step ', 1, true) ~= nil
  end)
  T.has(sb.statusline(), ' · ', 'the elapsed time')
  T.answer('switchboard_tasks', T.pick('running'))
  T.answer('switchboard_task_cancel', T.pick('Cancel the task'))
  vim.cmd('Switchboard tasks')
  T.wait('the call ends', function()
    return done
  end)
  T.eq(res.isError, true, 'a cancelled task is an error result')
  T.has(res.text, 'cancelled')
  local list = T.exec(require('switchboard.protocol').cmd.tasks)
  T.eq(list.tasks[1].state, 'cancelled')
  T.has(require('switchboard.tasks').format(list.tasks[1]), 'cancelled  mcp__demo__task_slow')
  T.eq(require('switchboard.tasks').format(vim.tbl_extend('force', list.tasks[1], { forAgent = true })):sub(-17), '  [for the agent]')
  -- Show result on the host's notice that a task ended: the plugin declares it shows results
  -- itself, and switchboard/showTaskResult opens the (escaped) result in a scratch buffer.
  local client = sb.client()
  T.eq(client.config.capabilities.experimental.switchboard.taskResults, true, 'declares taskResults')
  T.eq(client.config.capabilities.experimental.switchboard.viewMessages, true, 'declares viewMessages')
  local handler = require('switchboard').handlers()[require('switchboard.protocol').notify.show_task_result]
  handler(nil, { id = 'b49d8236a579', tool = 'mcp__demo__task_slow', state = 'completed', startedBy = 'agent',
    started = '2026-12-05T18:00:00Z', result = '# Report\nclear\\x1b[2J done' }, { client_id = client.id })
  T.wait('the result buffer', function()
    return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == '# mcp__demo__task_slow: task b49d8236a579, completed'
  end, nil, nil, function()
    return vim.api.nvim_buf_get_lines(0, 0, -1, false)
  end)
  T.eq(vim.api.nvim_buf_get_lines(0, 1, -1, false), { '# Report', 'clear\\x1b[2J done' })
  T.eq(vim.bo.modifiable, false, 'read-only')
end)

T.case('MCP task: one that ends after a restart of the host offers Show result, which opens its escaped result', function()
  local done = T.dir .. '/done'
  local args = { '--tasks', '--task-poll-ms', '1', '--task-state', T.dir .. '/server-tasks.json', '--hostile' }
  local sb, c = T.start({ servers = { demo = { command = T.mcptest, args = args } } })
  local commands, protocol = require('switchboard.commands'), require('switchboard.protocol')
  commands.call_tool('mcp__demo__task_slow', { file = done }, 'always-allow', function() end) -- ends with the host
  T.wait('the task running', function()
    local list = commands.exec_sync(protocol.cmd.tasks, nil, 2000)
    local t = type(list) == 'table' and list.tasks and list.tasks[1]
    return t and t.state == 'running' and t.message:find('^step ') ~= nil
  end, nil, 50)
  T.write(done, '')
  local offered
  T.answer('switchboard_message', function(labels)
    offered = labels
    return T.pick('Show result')(labels)
  end)
  sb.restart()
  T.wait('a new client', function()
    local c2 = sb.client()
    return c2 and c2.id ~= c.id and c2.initialized
  end)
  T.wait('the result buffer', function()
    return (vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] or ''):find('^# mcp__demo__task_slow: task %x+, completed$') ~= nil
  end, nil, nil, function()
    return { offered = offered, lines = vim.api.nvim_buf_get_lines(0, 0, -1, false) }
  end)
  T.eq(offered, { 'Show result' })
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 1, -1, false), '\n')
  T.has(text, 'task_slow done after ')
  T.has(text, 'clear\\x1b[2J', 'the escape made visible')
  T.ok(not text:find('\27', 1, true) and not text:find('\7', 1, true), 'no raw control characters')
  T.eq(vim.bo.modifiable, false, 'read-only')
end)

return T
