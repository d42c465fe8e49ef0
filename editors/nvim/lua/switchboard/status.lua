-- Statusline component: servers ready / failed, pending approvals and questions of MCP servers,
-- and the progress of a long tool call.
--   vim.o.statusline = "%f %= %{v:lua.require'switchboard'.statusline()}"
-- (Keep the require'...' form: with require("...") Neovim 0.7 converts the whole module table to
-- a Vim value first, which fails with E5100.) It updates on the User
-- autocmds SwitchboardServers, SwitchboardApproval, SwitchboardElicitation and SwitchboardProgress.
local M = {}

--- Counts: { running, ready, failed, starting, untrusted, needs_auth, blocked, total, pending
--- (approvals), questions }.
function M.data()
  local sb = require('switchboard')
  local client = sb.client()
  local d = {
    running = client ~= nil,
    ready = 0,
    failed = 0,
    starting = 0,
    untrusted = 0,
    needs_auth = 0,
    blocked = 0,
    total = 0,
    pending = 0,
    questions = 0,
  }
  if not client then
    return d
  end
  local key = { ready = 'ready', failed = 'failed', starting = 'starting', untrusted = 'untrusted', ['needs-auth'] = 'needs_auth', blocked = 'blocked' }
  for _, s in ipairs(sb.servers()) do
    d.total = d.total + 1
    local k = key[s.state]
    if k then
      d[k] = d[k] + 1
    end
  end
  d.pending = require('switchboard.approvals').count()
  d.questions = require('switchboard.elicitation').count()
  d.progress = require('switchboard.progress').text()
  return d
end

--- "SB 2/3" plus " 1 failed", " 1 untrusted", " 1 needs sign-in", " 1 blocked", " 1 approval"
--- and " 1 question" when there are any (why fewer are ready than there are: the VS Code status
--- bar's words); "" when the host is not running.
function M.statusline()
  local ok, d = pcall(M.data)
  if not ok or not d.running then
    return ''
  end
  local parts = { ('SB %d/%d'):format(d.ready, d.total) }
  -- Each count with its words for one and for more, in the status bar's order.
  for _, c in ipairs({
    { d.failed, 'failed', 'failed' },
    { d.untrusted, 'untrusted', 'untrusted' },
    { d.needs_auth, 'needs sign-in', 'need sign-in' },
    { d.blocked, 'blocked', 'blocked' },
    { d.pending, 'approval', 'approvals' },
    { d.questions, 'question', 'questions' },
  }) do
    if c[1] > 0 then
      table.insert(parts, ('%d %s'):format(c[1], c[1] == 1 and c[2] or c[3]))
    end
  end
  if d.progress ~= '' then
    table.insert(parts, d.progress)
  end
  return table.concat(parts, ' ')
end

return M
