-- MCP Apps views (issue 31). A tool may come with an interactive view; Neovim cannot show HTML,
-- so the host serves the view on 127.0.0.1 and the browser shows it (switchboard.view.openInBrowser):
-- the view's buttons call tools through the same approval prompts as any call. Results that have
-- a view say so; :Switchboard view opens the latest (or a picked one).
local protocol = require('switchboard.protocol')

local M = {}

--- The views seen, newest last (at most 20): { id, tool, server, uri, error? }.
M.recent = {}

local function clean(s)
  return require('switchboard.toolform').clean(tostring(s or ''))
end

local function notify(msg, level)
  vim.notify('switchboard: ' .. msg, level or vim.log.levels.INFO)
end

--- Records a result's view (ToolResult.view, the chat result's view) and says it exists.
function M.note(view)
  if type(view) ~= 'table' or type(view.id) ~= 'string' then
    return
  end
  for _, v in ipairs(M.recent) do
    if v.id == view.id then
      return
    end
  end
  table.insert(M.recent, view)
  if #M.recent > 20 then
    table.remove(M.recent, 1)
  end
  if type(view.error) == 'string' and view.error ~= '' then
    notify(('%s has a view that cannot be shown: %s'):format(clean(view.tool), clean(view.error)), vim.log.levels.WARN)
    return
  end
  notify(('%s has a view: :Switchboard view opens it in your browser'):format(clean(view.tool)))
end

--- Opens a view in the browser: the host serves it and asks Neovim to open the address
--- (window/showDocument: vim.ui.open on 0.10+); when that fails the address is shown to copy.
function M.open(view, cb)
  cb = cb or function() end
  require('switchboard.commands').exec(protocol.cmd.view_open_in_browser, { id = view.id }, function(err, res)
    if err then
      notify(require('switchboard.commands').errmsg(err), vim.log.levels.ERROR)
      return cb(err)
    end
    if res and res.shown then
      notify(('opened the view of %s in your browser; its tool calls ask you here'):format(clean(view.tool)))
    else
      notify(('open this address in your browser (it works once): %s'):format(clean(res and res.url)))
    end
    cb(nil, res)
  end)
end

--- :Switchboard view [ID]: the latest view, a given one, or a pick among the recent ones.
function M.command(id)
  if #M.recent == 0 then
    return notify('no tool result with a view yet')
  end
  if id and id ~= '' then
    for _, v in ipairs(M.recent) do
      if v.id == id then
        return M.open(v)
      end
    end
    return notify(('no view %q'):format(clean(id)), vim.log.levels.WARN)
  end
  if #M.recent == 1 then
    return M.open(M.recent[1])
  end
  local items = {}
  for i = #M.recent, 1, -1 do
    table.insert(items, M.recent[i])
  end
  vim.ui.select(items, {
    prompt = 'Open which view in the browser?',
    kind = 'switchboard_view',
    format_item = function(v)
      return clean(v.tool) .. '  ' .. clean(v.uri)
    end,
  }, function(v)
    if v then
      M.open(v)
    end
  end)
end

return M
