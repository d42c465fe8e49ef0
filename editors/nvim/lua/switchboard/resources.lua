-- MCP resources and prompts (:Switchboard resources [server], :Switchboard prompt [server] [name],
-- :Switchboard attach). A resource opens read-only in a scratch buffer named after it
-- (switchboard-mcp://SERVER/URI), updated while open when the server can tell (subscribe); attach
-- adds it to the next chat message. A prompt's arguments are asked with the server's completion,
-- then the prompt is sent as a chat turn.
local protocol = require('switchboard.protocol')
local cmd = protocol.cmd

local M = {}

-- Attachments for the next chat message: { server, uri } in the order attached.
M.pending = {}

local scheme = 'switchboard-mcp://'

local function commands()
  return require('switchboard.commands')
end

local function notify(msg, level)
  vim.notify('switchboard: ' .. msg, level or vim.log.levels.INFO)
end

local function fail(err)
  notify(commands().errmsg(err), vim.log.levels.ERROR)
end

--- The buffer name of a resource.
function M.bufname(server, uri)
  return scheme .. server .. '/' .. uri
end

local function find_buf(name)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(b) and vim.api.nvim_buf_get_name(b) == name then
      return b
    end
  end
end

-- The lines of a ReadResourceResult.
local function content_lines(res)
  local lines = {}
  for _, c in ipairs(res.contents or {}) do
    if c.blob and c.blob ~= '' then
      table.insert(lines, ('[binary content %s, %d bytes of base64]'):format(c.mimeType or '', c.bytes or 0))
    else
      vim.list_extend(lines, vim.split((tostring(c.text or ''):gsub('\n$', '')), '\n', { plain = true }))
    end
  end
  return lines
end

local function fill(buf, res)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, content_lines(res))
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

--- Reads a resource into its read-only buffer (subscribing to updates) and shows it. cb(buf).
function M.open(server, uri, cb)
  commands().exec(cmd.read_resource, { server = server, uri = uri, subscribe = true }, function(err, res)
    if err then
      return fail(err)
    end
    server = res.server or server
    local name = M.bufname(server, uri)
    local buf = find_buf(name)
    if not buf then
      buf = vim.api.nvim_create_buf(true, true)
      vim.api.nvim_buf_set_name(buf, name)
      vim.bo[buf].buftype = 'nofile'
      vim.bo[buf].bufhidden = 'wipe'
      vim.bo[buf].swapfile = false
      vim.b[buf].switchboard_resource = { server = server, uri = uri }
      vim.api.nvim_create_autocmd('BufWipeout', {
        buffer = buf,
        once = true,
        callback = function()
          commands().exec(cmd.unsubscribe, { server = server, uri = uri })
        end,
      })
      vim.keymap.set('n', 'ga', function()
        M.attach(buf)
      end, { buffer = buf, desc = 'switchboard: attach this resource to the chat' })
    end
    fill(buf, res)
    vim.bo[buf].readonly = true
    vim.api.nvim_set_current_buf(buf)
    if cb then
      cb(buf)
    end
  end)
end

--- switchboard/resourcesChanged: re-reads an open resource the server updated.
function M.on_changed(params)
  if type(params) ~= 'table' or params.kind ~= 'resourceUpdated' then
    return
  end
  local buf = find_buf(M.bufname(params.server, params.uri or ''))
  if not buf then
    return
  end
  commands().exec(cmd.read_resource, { server = params.server, uri = params.uri }, function(err, res)
    if not err and vim.api.nvim_buf_is_valid(buf) then
      fill(buf, res)
    end
  end)
end

--- Attaches the resource of buf (default: current) to the next chat message.
function M.attach(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local r = vim.b[buf].switchboard_resource
  if not r then
    return notify('this buffer is not an MCP resource (open one with :Switchboard resources)', vim.log.levels.WARN)
  end
  for _, p in ipairs(M.pending) do
    if p.server == r.server and p.uri == r.uri then
      return notify(r.uri .. ' is already attached')
    end
  end
  table.insert(M.pending, { server = r.server, uri = r.uri })
  notify(('attached %s to the next chat message (%d attached)'):format(r.uri, #M.pending))
end

--- Takes the pending attachments (they go with one message).
function M.take()
  local p = M.pending
  M.pending = {}
  return p
end

-- Template variables of an RFC 6570 template ({name}, {+name}, {name*}, {a,b}).
local function variables(template)
  local out = {}
  for expr in template:gmatch('{([^}]*)}') do
    for v in (expr:gsub('^[+#./;?&]', '')):gmatch('[^,]+') do
      table.insert(out, (v:gsub('[*]$', ''):gsub(':%d+$', '')))
    end
  end
  return out
end
M.variables = variables

local function expand(template, values)
  return (template:gsub('{([^}]*)}', function(expr)
    local parts = {}
    for v in (expr:gsub('^[+#./;?&]', '')):gmatch('[^,]+') do
      table.insert(parts, values[(v:gsub('[*]$', ''):gsub(':%d+$', ''))] or '')
    end
    return table.concat(parts, ',')
  end))
end

-- Asks the values of names in turn, each with the server's completion (ref: { prompt = name } or
-- { template = uriTemplate }); required[name] says which may not be left empty. cb(values) or
-- nothing when cancelled.
local function ask_values(server, ref, names, required, cb)
  local values = {}
  local i = 0
  local function next_one()
    i = i + 1
    local name = names[i]
    if not name then
      return cb(values)
    end
    local function got(v)
      if v == nil then
        return -- cancelled
      end
      if v == '' and required[name] then
        notify(name .. ' is required', vim.log.levels.WARN)
        return
      end
      if v ~= '' then
        values[name] = v
      end
      next_one()
    end
    local arg = { server = server, prompt = ref.prompt, template = ref.template, argument = name, value = '' }
    if next(values) then
      arg.context = values
    end
    commands().exec(cmd.complete, arg, function(err, res)
      local choices = (not err and res and res.values) or {}
      if #choices == 0 then
        return vim.ui.input({ prompt = name .. ': ' }, got)
      end
      local items = vim.list_extend({}, choices)
      table.insert(items, '(type a value)')
      vim.ui.select(items, { prompt = name, kind = 'switchboard_complete' }, function(v)
        if v == '(type a value)' then
          return vim.ui.input({ prompt = name .. ': ' }, got)
        end
        got(v)
      end)
    end)
  end
  next_one()
end

local function format_entry(e)
  local desc = tostring(e.description or ''):gsub('\n.*', '')
  if e.uriTemplate then
    return ('%s: %s  %s (template)%s'):format(e.server, e.name, e.uriTemplate, desc ~= '' and ('  ' .. desc) or '')
  end
  return ('%s: %s  %s%s'):format(e.server, e.name, e.uri, desc ~= '' and ('  ' .. desc) or '')
end

--- :Switchboard resources [server]: pick a resource or template (its variables asked), open it.
function M.browse(server)
  if server == '' then
    server = nil
  end
  commands().exec(cmd.resources, server and { server = server } or nil, function(err, res)
    if err then
      return fail(err)
    end
    local items = vim.list_extend(vim.list_extend({}, res.resources or {}), res.templates or {})
    if #items == 0 then
      return notify('no MCP resources' .. (server and (' on ' .. server) or ''))
    end
    vim.ui.select(items, { prompt = 'MCP resources', kind = 'switchboard_resources', format_item = format_entry },
      function(e)
        if not e then
          return
        end
        if not e.uriTemplate then
          return M.open(e.server, e.uri)
        end
        ask_values(e.server, { template = e.uriTemplate }, variables(e.uriTemplate), {}, function(values)
          M.open(e.server, expand(e.uriTemplate, values))
        end)
      end)
  end)
end

--- Runs prompt p (a wire Prompt) as a chat turn, its arguments asked first.
function M.run_prompt(p)
  local names, required = {}, {}
  for _, a in ipairs(p.arguments or {}) do
    table.insert(names, a.name)
    required[a.name] = a.required
  end
  ask_values(p.server, { prompt = p.name }, names, required, function(values)
    local chat = require('switchboard.chat')
    chat.open()
    chat.send(('/%s:%s %s'):format(p.server, p.name, vim.inspect(values, { newline = ' ', indent = '' })), nil,
      { serverPrompt = { server = p.server, name = p.name, arguments = next(values) and values or vim.empty_dict() } })
  end)
end

--- :Switchboard prompt [server] [name]
function M.prompt(server, name)
  if server == '' then
    server = nil
  end
  commands().exec(cmd.prompts, server and { server = server } or nil, function(err, list)
    if err then
      return fail(err)
    end
    list = list or {}
    if name and name ~= '' then
      list = vim.tbl_filter(function(p)
        return p.name == name
      end, list)
      if #list == 0 then
        return notify(('no prompt %s%s'):format(name, server and (' on ' .. server) or ''), vim.log.levels.ERROR)
      end
      if #list == 1 then
        return M.run_prompt(list[1])
      end
    end
    if #list == 0 then
      return notify('no MCP prompts' .. (server and (' on ' .. server) or ''))
    end
    vim.ui.select(list, {
      prompt = 'MCP prompts',
      kind = 'switchboard_prompts',
      format_item = function(p)
        local desc = tostring(p.description or ''):gsub('\n.*', '')
        return ('%s: %s%s'):format(p.server, p.name, desc ~= '' and ('  ' .. desc) or '')
      end,
    }, function(p)
      if p then
        M.run_prompt(p)
      end
    end)
  end)
end

--- Names for :Switchboard prompt completion (synchronous).
function M.prompt_names(server)
  local list = commands().exec_sync(cmd.prompts, server and { server = server } or nil, 1000) or {}
  local names = {}
  for _, p in ipairs(list) do
    table.insert(names, p.name)
  end
  table.sort(names)
  return names
end

return M
