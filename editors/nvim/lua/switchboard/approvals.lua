-- Pending approvals, as the host announces them (switchboard/approvalRequested and
-- switchboard/approvalResolved), and the answer vocabulary of the confirm gate.
local M = {}

-- The showMessageRequest action titles the host sends, and the switchboard.approve decision each
-- one stands for (PROTOCOL.md section 4).
M.choices = {
  { title = 'Allow once', decision = 'once' },
  { title = 'Allow tool', decision = 'always' },
  { title = 'Allow server', decision = 'server' },
  { title = 'Deny', decision = 'deny' },
}

-- The pending approvals: the one queue of questions (pending.lua), as elicitation.lua keeps its.
local queue = require('switchboard.pending').new()
local listeners = {}

function M.on_change(fn)
  table.insert(listeners, fn)
end

local function emit(ev)
  for _, fn in ipairs(listeners) do
    local ok, err = pcall(fn, ev)
    if not ok then
      vim.schedule(function()
        vim.notify('switchboard: ' .. tostring(err), vim.log.levels.ERROR)
      end)
    end
  end
end

function M.decision_for_title(title)
  for _, c in ipairs(M.choices) do
    if c.title == title then
      return c.decision
    end
  end
end

--- A short, one-line preview of an approval: tool name and arguments.
function M.describe(a)
  local args = ''
  if type(a.arguments) == 'table' then
    local ok, s = pcall(vim.fn.json_encode, a.arguments)
    if ok then
      args = s
    end
  end
  if #args > 120 then
    args = args:sub(1, 117) .. '...'
  end
  return (a.tool or '?') .. (args ~= '' and ' ' .. args or '')
end

function M.requested(approval, client_id)
  if type(approval) ~= 'table' or not approval.id then
    return
  end
  if not queue:add(approval.id, approval, client_id) then
    return -- resolved before the request notification arrived
  end
  emit({ type = 'requested', approval = approval })
end

function M.resolved(params, client_id)
  if type(params) ~= 'table' or not params.id then
    return
  end
  local p = queue:entry(params.id, client_id)
  local a = p and p.item
  queue:resolve(params.id, client_id, { decision = params.decision, by = params.by, approval = a, client_id = client_id })
  emit({ type = 'resolved', id = params.id, decision = params.decision, by = params.by, approval = a, client_id = client_id })
end

--- Replaces the local view with the host's list (switchboard.approvals).
function M.sync(list, client_id)
  local pairs_ = {}
  for _, a in ipairs(list or {}) do
    table.insert(pairs_, { id = a.id, item = a })
  end
  queue:sync(pairs_, client_id)
  emit({ type = 'sync' })
end

--- Pending approvals, oldest first.
function M.list()
  return queue:items()
end

function M.count()
  return queue:count()
end

function M.get(id)
  local p = queue:entry(id)
  return p and p.item
end

--- When we heard of a pending approval (uv.now() milliseconds).
function M.received_at(id)
  local p = queue:entry(id)
  return p and p.at
end

function M.resolution(id)
  return queue:resolution(id)
end

--- Marks pending approval `a` (of client `client_id`) dismissed (its prompt was closed
--- unanswered); true when it was not.
function M.dismiss(a, client_id)
  return a ~= nil and queue:dismiss(queue:entry(a.id, client_id), true)
end

--- The pending approvals the user dismissed, oldest first.
function M.dismissed()
  return vim.tbl_map(function(p)
    return p.item
  end, queue:dismissed())
end

--- The id of the approval a window/showMessageRequest asks (its params' `switchboard.approval`),
--- or nil. Never guessed from the message: one server's tool name can contain another's.
function M.prompt_id(params)
  local about = type(params) == 'table' and params.switchboard or nil
  local id = type(about) == 'table' and about.approval or nil
  return type(id) == 'string' and id ~= '' and id or nil
end

--- The pending approval the prompt (showMessageRequest params) of client `client_id` asks, or
--- nil. Ids are the host's, and each host (one per root) counts its own: a1 of one is not a1 of
--- another.
function M.find_for_prompt(params, client_id)
  local id = M.prompt_id(params)
  local p = id and queue:entry(id, client_id)
  return p and p.item
end

--- Whether the approval the prompt of client `client_id` asks was resolved here.
function M.resolved_for_prompt(params, client_id)
  local id = M.prompt_id(params)
  return id ~= nil and queue:resolution(id, client_id) ~= nil
end

--- Forgets everything about one client (it stopped) or all clients.
function M.clear(client_id)
  queue:clear(client_id)
  emit({ type = 'clear' })
end

return M
