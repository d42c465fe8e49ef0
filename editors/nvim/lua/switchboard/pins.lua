-- Tool definitions pinned (issue 13): switchboard/pinsChanged becomes a notice, and
-- :Switchboard pins [SERVER] shows what changed in a scratch buffer (filetype diff: "- " is the
-- definition you approved, "+ " the one the server sends now). In that buffer `a` accepts every
-- change of the server shown and `q` closes it; :Switchboard pins accept SERVER [TOOL...] accepts
-- some. The plugin declares capabilities.experimental.switchboard.pinReview, so the host does not
-- also ask with window/showMessageRequest.
local protocol = require('switchboard.protocol')

local M = {}

local function commands()
  return require('switchboard.commands')
end

local function notify(msg, level)
  vim.notify('switchboard: ' .. msg, level or vim.log.levels.INFO)
end

--- switchboard/pinsChanged.
function M.changed(params)
  if type(params) ~= 'table' or type(params.server) ~= 'string' then
    return
  end
  notify(('%s Review: :Switchboard pins %s'):format(params.message or '', params.server), vim.log.levels.WARN)
end

--- The review's lines for a switchboard.pins result.
function M.lines(res)
  local lines = {}
  for _, s in ipairs(res.servers or {}) do
    table.insert(lines, ('# MCP server %s (a: accept all of it, q: close)'):format(s.server))
    for _, kind in ipairs({ 'changed', 'new', 'removed' }) do
      for _, c in ipairs(s[kind] or {}) do
        table.insert(lines, ('## %s (%s)'):format(c.tool, kind))
        for _, l in ipairs(vim.split(c.diff or '', '\n', { plain = true })) do
          if l ~= '' then
            table.insert(lines, l)
          end
        end
      end
    end
  end
  if #lines == 0 then
    lines = { '# Every tool matches the definition you approved.' }
  end
  return lines
end

--- Accepts tools of server (nil = every change of it); cb(err, result).
function M.accept(server, tools, cb)
  local arg = { server = server }
  if tools and #tools > 0 then
    arg.tools = tools
  end
  commands().exec(protocol.cmd.pins_accept, arg, function(err, res)
    if err then
      notify(commands().errmsg(err), vim.log.levels.ERROR)
    else
      notify(('accepted the tool definitions of %s'):format(server))
    end
    if cb then
      cb(err, res)
    end
  end)
end

--- Shows the review of server (nil = every server) in a scratch buffer; returns nothing, cb(buf).
function M.review(server, cb)
  commands().exec(protocol.cmd.pins, server and { server = server } or nil, function(err, res)
    if err then
      return notify(commands().errmsg(err), vim.log.levels.ERROR)
    end
    vim.schedule(function()
      if res.problem then
        notify(('the pin file %s has an error: %s (fix or remove it)'):format(res.file, res.problem), vim.log.levels.ERROR)
      end
      local name = 'switchboard://pins' .. (server and ('/' .. server) or '')
      local buf = commands().scratch(name, M.lines(res), 'diff')
      local servers = {}
      for _, s in ipairs(res.servers or {}) do
        table.insert(servers, s.server)
      end
      vim.keymap.set('n', 'a', function()
        for _, s in ipairs(servers) do
          M.accept(s, nil, function()
            vim.schedule(function()
              M.review(server)
            end)
          end)
        end
      end, { buffer = buf, nowait = true, desc = 'switchboard: accept every change shown' })
      if cb then
        cb(buf)
      end
    end)
  end)
end

return M
