-- Host messages (window/showMessage) that Neovim's own handler would show badly. The >20 tools
-- warning arrives during a chat turn; shown as it is, it is a hit-enter prompt in the middle of the
-- user's typing, and again for each new tool count. Here: once per Neovim session, one line that
-- fits the command area (no prompt), and the full text in the chat transcript, with what to do.
local M = {}

M.tools_warned = false
M.tools_count = nil -- the count of the last warning (built-in tools included)

--- `line` cut to the command area's width (a longer echo would ask for Enter). `keep` (a suffix
--- of line, the thing to type) survives the cut.
function M.fit(line, keep)
  local room = math.max(20, (tonumber(vim.v.echospace) or vim.o.columns - 12) - 1)
  if #line <= room then
    return line
  end
  if keep and line:sub(-#keep) == keep and #keep + 8 < room then
    local head = line:sub(1, #line - #keep)
    return head:sub(1, room - #keep - 3) .. '...' .. keep
  end
  return line:sub(1, room - 3) .. '...'
end

--- Handles a window/showMessage from the host; true when it was handled here.
function M.show_message(params)
  local msg = type(params) == 'table' and params.message
  -- A sign-in page this Neovim cannot open (no vim.ui.open): the whole URL, never shortened.
  if type(msg) == 'string' and msg:match('^Switchboard: open this page to sign in: ') then
    vim.schedule(function()
      vim.notify(msg, vim.log.levels.INFO)
    end)
    return true
  end
  local n = type(msg) == 'string' and msg:match('^Switchboard sends (%d+) tools to the model')
  if not n then
    return false
  end
  M.tools_count = tonumber(n)
  if M.tools_warned then
    return true
  end
  M.tools_warned = true
  require('switchboard.chat').note(msg .. ' :Switchboard tools lists them.')
  local act = ': :Switchboard tools'
  local line = M.fit(('switchboard: %s tools go to the model (20 or fewer work best)%s'):format(n, act), act)
  vim.schedule(function()
    vim.notify(line, vim.log.levels.WARN)
  end)
  return true
end

return M
