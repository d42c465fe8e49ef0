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

local pending = {} -- id -> { approval = Approval, client_id = n, seq = n }
local resolved = {} -- id -> { decision, by, client_id } (recent, for the chat view)
local seq = 0
local listeners = {}
local uv = vim.uv or vim.loop

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
  local r = resolved[approval.id]
  if r and r.client_id == client_id then
    return -- resolved before the request notification arrived
  end
  resolved[approval.id] = nil -- a restarted host numbers its approvals from a1 again
  if not pending[approval.id] then
    seq = seq + 1
    pending[approval.id] = { approval = approval, client_id = client_id, seq = seq, at = uv.now() }
  end
  emit({ type = 'requested', approval = approval })
end

function M.resolved(params, client_id)
  if type(params) ~= 'table' or not params.id then
    return
  end
  local p = pending[params.id]
  pending[params.id] = nil
  resolved[params.id] =
    { decision = params.decision, by = params.by, approval = p and p.approval, client_id = client_id }
  emit({ type = 'resolved', id = params.id, decision = params.decision, by = params.by, approval = p and p.approval })
end

--- Replaces the local view with the host's list (switchboard.approvals).
function M.sync(list, client_id)
  local seen = {}
  for _, a in ipairs(list or {}) do
    seen[a.id] = true
    if not pending[a.id] then
      seq = seq + 1
      pending[a.id] = { approval = a, client_id = client_id, seq = seq, at = uv.now() }
    end
  end
  for id, p in pairs(pending) do
    if p.client_id == client_id and not seen[id] then
      pending[id] = nil
    end
  end
  emit({ type = 'sync' })
end

--- Pending approvals, oldest first.
function M.list()
  local out = {}
  for _, p in pairs(pending) do
    table.insert(out, p)
  end
  table.sort(out, function(a, b)
    return a.seq < b.seq
  end)
  local approvals = {}
  for _, p in ipairs(out) do
    table.insert(approvals, p.approval)
  end
  return approvals
end

function M.count()
  local n = 0
  for _ in pairs(pending) do
    n = n + 1
  end
  return n
end

function M.get(id)
  return pending[id] and pending[id].approval
end

--- When we heard of a pending approval (uv.now() milliseconds).
function M.received_at(id)
  return pending[id] and pending[id].at
end

function M.resolution(id)
  return resolved[id]
end

--- The oldest pending approval whose tool the prompt message names.
function M.find_by_message(message)
  for _, a in ipairs(M.list()) do
    if a.tool and message and message:find(a.tool, 1, true) then
      return a
    end
  end
end

--- Forgets everything about one client (it stopped) or all clients.
function M.clear(client_id)
  for id, p in pairs(pending) do
    if client_id == nil or p.client_id == client_id then
      pending[id] = nil
    end
  end
  for id, r in pairs(resolved) do
    if client_id == nil or r.client_id == client_id then
      resolved[id] = nil
    end
  end
  emit({ type = 'clear' })
end

return M
