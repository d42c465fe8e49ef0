-- The one queue of pending questions from the host, used for both kinds (approvals.lua: tool
-- calls at the confirm gate; elicitation.lua: questions of MCP servers), as the host has one
-- (host/question.go). Entries are keyed by client and id (a restarted host counts its ids from the
-- start again), listed oldest first, resolved once (a late "requested" for a question that already
-- ended is ignored), and may be dismissed but still pending; each keeps when it arrived, for
-- reminders.
local M = {}

local uv = vim.uv or vim.loop

local Queue = {}
Queue.__index = Queue

--- A new, empty queue.
function M.new()
  return setmetatable({ entries = {}, ended = {}, seq = 0 }, Queue)
end

local function key(client_id, id)
  return tostring(client_id) .. ':' .. tostring(id)
end
M.key = key

--- Adds `item` (pending question `id` of client `client_id`). Returns its entry
--- { id, item, client_id, key, seq, at, dismissed }, and whether it is new; nil when the question
--- already ended (its resolution arrived first).
function Queue:add(id, item, client_id)
  local k = key(client_id, id)
  if self.ended[k] then
    return nil, false
  end
  local p = self.entries[k]
  if p then
    return p, false
  end
  self.seq = self.seq + 1
  p = { id = id, item = item, client_id = client_id, key = k, seq = self.seq, at = uv.now() }
  self.entries[k] = p
  return p, true
end

--- Ends question `id` of client `client_id` once: records `how` as its resolution and returns the
--- entry that was pending (nil if none). A question that ended is never added again.
function Queue:resolve(id, client_id, how)
  local k = key(client_id, id)
  self.ended[k] = how or true
  local p = self.entries[k]
  self.entries[k] = nil
  return p
end

--- How question `id` ended (what resolve was given), or nil. Without `client_id`: of any client.
function Queue:resolution(id, client_id)
  if client_id ~= nil then
    return self.ended[key(client_id, id)]
  end
  local suffix = ':' .. tostring(id)
  for k, how in pairs(self.ended) do
    if k:sub(-#suffix) == suffix then
      return how
    end
  end
end

--- Every recorded resolution (what resolve was given), of one client when `client_id` is given.
function Queue:resolutions(client_id)
  local prefix = tostring(client_id) .. ':'
  local out = {}
  for k, how in pairs(self.ended) do
    if client_id == nil or k:sub(1, #prefix) == prefix then
      table.insert(out, how)
    end
  end
  return out
end

--- The entry of pending question `id`; without `client_id`, the oldest with that id.
function Queue:entry(id, client_id)
  if client_id ~= nil then
    return self.entries[key(client_id, id)]
  end
  for _, p in ipairs(self:list()) do
    if p.id == id then
      return p
    end
  end
end

--- The pending entries, oldest first (of one client when `client_id` is given).
function Queue:list(client_id)
  local out = {}
  for _, p in pairs(self.entries) do
    if client_id == nil or p.client_id == client_id then
      table.insert(out, p)
    end
  end
  table.sort(out, function(a, b)
    return a.seq < b.seq
  end)
  return out
end

--- The pending items, oldest first.
function Queue:items(client_id)
  return vim.tbl_map(function(p)
    return p.item
  end, self:list(client_id))
end

function Queue:count()
  return vim.tbl_count(self.entries)
end

--- Marks a pending entry dismissed (the person closed its prompt; it is still pending) or not.
--- Returns true when the mark changed.
function Queue:dismiss(p, yes)
  if not p or self.entries[p.key] ~= p or (not not p.dismissed) == (yes ~= false) then
    return false
  end
  p.dismissed = yes ~= false or nil
  return true
end

--- The pending entries that were dismissed, oldest first.
function Queue:dismissed()
  return vim.tbl_filter(function(p)
    return p.dismissed
  end, self:list())
end

--- Takes the host's list of one client's pending questions: `list` holds { id, item } pairs.
--- Adds those not known, drops the client's entries the host no longer has. Returns the dropped.
function Queue:sync(list, client_id)
  local seen = {}
  for _, x in ipairs(list) do
    seen[key(client_id, x.id)] = true
    self:add(x.id, x.item, client_id)
  end
  local dropped = {}
  for k, p in pairs(self.entries) do
    if p.client_id == client_id and not seen[k] then
      self.entries[k] = nil
      table.insert(dropped, p)
    end
  end
  return dropped
end

--- Forgets one client's questions and resolutions (it stopped), or every client's. Returns the
--- entries that were pending.
function Queue:clear(client_id)
  local dropped = {}
  for k, p in pairs(self.entries) do
    if client_id == nil or p.client_id == client_id then
      self.entries[k] = nil
      table.insert(dropped, p)
    end
  end
  local prefix = tostring(client_id) .. ':'
  for k in pairs(self.ended) do
    if client_id == nil or k:sub(1, #prefix) == prefix then
      self.ended[k] = nil
    end
  end
  return dropped
end

return M
