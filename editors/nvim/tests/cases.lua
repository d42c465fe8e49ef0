-- The cases, against the real `switchboard serve` and cmd/mcptest (server "demo").
local T = require('harness')
local has = function(v)
  return vim.fn.has('nvim-' .. v) == 1
end

local function protocol()
  return require('switchboard.protocol')
end

--- Calls mcp__demo__echo through switchboard.callTool; returns a function that waits for the result.
local function call_echo(text, mode)
  local done, res, err = false, nil, nil
  require('switchboard.commands').call_tool('mcp__demo__echo', { text = text }, mode, function(e, r)
    done, res, err = true, r, e
  end)
  return function(what)
    T.wait(what or 'callTool result', function()
      return done
    end)
    T.ok(not err, 'callTool error: ' .. vim.inspect(err))
    return res
  end, function()
    return done
  end
end

local function allowlist()
  return T.read(T.allow_file) or ''
end

local function pending_count()
  local list = T.exec(protocol().cmd.approvals)
  return #list, list
end

T.case('setup: starts the host, attaches, advertises every command', function()
  local sb, c = T.start()
  local caps = c.server_capabilities
  local cmds = caps.executeCommandProvider and caps.executeCommandProvider.commands or {}
  for _, name in pairs(protocol().cmd) do
    T.ok(vim.tbl_contains(cmds, name), 'command not advertised: ' .. name)
  end
  T.ok(caps.codeActionProvider, 'codeActionProvider missing')
  T.eq(c.name, 'switchboard')
  T.ok(sb.state.version[c.id], 'serverInfo.version not recorded')
  -- A second buffer attaches to the same client.
  T.write(T.dir .. '/work/b.txt', 'b\n')
  vim.cmd('edit ' .. T.dir .. '/work/b.txt')
  T.wait('second buffer attached', function()
    return vim.lsp.buf_is_attached(0, c.id)
  end)
  T.eq(#require('switchboard.compat').get_clients('switchboard'), 1, 'one client')
end)

T.case('configFiles and the user mcp.json are read (sources shown)', function()
  local extra = T.dir .. '/extra-mcp.json'
  T.write(extra, vim.fn.json_encode({ servers = { fromfile = { command = T.mcptest } } }))
  T.write(T.config_dir .. '/mcp.json', vim.fn.json_encode({ mcpServers = { user = { command = T.mcptest } } }))
  T.start({ configFiles = { extra } })
  local list = T.wait_servers(function(l)
    local a, b = T.server(l, 'fromfile'), T.server(l, 'user')
    return a and a.state == 'ready' and b and b.state == 'ready'
  end, 'fromfile and user ready')
  T.has(T.server(list, 'fromfile').source, 'extra-mcp.json')
  T.has(T.server(list, 'user').source, 'mcp.json')
  T.eq(T.server(list, 'demo').source, 'editor settings')
end)

T.case('setup before any file: the host starts detached, files attach later', function()
  local sb = require('switchboard')
  sb.setup(T.opts())
  T.wait('client initialized', function()
    local c = sb.client()
    return c and c.initialized
  end)
  local c = sb.client()
  T.write(T.dir .. '/work/later.txt', 'x\n')
  vim.cmd('edit ' .. T.dir .. '/work/later.txt')
  T.wait('file attached', function()
    return vim.lsp.buf_is_attached(0, c.id)
  end)
  -- Non-file buffers are left alone.
  vim.cmd('enew')
  vim.bo.buftype = 'nofile'
  T.ok(not vim.lsp.buf_is_attached(0, c.id), 'scratch buffer attached')
  T.eq(#require('switchboard.compat').get_clients('switchboard'), 1)
end)

T.case(':Switchboard servers lists state, tools and errors; statusline', function()
  local sb = T.start({ servers = { broken = { command = T.mcptest, args = { '--exit-at-start' } } } })
  local list = T.wait_servers(function(l)
    local d, b = T.server(l, 'demo'), T.server(l, 'broken')
    return d and d.state == 'ready' and b and b.state == 'failed'
  end, 'demo ready and broken failed')
  T.ok(T.server(list, 'demo').tools > 0, 'demo has tools')
  T.answer('switchboard_servers', function()
    return 0 -- just look
  end)
  vim.cmd('Switchboard servers')
  T.wait('servers picker', function()
    return #T.selects_of('switchboard_servers') == 1
  end)
  local labels = T.selects_of('switchboard_servers')[1].labels
  T.has(labels, 'demo  ready  ')
  T.has(labels, 'broken  failed')
  T.has(labels, 'error: ')
  T.wait('statusline', function()
    return sb.statusline():find('SB 1/2', 1, true) ~= nil
  end)
  T.has(sb.statusline(), '1 failed')
  T.eq(require('switchboard.status').data().pending, 0)
end)

T.case(':Switchboard reconnect [server], from the servers list too; completion', function()
  T.start()
  local names = require('switchboard.commands').complete('', 'Switchboard reconnect ', 22)
  T.eq(names, { 'demo' }, 'server name completion')
  local subs = require('switchboard.commands').complete('ap', 'Switchboard ap', 14)
  T.eq(subs, { 'approve' }, 'subcommand completion')
  vim.cmd('Switchboard reconnect demo')
  T.wait('reconnect reply', function()
    return T.notes_text():find('demo  ready', 1, true) ~= nil
  end)
  T.notes = {}
  vim.cmd('Switchboard reconnect')
  T.wait('reconnect all reply', function()
    return T.notes_text():find('demo  ready', 1, true) ~= nil
  end)
  -- Picking a server in :Switchboard servers reconnects it.
  T.notes = {}
  T.answer('switchboard_servers', T.pick('demo'))
  vim.cmd('Switchboard servers')
  T.wait('reconnect from the list', function()
    return T.notes_text():find('demo  ready', 1, true) ~= nil
  end)
end)

T.case('callTool: approval prompt through vim.ui.select, Allow once', function()
  T.start()
  T.answer('switchboard_approval', T.pick('Allow once'))
  local wait = call_echo('hi there')
  local res = wait()
  T.eq(res.isError, false, 'isError')
  T.has(res.text, 'hi there')
  local sel = T.selects_of('switchboard_approval')
  T.eq(#sel, 1, 'one prompt')
  T.eq(sel[1].labels, { 'Allow once', 'Allow tool', 'Allow server', 'Deny' })
  T.has(sel[1].prompt, 'mcp__demo__echo')
  T.hasnt(allowlist(), 'mcp__demo__echo', 'allowlist after Allow once')
  -- The approval was announced and resolved; nothing stays pending.
  T.wait('approval resolved locally', function()
    return require('switchboard.approvals').count() == 0
  end)
  T.eq((pending_count()), 0)
  -- The host's own record of it.
  local resolved
  for _, e in ipairs(T.events()) do
    if e.kind == 'approvalResolved' then
      resolved = e
    end
  end
  T.ok(resolved, 'approvalResolved in the events file')
  T.eq({ resolved.decision, resolved.by }, { 'once', 'user' })
end)

T.case('callTool: Allow tool writes the allowlist; the next call is not asked', function()
  T.start()
  T.answer('switchboard_approval', T.pick('Allow tool'))
  local res = call_echo('one')()
  T.eq(res.isError, false)
  T.has(allowlist(), 'mcp__demo__echo')
  local res2 = call_echo('two')()
  T.has(res2.text, 'two')
  T.eq(#T.selects_of('switchboard_approval'), 1, 'asked once only')
end)

T.case('callTool: Allow server allowlists every tool of the server', function()
  T.start()
  T.answer('switchboard_approval', T.pick('Allow server'))
  T.has(call_echo('one')().text, 'one')
  T.has(allowlist(), 'mcp__demo__*')
  local res = T.exec(protocol().cmd.call_tool, { name = 'mcp__demo__big', arguments = { n = 5 } })
  T.eq(res.text, 'xxxxx')
  T.eq(#T.selects_of('switchboard_approval'), 1, 'the second tool was not asked')
end)

T.case('callTool: Deny gives a denied result and runs nothing', function()
  T.start()
  T.answer('switchboard_approval', T.pick('Deny'))
  local res = call_echo('secret')()
  T.eq(res.isError, true, 'isError')
  T.has(res.text:lower(), 'denied')
  T.hasnt(allowlist(), 'mcp__demo__echo')
end)

T.case('approval through vim.lsp.buf.code_action (picker left open)', function()
  T.start()
  T.answer('switchboard_approval', function()
    return 'async' -- the user ignores the prompt
  end)
  local wait = call_echo('via code action')
  T.wait('approvalRequested', function()
    return require('switchboard.approvals').count() == 1
  end)
  T.answer('codeaction', T.pick('Allow once: mcp__demo__echo'))
  vim.lsp.buf.code_action()
  local res = wait()
  T.has(res.text, 'via code action')
  local ca = T.selects_of('codeaction')[1]
  T.has(ca.labels, 'Allow tool: mcp__demo__echo')
  T.has(ca.labels, 'Deny: mcp__demo__echo')
  -- The prompt answered elsewhere no longer waits for its picker.
  T.wait('prompt released', function()
    return require('switchboard.confirm').waiting() == 0
  end)
end)

T.case('approval through a textDocument/codeAction request + executeCommand', function()
  local _, c = T.start()
  T.answer('switchboard_approval', function()
    return 'async'
  end)
  local wait, done = call_echo('request path')
  T.wait('approvalRequested', function()
    return require('switchboard.approvals').count() == 1
  end)
  local compat = require('switchboard.compat')
  local params = compat.make_range_params(0, c)
  params.context = { diagnostics = {} }
  local resp = compat.request_sync(c, 'textDocument/codeAction', params, 5000, 0)
  T.ok(resp and resp.result, 'codeAction reply: ' .. vim.inspect(resp))
  local deny
  for _, a in ipairs(resp.result) do
    T.eq(a.kind, 'quickfix')
    if a.title == 'Deny: mcp__demo__echo' then
      deny = a
    end
  end
  T.ok(deny, 'Deny action in ' .. vim.inspect(resp.result))
  local cmd = deny.command
  T.eq(cmd.command, protocol().cmd.approve)
  T.exec(cmd.command, cmd.arguments[1])
  local res = wait()
  T.eq(res.isError, true)
  T.ok(done())
  -- The first answer won; a second one is refused with InvalidParams.
  local _, err = T.exec(cmd.command, cmd.arguments[1])
  T.ok(err and err.code == -32602, 'second answer: ' .. vim.inspect(err))
  -- The code action is gone once resolved.
  local resp2 = compat.request_sync(c, 'textDocument/codeAction', params, 5000, 0)
  T.eq(#(resp2.result or {}), 0, 'no code actions after resolution')
end)

T.case('picker that never answers: approval stays pending; :Switchboard approve answers it', function()
  local sb = T.start()
  local first = true
  T.answer('switchboard_approval', function()
    if first then
      first = false
      return 'async' -- on 0.7 the host now gets null
    end
    return T.pick('Allow once')({ 'Allow once', 'Allow tool', 'Allow server', 'Deny' })
  end)
  -- Record what the showMessageRequest handler answers.
  local confirm = require('switchboard.confirm')
  local orig, returned = confirm.show_message_request, {}
  confirm.show_message_request = function(...)
    local r = orig(...)
    table.insert(returned, r)
    return r
  end
  local wait, done = call_echo('later')
  T.wait('approvalRequested', function()
    return require('switchboard.approvals').count() == 1
  end)
  if has('0.10') then
    T.eq(#returned, 0, 'handler still waiting for the picker (coroutine)')
  else
    T.wait('handler answered', function()
      return #returned == 1
    end)
    T.eq(returned[1], vim.NIL, '0.7 answers null (dismissed)')
  end
  -- Still pending on the host, and the call has not run.
  vim.wait(200)
  T.ok(not done(), 'call finished without an answer')
  local n = pending_count()
  T.eq(n, 1, 'host pending approvals')
  T.has(sb.statusline(), '1 approval')
  if not has('0.10') then
    T.has(T.notes_text(), ':Switchboard approve', 'user told where the approval went')
  end
  vim.cmd('Switchboard approve')
  local res = wait()
  T.has(res.text, 'later')
  T.eq(#T.selects_of('switchboard_approval'), 2)
  T.wait('statusline clears', function()
    return not sb.statusline():find('approval', 1, true)
  end)
end)

T.case('asynchronous picker answering later (telescope/dressing style)', function()
  T.start()
  local cb
  T.answer('switchboard_approval', function(_, items, _, on_choice)
    cb = function()
      on_choice(items[2], 2) -- Allow tool
    end
    return 'async'
  end)
  local wait = call_echo('async')
  T.wait('approvalRequested', function()
    return cb and require('switchboard.approvals').count() == 1
  end)
  vim.defer_fn(cb, 50)
  local res = wait()
  T.has(res.text, 'async')
  T.wait('allowlist written', function()
    return allowlist():find('mcp__demo__echo', 1, true) ~= nil
  end)
end)

T.case(':Switchboard approve with several pending: pick the approval, then the decision', function()
  T.start()
  T.answer('switchboard_approval', T.sequence(function()
    return 'async'
  end, function()
    return 'async'
  end, T.pick('Deny')))
  local w1 = call_echo('first')
  local w2 = call_echo('second')
  T.wait('two approvals', function()
    return require('switchboard.approvals').count() == 2
  end)
  T.answer('switchboard_pending', function(labels)
    for i, l in ipairs(labels) do
      if l:find('second', 1, true) then
        return i
      end
    end
  end)
  vim.cmd('Switchboard approve')
  local r2 = w2()
  T.eq(r2.isError, true, 'second denied')
  T.eq(require('switchboard.approvals').count(), 1)
  T.answer('switchboard_approval', T.pick('Allow once'))
  vim.cmd('Switchboard approve') -- one left: straight to the decision
  local r1 = w1()
  T.has(r1.text, 'first')
end)

T.case(':Switchboard allow [server]: tool, whole server, revoke (allowlist.set)', function()
  T.start()
  T.answer('switchboard_allow', T.pick('[ ] mcp__demo__echo'))
  vim.cmd('Switchboard allow demo')
  T.wait('allowlist has the tool', function()
    return allowlist():find('mcp__demo__echo', 1, true) ~= nil
  end)
  T.hasnt(allowlist(), 'mcp__demo__*')
  local al = T.exec(protocol().cmd.allowlist_get)
  T.ok(vim.tbl_contains(al.entries, 'mcp__demo__echo'), 'allowlist.get: ' .. vim.inspect(al))
  -- The allowed tool runs without a prompt now.
  T.has(call_echo('free')().text, 'free')
  T.eq(#T.selects_of('switchboard_approval'), 0)

  T.answer('switchboard_allow', T.pick('[ ] every tool of demo'))
  vim.cmd('Switchboard allow demo')
  T.wait('whole server', function()
    return allowlist():find('mcp__demo__*', 1, true) ~= nil
  end)

  T.answer('switchboard_allow', T.pick('revoke'))
  vim.cmd('Switchboard allow demo')
  T.wait('revoked', function()
    return not allowlist():find('mcp__demo__', 1, true)
  end)
  -- Without a server argument the server is picked first.
  T.answer('switchboard_servers', T.pick('demo'))
  T.answer('switchboard_allow', T.pick('[ ] mcp__demo__echo'))
  vim.cmd('Switchboard allow')
  T.wait('allowlist has the tool again', function()
    return allowlist():find('mcp__demo__echo', 1, true) ~= nil
  end)
end)

local function chat_script(text)
  local path = T.dir .. '/chat.script'
  T.write(path, text)
  return { type = 'script', script = path }
end

local function transcript()
  return table.concat(require('switchboard.chat').transcript(), '\n')
end

T.case('chat: script provider, text, tool calls with approval state, results, follow-up', function()
  T.start({
    provider = chat_script(table.concat({
      'reply text "Hello from the script.\\nA second line."',
      'reply tool_call id=c1 name=mcp__demo__echo args={"text":"ping"}',
      'reply tool_call id=c2 name=mcp__demo__fail args={"message":"nope"}',
      '',
      'expect last_tool_result id=c1 ~ "ping"',
      'reply text "All done."',
      '',
      'expect last_user ~ "and again"',
      'reply text "Second answer."',
      '',
    }, '\n')),
  })
  T.answer('switchboard_approval', function(_, _, opts)
    return opts.prompt:find('mcp__demo__echo', 1, true) and 1 or 4 -- Allow once / Deny
  end)
  vim.cmd('Switchboard chat say hello')
  local chat = require('switchboard.chat')
  T.wait('turn done', function()
    local c = chat.get()
    return c and c.last_done ~= nil
  end)
  T.eq(vim.bo.filetype, 'switchboard-chat')
  local tr = transcript()
  T.has(tr, '## You\nsay hello\n\n## Switchboard\nHello from the script.\nA second line.\n')
  T.has(tr, '[tool] mcp__demo__echo {"text": "ping"}  -- allowed once by user, done\n    = ping\n')
  T.has(tr, '[tool] mcp__demo__fail {"message": "nope"}  -- denied by user\n    ! ')
  T.has(tr, 'All done.')
  local _, n = tr:gsub('%[tool%] mcp__demo__echo', '')
  T.eq(n, 1, 'one line per tool call')
  local conv = chat.get().conversation
  T.ok(conv, 'conversation id')
  -- A follow-up typed into the prompt area (below the marker) and sent with <CR>.
  local buf = chat.get().buf
  vim.api.nvim_buf_set_lines(buf, -2, -1, false, { 'and again' })
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  T.wait('second turn done', function()
    return transcript():find('Second answer.', 1, true) ~= nil and chat.get().turn == nil
  end)
  T.eq(chat.get().conversation, conv, 'same conversation')
  T.has(transcript(), '## You\nand again\n')
  local last = vim.api.nvim_buf_get_lines(buf, -3, -1, false)
  T.eq(last[1]:sub(1, 7), '### You', 'prompt marker stays last')
  T.eq(last[2], '', 'prompt area cleared')
end)

T.case('chat: <C-c> in the chat buffer cancels the running turn', function()
  T.start({ provider = chat_script('reply hang\n') })
  local chat = require('switchboard.chat')
  local buf = chat.open()
  vim.api.nvim_buf_set_lines(buf, -2, -1, false, { 'wait forever' })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  T.wait('turn started', function()
    return chat.get().turn ~= nil
  end)
  T.has(transcript(), 'wait forever')
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<C-c>', true, false, true), 'x', false)
  T.wait('turn cancelled', function()
    return chat.get().last_done ~= nil
  end)
  T.has(transcript(), '(cancelled)')
  T.eq(chat.get().turn, nil)
end)

T.case(':checkhealth switchboard', function()
  T.start({ servers = { broken = { command = T.dir .. '/no-such-server' } } })
  T.write(T.config_dir .. '/mcp.json', '{"mcpServers": {}}')
  T.write(T.allow_file, '# none\n')
  T.wait_servers(function(l)
    local b = T.server(l, 'broken')
    return b and b.state == 'failed'
  end)
  vim.cmd('checkhealth switchboard')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  T.has(text, 'switchboard binary')
  T.has(text, T.bin)
  T.has(text, 'switchboard ') -- --version output
  T.has(text, 'Neovim ')
  T.has(text, 'MCP servers file readable')
  T.has(text, 'allowlist readable')
  T.has(text, 'demo  ready')
  T.has(text, 'broken  failed')
  T.hasnt(text, 'not found on $PATH')
end)

T.case('settings change: update() sends workspace/didChangeConfiguration', function()
  local sb = T.start()
  sb.update({ servers = { demo = { command = T.mcptest }, second = { command = T.mcptest } } })
  T.wait_servers(function(l)
    local s = T.server(l, 'second')
    return s and s.state == 'ready'
  end, 'second server ready')
  sb.update({ servers = { demo = { command = T.mcptest } } })
  T.wait_servers(function(l)
    return T.server(l, 'second') == nil
  end, 'second server removed')
end)

T.case(':Switchboard tools and :Switchboard call', function()
  T.start()
  vim.cmd('Switchboard tools demo')
  T.wait('tools buffer', function()
    return vim.api.nvim_buf_get_name(0):find('switchboard://tools', 1, true) ~= nil
  end)
  T.has(vim.api.nvim_buf_get_lines(0, 0, -1, false), 'mcp__demo__echo')
  T.answer('switchboard_approval', T.pick('Allow once'))
  vim.cmd('Switchboard call mcp__demo__echo {"text":"from the command line"}')
  T.wait('call result notified', function()
    return T.notes_text():find('from the command line', 1, true) ~= nil
  end)
end)

T.case('serversChanged updates the cached list and the statusline (add_tool)', function()
  local sb = T.start({ mode = 'always-allow' })
  T.wait('cached list has demo ready (serversChanged)', function()
    local d = T.server(sb.servers(), 'demo')
    return d and d.state == 'ready'
  end)
  local before = T.server(sb.servers(), 'demo')
  local res = T.exec(protocol().cmd.call_tool, { name = 'mcp__demo__add_tool', arguments = { name = 'extra' } })
  T.eq(res.isError, false, vim.inspect(res))
  T.wait('notification with one more tool', function()
    local d = T.server(sb.servers(), 'demo')
    return d and d.tools == before.tools + 1
  end)
  T.eq(#T.selects_of('switchboard_approval'), 0, 'always-allow asks nothing')
  T.wait('statusline', function()
    return sb.statusline() == 'SB 1/1'
  end)
end)

T.case('workspace trust prompt (switchboard_trust): Trust starts the server', function()
  T.write(T.dir .. '/work/.mcp.json', vim.fn.json_encode({ mcpServers = { ws = { command = T.mcptest } } }))
  T.answer('switchboard_trust', T.pick('Trust'))
  T.start()
  T.wait_servers(function(l)
    local s = T.server(l, 'ws')
    return s and s.state == 'ready'
  end, 'ws trusted and ready')
  local sel = T.selects_of('switchboard_trust')
  T.eq(#sel, 1, 'asked once')
  T.has(sel[1].prompt, "'ws'")
  T.eq(sel[1].labels, { 'Trust', "Don't trust" })
end)

T.case('workspace trust answered late by an asynchronous picker', function()
  T.write(T.dir .. '/work/.mcp.json', vim.fn.json_encode({ mcpServers = { ws = { command = T.mcptest } } }))
  local cb
  T.answer('switchboard_trust', function(_, items, _, on_choice)
    cb = function()
      on_choice(items[1], 1)
    end
    return 'async'
  end)
  T.start()
  T.wait('trust prompt', function()
    return cb ~= nil
  end)
  local s = T.server(T.wait_servers(function(l)
    return T.server(l, 'ws') ~= nil
  end), 'ws')
  T.eq(s.state, 'untrusted')
  cb()
  T.wait_servers(function(l)
    local w = T.server(l, 'ws')
    return w and w.state == 'ready'
  end, 'ws trusted and ready')
end)

T.case('approval timeout: the host denies, the pending approval disappears', function()
  local sb = T.start({ approvalTimeoutSeconds = 1 })
  T.answer('switchboard_approval', function()
    return 'async'
  end)
  local wait = call_echo('too late')
  T.wait('approvalRequested', function()
    return require('switchboard.approvals').count() == 1
  end)
  local res = wait()
  T.eq(res.isError, true, 'denied after the timeout')
  T.wait('approval cleared', function()
    return require('switchboard.approvals').count() == 0
  end)
  T.hasnt(sb.statusline(), 'approval')
  local by
  for _, e in ipairs(T.events()) do
    if e.kind == 'approvalResolved' then
      by = e.by
    end
  end
  T.eq(by, 'timeout')
end)

T.case('host stopped: statusline empty, :Switchboard reconnect starts it again', function()
  local sb, c = T.start()
  T.wait('statusline from serversChanged', function()
    return sb.statusline() == 'SB 1/1'
  end)
  require('switchboard.compat').stop(c)
  T.wait('client stopped', function()
    return sb.client() == nil
  end)
  T.eq(sb.statusline(), '')
  vim.cmd('Switchboard servers')
  T.has(T.notes_text(), 'not running')
  vim.cmd('Switchboard reconnect')
  T.wait('client back', function()
    local c2 = sb.client()
    return c2 and c2.id ~= c.id and c2.initialized and vim.lsp.buf_is_attached(0, c2.id)
  end)
end)

T.case(':checkhealth switchboard without a binary', function()
  require('switchboard').setup(T.opts({ cmd = { 'switchboard-not-installed', 'serve' }, autostart = false }))
  vim.cmd('checkhealth switchboard')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  T.has(text, 'switchboard-not-installed not found on $PATH')
  T.has(text, 'not running')
end)

T.case('wire names are spelled only in protocol.lua, and it holds nothing else', function()
  local root = T.plugin_dir
  local src = T.read(root .. '/lua/switchboard/protocol.lua')
  local names = {}
  for _, group in pairs(require('switchboard.protocol')) do
    for _, v in pairs(group) do
      names[v] = true
    end
  end
  local literals = 0
  for lit in src:gmatch("'([^']*)'") do
    literals = literals + 1
    T.ok(names[lit], 'protocol.lua literal that is not a wire name: ' .. lit)
    T.ok(lit:match('^switchboard[./]%a'), 'not a switchboard name: ' .. lit)
  end
  T.eq(literals, vim.tbl_count(names), 'one literal per name')
  T.hasnt(src, '"', 'double-quoted strings in protocol.lua')
  local files = {}
  for _, d in ipairs({ 'plugin', 'lsp', 'lua/switchboard' }) do
    vim.list_extend(files, vim.fn.globpath(root, d .. '/*.lua', false, true))
  end
  T.ok(#files >= 10, 'plugin files found')
  for _, f in ipairs(files) do
    if not f:match('protocol%.lua$') then
      -- (module names like require('switchboard.approvals') are not wire names)
      local text = T.read(f):gsub("require%(%s*'[^']*'%s*%)", 'require()')
      for name in pairs(names) do
        T.hasnt(text, "'" .. name .. "'", f)
        T.hasnt(text, '"' .. name .. '"', f)
      end
    end
  end
end)

T.case('help file has its tags', function()
  local doc = T.plugin_dir .. '/doc'
  local tmp = T.dir .. '/doc'
  vim.fn.mkdir(tmp, 'p')
  vim.fn.writefile(vim.fn.readfile(doc .. '/switchboard.txt'), tmp .. '/switchboard.txt')
  vim.cmd('helptags ' .. vim.fn.fnameescape(tmp))
  local tags = T.read(tmp .. '/tags') or ''
  for _, tag in ipairs({ 'switchboard-setup', ':Switchboard', 'switchboard-rtp', 'switchboard-approvals' }) do
    T.has(tags, tag .. '\t', 'help tag')
  end
end)

T.case('0.11+: vim.lsp.enable("switchboard") with lsp/switchboard.lua', function()
  local file = T.dir .. '/work/c.lua'
  T.write(file, 'return 1\n')
  vim.cmd('filetype on')
  require('switchboard').setup(T.opts({ autostart = false }))
  vim.lsp.enable('switchboard')
  vim.cmd('edit ' .. file)
  local sb = require('switchboard')
  T.wait('client from vim.lsp.enable', function()
    local c = sb.client()
    return c and c.initialized and vim.lsp.buf_is_attached(0, c.id)
  end)
  T.wait_servers(function(l)
    local d = T.server(l, 'demo')
    return d and d.state == 'ready'
  end)
  T.answer('switchboard_approval', T.pick('Allow once'))
  T.has(call_echo('enabled')().text, 'enabled')
  vim.lsp.enable('switchboard', false)
end, {
  skip = function()
    return not has('0.11')
  end,
})

return T
