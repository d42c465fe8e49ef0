-- workspace/executeCommand wrappers for every host command, and the :Switchboard subcommands.
local compat = require('switchboard.compat')
local protocol = require('switchboard.protocol')
local approvals = require('switchboard.approvals')

local M = {}
local cmd = protocol.cmd

local function sb()
  return require('switchboard')
end

local function notify(msg, level)
  vim.notify('switchboard: ' .. msg, level or vim.log.levels.INFO)
end

local function errmsg(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end
M.errmsg = errmsg

--- Runs a host command. `arg` (a table or nil) becomes arguments[0]. cb(err, result).
function M.exec(command, arg, cb, client)
  cb = cb or function() end
  client = client or sb().client()
  if not client then
    cb({ message = 'switchboard is not running (see :checkhealth switchboard)' })
    return
  end
  local params = { command = command }
  if arg ~= nil then
    params.arguments = { arg }
  end
  local ok = compat.request(client, 'workspace/executeCommand', params, function(err, result)
    cb(err, result)
  end)
  if ok == false then
    cb({ message = 'switchboard: request failed (client stopped?)' })
  end
end

--- Synchronous variant (for completion and health): result, err.
function M.exec_sync(command, arg, timeout_ms, client)
  client = client or sb().client()
  if not client then
    return nil, { message = 'switchboard is not running' }
  end
  local params = { command = command }
  if arg ~= nil then
    params.arguments = { arg }
  end
  local resp, err = compat.request_sync(client, 'workspace/executeCommand', params, timeout_ms or 2000)
  if not resp then
    return nil, { message = err or 'timeout' }
  end
  return resp.result, resp.err or resp.error
end

local function object(t)
  if t == nil or (type(t) == 'table' and next(t) == nil) then
    return vim.empty_dict()
  end
  return t
end

-- One function per host command (PROTOCOL.md section 3).
function M.servers(cb)
  local c = sb().client()
  local answer = c and sb().servers_answer(c.id)
  M.exec(cmd.servers, nil, function(err, result)
    if not err and type(result) == 'table' and answer then
      answer(result)
    end
    cb(err, result)
  end)
end

function M.tools(server, cb)
  M.exec(cmd.tools, server and { server = server } or nil, cb)
end

function M.reconnect(server, cb)
  M.exec(cmd.reconnect, server and { server = server } or nil, function(err, result)
    if not err and type(result) == 'table' and not server then
      local c = sb().client()
      if c then
        sb()._set_servers(c.id, result)
      end
    end
    cb(err, result)
  end)
end

function M.allowlist_get(cb)
  M.exec(cmd.allowlist_get, nil, cb)
end

function M.allowlist_set(prefix, entries, cb)
  M.exec(cmd.allowlist_set, { prefix = prefix, entries = entries or {} }, cb)
end

-- `client` (optional, default the current buffer's host): the host to ask; an answer to a
-- host's own prompt goes to that host.
function M.approvals(cb, client)
  M.exec(cmd.approvals, nil, cb, client)
end

function M.approve(id, decision, cb, client)
  M.exec(cmd.approve, { id = id, decision = decision }, cb, client)
end

--- `fingerprint` (optional): the definition a trust prompt showed; a changed one is refused.
function M.trust(server, decision, cb, client, fingerprint)
  M.exec(cmd.trust, { server = server, decision = decision, fingerprint = fingerprint }, cb, client)
end

function M.sign_in(server, cb)
  M.exec(cmd.sign_in, { server = server }, cb)
end

function M.sign_out(server, cb)
  M.exec(cmd.sign_out, { server = server }, cb)
end

function M.call_tool(name, arguments, mode, cb)
  M.exec(cmd.call_tool, { name = name, arguments = object(arguments), mode = mode }, cb)
end

function M.chat(prompt, conversation, mode, cb, extra)
  local arg = { prompt = prompt, conversation = conversation, mode = mode }
  for k, v in pairs(extra or {}) do -- attachments, serverPrompt (resources.lua)
    arg[k] = v
  end
  M.exec(cmd.chat, arg, cb)
end

--- Ends a conversation on the host (its chat buffer was wiped).
function M.chat_end(conversation, cb)
  M.exec(cmd.chat_end, { conversation = conversation }, cb)
end

function M.cancel(turn, cb)
  M.exec(cmd.cancel, { turn = turn }, cb)
end

function M.models(cb)
  M.exec(cmd.models, nil, cb)
end

function M.elicitations(cb)
  M.exec(cmd.elicitations, nil, cb)
end

--- Answers a question of an MCP server: action 'accept' (with content: field name -> value),
--- 'decline' or 'cancel'. `client`: the one that asked (default: the running one).
function M.elicit(id, action, content, cb, client)
  local arg = { id = id, action = action }
  if action == 'accept' then
    arg.content = object(content)
  end
  M.exec(cmd.elicit, arg, cb, client)
end

-- Formatting ---------------------------------------------------------------------------------

function M.format_server(s)
  local parts = { s.name, s.state == 'blocked' and 'blocked by your organisation' or s.state }
  if s.state == 'ready' then
    table.insert(parts, ('%d tool%s'):format(s.tools or 0, s.tools == 1 and '' or 's'))
  end
  if s.transport and s.transport ~= 'stdio' then
    table.insert(parts, s.transport)
  end
  if s.protocolVersion == '2026-07-28' then -- the older revision is the usual case: not shown
    table.insert(parts, 'MCP 2026-07-28')
  end
  if type(s.shared) == 'table' then -- runs once for several windows (the shared-server daemon)
    local n = tonumber(s.shared.windows) or 0
    table.insert(parts, ('shared (%d window%s)'):format(n, n == 1 and '' or 's'))
  end
  if s.source and s.source ~= '' then
    table.insert(parts, '(' .. s.source .. ')')
  end
  if type(s.sandbox) == 'string' and s.sandbox ~= '' then
    table.insert(parts, s.sandbox)
  end
  local line = table.concat(parts, '  ')
  if type(s.blocked) == 'table' and #s.blocked > 0 then
    line = line .. '  ' .. tostring(s.blocked[#s.blocked]):gsub('\n', ' ')
  end
  if (s.state == 'blocked' or s.state == 'stopped') and s.error and s.error ~= '' and s.error ~= vim.NIL then
    -- The policy's sentence (rule, file, whom to ask), or why a shared server stopped
    -- (`switchboard daemon stop`): a state, not a failure.
    line = line .. '  ' .. tostring(s.error):gsub('\n', ' ')
  elseif s.error and s.error ~= '' and s.error ~= vim.NIL then
    line = line .. '  error: ' .. tostring(s.error):gsub('\n', ' ')
  end
  -- A shared daemon of another build, or one being replaced: what to do (nothing else says it).
  local warning = type(s.shared) == 'table' and s.shared.warning
  if type(warning) == 'string' and warning ~= '' then
    line = line .. '  warning: ' .. warning:gsub('\n', ' ')
  end
  return line
end

local function summary(list)
  local lines = {}
  for _, s in ipairs(list or {}) do
    table.insert(lines, M.format_server(s))
  end
  if #lines == 0 then
    return 'no MCP servers configured'
  end
  return table.concat(lines, '\n')
end
M.summary = summary

--- One line for the outcome of a reconnect (a list of every server would stop at a hit-enter
--- prompt): "demo ready (3 tools)", or "2 ready, 1 failed: broken". Returns line, failed.
function M.reconnect_line(list, server)
  list = list or {}
  local one
  for _, x in ipairs(server and list or {}) do
    if x.name == server then
      one = x
    end
  end
  if one then
    local s = one
    if s.state == 'ready' then
      return ('%s ready (%d tool%s)'):format(s.name, s.tools or 0, s.tools == 1 and '' or 's'), false
    end
    local why = (s.error and s.error ~= vim.NIL and s.error ~= '') and (': ' .. tostring(s.error):gsub('%s+', ' ')) or ''
    if #why > 80 then
      why = why:sub(1, 77) .. '...'
    end
    return ('%s %s%s'):format(s.name, s.state, why), s.state == 'failed'
  end
  if #list == 0 then
    return 'no MCP servers configured', false
  end
  local counts, failed = {}, {}
  local order = { 'ready', 'starting', 'untrusted', 'needs-auth', 'blocked', 'disabled', 'stopped', 'failed' }
  for _, s in ipairs(list) do
    if not counts[s.state] and not vim.tbl_contains(order, s.state) then
      table.insert(order, #order, s.state)
    end
    counts[s.state] = (counts[s.state] or 0) + 1
    if s.state == 'failed' then
      table.insert(failed, s.name)
    end
  end
  local parts = {}
  for _, st in ipairs(order) do
    if counts[st] then
      table.insert(parts, ('%d %s'):format(counts[st], st))
    end
  end
  local line = 'reconnected: ' .. table.concat(parts, ', ')
  if #failed > 0 then
    line = line .. ' (' .. table.concat(failed, ', ') .. '); :Switchboard servers shows why'
  end
  return line, #failed > 0
end

local function scratch(name, lines, ft)
  local buf
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):match(vim.pesc(name) .. '$') then
      buf = b
    end
  end
  if not buf then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].bufhidden = 'hide'
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = ft
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, nowait = true })
  return buf
end
M.scratch = scratch

local function one_line(text)
  return (tostring(text or ''):gsub('%s*\n%s*', ' '))
end

M.trust_choices = {
  { title = 'Trust', decision = 'trust' },
  { title = "Don't trust", decision = 'deny' },
}

--- Asks whether to trust the server `s` (a ServerStatus), showing the host's whole question
--- (ServerStatus.trustPrompt: what runs, what it reads), then sends switchboard.trust.
function M.ask_trust(s, cb)
  cb = cb or function() end
  local question = s.trustPrompt
  if type(question) ~= 'string' or question == '' then
    question = ("Trust MCP server '%s'?"):format(s.name)
  end
  vim.ui.select(M.trust_choices, {
    prompt = one_line(question),
    kind = 'switchboard_trust',
    format_item = function(c)
      return c.title
    end,
    switchboard = { message = question },
  }, function(choice)
    if not choice then
      return cb(nil)
    end
    M.trust(s.name, choice.decision, function(err, result)
      if err then
        notify(errmsg(err), vim.log.levels.WARN)
        return cb(err)
      end
      local c = sb().client()
      if c and type(result) == 'table' then
        sb()._set_servers(c.id, result)
      end
      if choice.decision == 'trust' then
        notify(("MCP server '%s' is trusted and starts now."):format(s.name))
      else
        notify(("MCP server '%s' is not trusted and stays stopped; :Switchboard trust %s asks again."):format(s.name, s.name))
      end
      cb(nil, choice.decision)
    end)
  end)
end

-- :Switchboard subcommands ----------------------------------------------------------------------

local sub = {}

-- :Switchboard servers: the list in a picker; picking one reconnects it.
function sub.servers()
  M.servers(function(err, list)
    if err then
      return notify(errmsg(err), vim.log.levels.ERROR)
    end
    if #list == 0 then
      return notify('no MCP servers configured')
    end
    vim.ui.select(list, {
      prompt = 'Switchboard servers (pick one to reconnect it, or to trust it)',
      kind = 'switchboard_servers',
      format_item = M.format_server,
    }, function(s)
      if s and s.state == 'untrusted' then
        M.ask_trust(s)
      elseif s and s.state == 'needs-auth' then
        sub.signin(s.name)
      elseif s then
        sub.reconnect(s.name)
      end
    end)
  end)
end

function sub.reconnect(server)
  if server == '' then
    server = nil
  end
  if not sb().client() then
    sb().start(vim.api.nvim_get_current_buf())
    return notify('host started')
  end
  notify('reconnecting ' .. (server or 'all servers') .. '...')
  M.reconnect(server, function(err, result)
    if err then
      return notify(errmsg(err), vim.log.levels.ERROR)
    end
    if result and result.name then
      result = { result }
    end
    local line, failed = M.reconnect_line(result, server)
    notify(line, failed and vim.log.levels.WARN or vim.log.levels.INFO)
  end)
end

--- Asks for a decision on one approval, then sends it.
function M.decide(a, cb)
  cb = cb or function() end
  vim.ui.select(approvals.choices, {
    prompt = 'Allow ' .. approvals.describe(a) .. '?',
    kind = 'switchboard_approval',
    format_item = function(c)
      return c.title
    end,
  }, function(choice)
    if not choice then
      return cb(nil, nil)
    end
    M.approve(a.id, choice.decision, function(err)
      if err then
        notify(errmsg(err), vim.log.levels.WARN)
      end
      cb(err, choice.decision)
    end)
  end)
end

-- one_of calls fn with the only item, or with the one picked from several (nothing if none is).
local function one_of(items, opts, fn)
  if #items == 1 then
    return fn(items[1])
  end
  vim.ui.select(items, opts, function(x)
    if x then
      fn(x)
    end
  end)
end

-- :Switchboard approve: pending approvals through vim.ui.select.
function sub.approve()
  M.approvals(function(err, list)
    local c = sb().client()
    if not err and type(list) == 'table' then
      approvals.sync(list, c and c.id)
    end
    local pending = approvals.list()
    if #pending == 0 then
      return notify('no approvals pending')
    end
    one_of(pending, {
      prompt = 'Pending approvals',
      kind = 'switchboard_pending',
      format_item = approvals.describe,
    }, M.decide)
  end)
end

-- :Switchboard elicit: questions of MCP servers still waiting (dismissed ones too); pick one to
-- ask it again now (answer, decline or cancel it), with the values entered before as defaults.
function sub.elicit()
  local elicitation = require('switchboard.elicitation')
  M.elicitations(function(err, list)
    local c = sb().client()
    if err then
      notify(errmsg(err), vim.log.levels.WARN)
    elseif type(list) == 'table' and c then
      elicitation.sync(list, c.id)
    end
    local waiting = elicitation.list()
    if #waiting == 0 then
      return notify('no questions from MCP servers pending')
    end
    one_of(waiting, {
      prompt = 'Questions of MCP servers (pick one to answer, decline or cancel it)',
      kind = elicitation.kind_pending,
      format_item = elicitation.describe,
    }, elicitation.ask)
  end)
end

local function pick_server(prompt, cb)
  M.servers(function(err, list)
    if err then
      return notify(errmsg(err), vim.log.levels.ERROR)
    end
    vim.ui.select(list, { prompt = prompt, kind = 'switchboard_servers', format_item = M.format_server }, function(s)
      if s then
        cb(s.name)
      end
    end)
  end)
end

-- :Switchboard allow [server]: pick a tool to allow (or disallow), or the whole server.
function sub.allow(server)
  if not server or server == '' then
    return pick_server('Allow tools of which server?', sub.allow)
  end
  local prefix = 'mcp__' .. server .. '__'
  M.tools(server, function(err, tools)
    if err then
      return notify(errmsg(err), vim.log.levels.ERROR)
    end
    M.allowlist_get(function(err2, al)
      if err2 then
        return notify(errmsg(err2), vim.log.levels.ERROR)
      end
      local current, whole = {}, false
      for _, e in ipairs(al.entries or {}) do
        if e == prefix .. '*' then
          whole = true
        elseif e:sub(1, #prefix) == prefix then
          current[e] = true
        end
      end
      local items = {
        { label = (whole and '[x] ' or '[ ] ') .. 'every tool of ' .. server .. ' (' .. prefix .. '*)', all = true },
      }
      for _, t in ipairs(tools or {}) do
        local on = whole or current[t.name] or false
        table.insert(items, { label = (on and '[x] ' or '[ ] ') .. t.name, tool = t.name, on = on })
      end
      table.insert(items, { label = 'revoke every grant under ' .. prefix, revoke = true })
      vim.ui.select(items, {
        prompt = 'Allowlist for ' .. server .. ' (pick to toggle)',
        kind = 'switchboard_allow',
        format_item = function(i)
          return i.label
        end,
      }, function(item)
        if not item then
          return
        end
        local entries
        if item.revoke then
          entries = {}
        elseif item.all then
          entries = whole and {} or { prefix .. '*' }
        else
          entries = {}
          for _, i in ipairs(items) do
            local on = i.on
            if i.tool == item.tool then
              on = not on
            end
            if i.tool and on then
              table.insert(entries, i.tool)
            end
          end
        end
        M.allowlist_set(prefix, entries, function(err3, res)
          if err3 then
            return notify(errmsg(err3), vim.log.levels.ERROR)
          end
          local n = 0
          for _, e in ipairs(res and res.entries or {}) do
            if e:sub(1, #prefix) == prefix then
              n = n + 1
            end
          end
          notify(('allowlist for %s: %s'):format(server, n == 0 and 'nothing allowed' or table.concat(entries, ', ')))
        end)
      end)
    end)
  end)
end

-- :Switchboard trust [server]: ask again whether to trust a workspace server (also one the user
-- said "Don't trust" to); without a name, pick among those not trusted.
function sub.trust(server)
  M.servers(function(err, list)
    if err then
      return notify(errmsg(err), vim.log.levels.ERROR)
    end
    if server and server ~= '' then
      for _, s in ipairs(list or {}) do
        if s.name == server then
          return M.ask_trust(s)
        end
      end
      return notify(("no MCP server named '%s'"):format(server), vim.log.levels.ERROR)
    end
    local untrusted = vim.tbl_filter(function(s)
      return s.state == 'untrusted'
    end, list or {})
    if #untrusted == 0 then
      return notify('every MCP server is trusted; :Switchboard trust NAME asks again for one')
    end
    one_of(untrusted, {
      prompt = 'Trust which MCP server of this workspace?',
      kind = 'switchboard_servers',
      format_item = M.format_server,
    }, M.ask_trust)
  end)
end

-- :Switchboard signin NAME: sign in to an http/sse MCP server (the browser opens, or the URL is
-- printed); :Switchboard signout NAME forgets its tokens.
function sub.signin(server)
  if not server or server == '' then
    return notify('usage: :Switchboard signin NAME', vim.log.levels.ERROR)
  end
  notify(("signing in to MCP server '%s': finish in the browser"):format(server))
  M.sign_in(server, function(err)
    if err then
      return notify(errmsg(err), vim.log.levels.ERROR)
    end
  end)
end

function sub.signout(server)
  if not server or server == '' then
    return notify('usage: :Switchboard signout NAME', vim.log.levels.ERROR)
  end
  M.sign_out(server, function(err)
    if err then
      return notify(errmsg(err), vim.log.levels.ERROR)
    end
    notify(("signed out of MCP server '%s'"):format(server))
  end)
end

function sub.chat(...)
  local prompt = table.concat({ ... }, ' ')
  local chat = require('switchboard.chat')
  chat.open()
  if prompt ~= '' then
    chat.send(prompt)
  end
end

-- :Switchboard cancel: the running chat turn, else the most recent long tool call (its progress).
function sub.cancel()
  local chat = require('switchboard.chat')
  local c = chat.get()
  if not (c and c.turn) and require('switchboard.progress').cancel() then
    return notify('cancelling ' .. require('switchboard.progress').text())
  end
  chat.cancel()
end

function sub.tools(server)
  if server == '' then
    server = nil
  end
  M.tools(server, function(err, tools)
    if err then
      return notify(errmsg(err), vim.log.levels.ERROR)
    end
    local lines = {}
    local toolform = require('switchboard.toolform')
    for _, t in ipairs(tools or {}) do
      local desc = toolform.clean(tostring(t.description or ''):gsub('\n.*', ''), 200)
      local marks = toolform.marks(t)
      table.insert(lines, ('%s%s  %s'):format(toolform.clean(t.name), marks ~= '' and '  ' .. marks or '', desc))
      -- Its parameters, from the input schema: name, type, required, description.
      vim.list_extend(lines, toolform.param_lines(t.inputSchema))
    end
    if #lines == 0 then
      lines = { 'no tools' }
    end
    -- The host's count (built-in tools included) once it warned, else these.
    local n = require('switchboard.notices').tools_count or #lines
    if n > 20 then
      table.insert(lines, 1, ('%d tools go to the model; 20 or fewer work best. Trim them per server with '
        .. '"enabledTools" / "disabledTools" in the MCP config, or disable servers you do not need.'):format(n))
      table.insert(lines, 2, '')
    end
    scratch('switchboard://tools', lines, 'switchboard-tools')
  end)
end

--- What a person reads of a callTool result: the host's summary for a denied, unrun or failed
--- call (its text is then the model's wording: "... Do not retry it unless the user asks.", raw
--- {"error": ...}), else the tool's text.
function M.result_message(name, res)
  local toolform = require('switchboard.toolform')
  if type(res.summary) == 'string' and res.summary ~= '' then
    return toolform.clean(res.summary), vim.log.levels.WARN
  end
  local text = tostring(res.text or ''):gsub('%c', function(c)
    return c == '\n' and c or ('\\x%02x'):format(c:byte())
  end)
  return toolform.clean(name) .. (res.isError and ' failed: ' or ': ') .. text,
    res.isError and vim.log.levels.WARN or vim.log.levels.INFO
end

local function call_with(name, args)
  M.call_tool(name, args, nil, function(err, res)
    if err then
      return notify(errmsg(err), vim.log.levels.ERROR)
    end
    notify(M.result_message(name, res))
    require('switchboard.views').note(res and res.view) -- a tool with an MCP App view
  end)
end

-- :Switchboard call [TOOL [JSON]]: without JSON, the arguments are asked field by field from the
-- tool's input schema (toolform.lua); without TOOL, a tool is picked first.
function sub.call(name, ...)
  local json = table.concat({ ... }, ' ')
  if name and name ~= '' and json ~= '' then
    local ok, v = pcall(compat.json_decode, json)
    if not ok then
      return notify('arguments are not JSON: ' .. tostring(v), vim.log.levels.ERROR)
    end
    return call_with(name, v)
  end
  local toolform = require('switchboard.toolform')
  M.tools(nil, function(err, tools)
    if err then
      return notify(errmsg(err), vim.log.levels.ERROR)
    end
    local function with(tool)
      toolform.ask(tool, function(args)
        if args == nil then
          return notify('call of ' .. toolform.clean(tool.name) .. ' cancelled: nothing was called')
        end
        call_with(tool.name, args)
      end)
    end
    for _, t in ipairs(tools or {}) do
      if t.name == name then
        return with(t)
      end
    end
    if name and name ~= '' then
      -- Not listed (its server is not running?): the host says why, in a sentence for people.
      return call_with(name, nil)
    end
    if #(tools or {}) == 0 then
      return notify('no MCP server offers a tool yet: :Switchboard servers')
    end
    vim.ui.select(tools, {
      prompt = 'Call which tool?',
      kind = 'switchboard_tool',
      format_item = function(t)
        return toolform.clean(t.name) .. '  ' .. toolform.clean(tostring(t.description or ''):gsub('\n.*', ''), 100)
      end,
    }, function(t)
      if t then
        vim.schedule(function()
          with(t)
        end)
      end
    end)
  end)
end

-- :Switchboard pins [SERVER] reviews changed tool definitions; :Switchboard pins accept SERVER [TOOL...].
function sub.pins(first, ...)
  local pins = require('switchboard.pins')
  if first == 'accept' then
    local server = select(1, ...)
    if not server or server == '' then
      return notify('usage: :Switchboard pins accept SERVER [TOOL...]', vim.log.levels.ERROR)
    end
    return pins.accept(server, { select(2, ...) })
  end
  pins.review(first ~= '' and first or nil)
end

function sub.log()
  vim.cmd('split ' .. vim.fn.fnameescape(compat.log_path()))
  vim.cmd('normal! G')
end

--- The model picker's items: the current model first.
function M.model_items(res)
  local items = {}
  for _, m in ipairs(type(res) == 'table' and res.models or {}) do
    if type(m) == 'table' and type(m.id) == 'string' then
      if m.id == res.current then
        table.insert(items, 1, m)
      else
        table.insert(items, m)
      end
    end
  end
  return items
end

function M.format_model(m, current)
  local notes = {}
  if m.id == current then
    table.insert(notes, 'current')
  end
  if type(m.displayName) == 'string' and m.displayName ~= '' and m.displayName ~= m.id then
    table.insert(notes, m.displayName)
  end
  return #notes > 0 and (m.id .. '  (' .. table.concat(notes, ', ') .. ')') or m.id
end

--- Makes id the agent's model: the plugin's provider option with model replaced (the host gets
--- workspace/didChangeConfiguration).
function M.use_model(id)
  local provider = vim.deepcopy(require('switchboard.config').options.provider or {})
  provider.model = id
  sb().update({ provider = provider })
  notify('the agent now uses ' .. id)
end

-- :Switchboard model [id]: pick the model from the provider's list (switchboard.models).
function sub.model(id)
  if id and id ~= '' then
    return M.use_model(id)
  end
  M.models(function(err, res)
    if err then
      return notify(errmsg(err), vim.log.levels.ERROR)
    end
    local items = M.model_items(res)
    if #items == 0 then
      return notify('the provider lists no models')
    end
    vim.ui.select(items, {
      prompt = 'Switchboard model' .. (res.current and res.current ~= '' and (' (now ' .. res.current .. ')') or ''),
      kind = 'switchboard_models',
      format_item = function(m)
        return M.format_model(m, res.current)
      end,
    }, function(m)
      if m then
        M.use_model(m.id)
      end
    end)
  end)
end

-- :Switchboard view [ID]: open a tool result's MCP App view in the browser (views.lua).
function sub.view(id)
  require('switchboard.views').command(id)
end

-- MCP resources and prompts (resources.lua).
function sub.resources(server)
  require('switchboard.resources').browse(server)
end
function sub.prompt(server, name)
  require('switchboard.resources').prompt(server, name)
end
function sub.attach()
  require('switchboard.resources').attach()
end

-- :Switchboard tasks [cancel ID]: tool calls that run as MCP tasks (tasks.lua).
function sub.tasks(first, id)
  require('switchboard.tasks').pick(first, id)
end

M.subcommands = sub
M.names = { 'servers', 'reconnect', 'approve', 'elicit', 'allow', 'trust', 'chat', 'cancel', 'tools', 'call', 'log', 'pins' }
vim.list_extend(M.names, { 'signin', 'signout', 'model', 'resources', 'prompt', 'attach', 'tasks', 'view' })

--- :Switchboard [sub [args]] (no sub = servers).
function M.run(args)
  local name = table.remove(args, 1) or 'servers'
  local f = sub[name]
  if not f then
    return notify(('unknown subcommand %q; try one of: %s'):format(name, table.concat(M.names, ', ')),
      vim.log.levels.ERROR)
  end
  f(unpack(args))
end

function M.server_names()
  local list = sb().servers()
  if (not list or #list == 0) and sb().client() then
    list = M.exec_sync(cmd.servers, nil, 500) or {}
  end
  local names = {}
  for _, s in ipairs(list or {}) do
    table.insert(names, s.name)
  end
  table.sort(names)
  return names
end

function M.complete(arglead, cmdline, _)
  local words = vim.split((cmdline:gsub('^%s*%S+%s*', '')), '%s+')
  local candidates
  if #words <= 1 then
    candidates = M.names
  elseif #words == 2 and vim.tbl_contains({ 'reconnect', 'allow', 'trust', 'tools', 'signin', 'signout', 'pins', 'resources', 'prompt' }, words[1]) then
    candidates = M.server_names()
  elseif #words == 3 and words[1] == 'prompt' then
    candidates = require('switchboard.resources').prompt_names(words[2])
  elseif #words == 2 and words[1] == 'call' then
    candidates = {}
    for _, t in ipairs(M.exec_sync(cmd.tools, nil, 500) or {}) do
      table.insert(candidates, t.name)
    end
  else
    return {}
  end
  return vim.tbl_filter(function(c)
    return c:sub(1, #arglead) == arglead
  end, candidates)
end

return M
