-- Work-done progress of long tool calls ($/progress begin/report/end, titled "Switchboard: <tool>").
-- (The host's startup progress, titled "Switchboard", is left to Neovim's handler.)
-- Neovim's own $/progress handler still runs (vim.lsp.status() on 0.10+, LspProgressUpdate on
-- 0.7); we also keep what is running for the statusline and for :Switchboard cancel.
local compat = require('switchboard.compat')

local M = {}

local active = {} -- "client:token" -> { client_id, token, title, message, percentage, cancellable, seq }
local seq = 0

local function fire()
  require('switchboard')._fire('SwitchboardProgress')
end

--- The $/progress handler (Neovim's own runs first).
function M.handler(err, result, ctx, cfg)
  local default = vim.lsp.handlers['$/progress']
  if default then
    pcall(default, err, result, ctx, cfg)
  end
  if type(result) ~= 'table' or type(result.value) ~= 'table' or result.token == nil then
    return
  end
  local client_id = ctx and ctx.client_id
  local key = tostring(client_id) .. ':' .. tostring(result.token)
  local v = result.value
  if v.kind == 'begin' then
    -- Only tool calls ("Switchboard: <tool>"); the startup progress stays with Neovim's handler.
    if type(v.title) ~= 'string' or v.title:sub(1, 13) ~= 'Switchboard: ' then
      return
    end
    seq = seq + 1
    active[key] = {
      client_id = client_id,
      token = result.token,
      title = v.title,
      message = v.message,
      percentage = v.percentage,
      cancellable = v.cancellable,
      seq = seq,
    }
  elseif v.kind == 'report' and active[key] then
    if v.message ~= nil then
      active[key].message = v.message
    end
    if v.percentage ~= nil then
      active[key].percentage = v.percentage
    end
  elseif v.kind == 'end' and active[key] then
    active[key] = nil
  else
    return
  end
  fire()
end

--- The most recent progress still running, or nil.
function M.current()
  local best
  for _, p in pairs(active) do
    if not best or p.seq > best.seq then
      best = p
    end
  end
  return best
end

function M.count()
  return vim.tbl_count(active)
end

-- percent stands for '%' in the text: the statusline is a format wherever it is evaluated as one
-- (lualine and other components, %{%...%}, %!), and a '%' a server wrote there ("%{system(...)}",
-- "%#Error#", "%=") would be run or read as an item. The fullwidth sign reads the same and is
-- never an item; '%%' would show as two signs where the text is not evaluated (%{...}).
local percent = '\239\188\133' -- U+FF05, in UTF-8 (Lua 5.1 has no \u escape)

--- text with every '%' shown as percent.
local function inert(text)
  return (text:gsub('%%', percent))
end

--- "mcp__x__y 40% step 2 of 5" or a task's "mcp__x__y step 2 · 1m 05s" (the title without
--- "Switchboard: ").
function M.text(p)
  p = p or M.current()
  if not p then
    return ''
  end
  local parts = { inert((tostring(p.title or 'working'):gsub('^Switchboard: ', ''))) }
  if type(p.percentage) == 'number' then
    table.insert(parts, ('%d'):format(p.percentage) .. percent)
  end
  if type(p.message) == 'string' and p.message ~= '' then
    local m = inert(p.message:gsub('%s+', ' '))
    -- A task's line ends with how long it has run ("Analyzing... · 1m 05s"): only the status
    -- message before it is shortened, by characters (a byte cut could split a UTF-8 one).
    local head, tail = m:match('^(.*)( · %d[%dhms ]*)$')
    if not head then
      head, tail = m, ''
    end
    if vim.fn.strchars(head) > 30 then
      head = vim.fn.strcharpart(head, 0, 27) .. '...'
    end
    table.insert(parts, head .. tail)
  end
  return table.concat(parts, ' ')
end

--- Cancels the most recent cancellable call (window/workDoneProgress/cancel). True when sent.
function M.cancel()
  local p = M.current()
  local client = p and compat.get_client_by_id(p.client_id)
  if not p or not client or p.cancellable == false then
    return false
  end
  compat.notify(client, 'window/workDoneProgress/cancel', { token = p.token })
  return true
end

--- Forgets the progress of one client (it stopped).
function M.clear(client_id)
  for key, p in pairs(active) do
    if client_id == nil or p.client_id == client_id then
      active[key] = nil
    end
  end
end

return M
