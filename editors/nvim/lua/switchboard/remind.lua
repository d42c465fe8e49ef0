-- Approvals the user dismissed (Esc in the picker): the host keeps them pending until its timeout
-- (approvalTimeoutSeconds, 120 s by default), then denies the call. We say once how to answer,
-- then remind every `remind_seconds` with one line in the command area, only in Normal mode (never
-- while the user types, and never a hit-enter prompt).
local compat = require('switchboard.compat')
local approvals = require('switchboard.approvals')

local M = {}

local timer -- the dismissed mark lives in the queue (approvals.dismiss)

--- Writes the reminder (replaceable, for tests). Not kept in :messages.
function M.echo(chunks)
  vim.api.nvim_echo(chunks, false, {})
end

local function options()
  return require('switchboard.config').options
end

--- Seconds until the host denies `a` (from when we heard of it), or nil.
function M.seconds_left(a)
  local at = approvals.received_at(a.id)
  if not at then
    return nil
  end
  local timeout = options().approvalTimeoutSeconds or 120
  return math.max(0, math.floor(timeout - (compat.uv.now() - at) / 1000 + 0.5))
end

local function left_text(a)
  local s = M.seconds_left(a)
  return s and (' (denied in %d s)'):format(s) or ''
end

--- The pending approvals the user dismissed, oldest first.
function M.list()
  return approvals.dismissed()
end

--- The reminder line, or nil when nothing dismissed is pending. `room`: at most this many
--- characters (the tool name is shortened first, so the command to type always shows).
function M.line(room)
  local list = M.list()
  if #list == 0 then
    return nil
  end
  local a = list[1]
  local what = a.tool or '?'
  local more = #list > 1 and (' and %d more'):format(#list - 1) or ''
  local tail = ('%s waiting for approval%s: :Switchboard approve'):format(more, left_text(a))
  if room and #tail + 11 > room then
    tail = more .. ' waits: :Switchboard approve'
  end
  if room and #what + #tail > room then
    local keep = math.max(8, room - #tail - 3)
    what = what:sub(1, keep) .. '...'
  end
  return what .. tail
end

function M.stop()
  if timer then
    timer:stop()
    timer:close()
    timer = nil
  end
end

--- One reminder, when the user is in Normal mode and something dismissed is pending.
function M.tick(mode)
  local line = M.line()
  if not line then
    return M.stop()
  end
  mode = mode or vim.api.nvim_get_mode().mode
  if mode ~= 'n' then
    return
  end
  local room = math.max(20, (tonumber(vim.v.echospace) or vim.o.columns - 12) - 1)
  line = M.line(room)
  if #line > room then
    line = line:sub(1, room - 3) .. '...'
  end
  M.echo({ { line, 'WarningMsg' } })
end

local function start_timer()
  local every = tonumber(options().remind_seconds) or 0
  if timer or every <= 0 then
    return
  end
  local ms = math.max(10, math.floor(every * 1000))
  timer = compat.uv.new_timer()
  timer:start(ms, ms, vim.schedule_wrap(function()
    M.tick()
  end))
end

local function mark(a, client_id)
  if not approvals.dismiss(a, client_id) then
    return
  end
  if options().notify_pending then
    vim.notify(
      ('switchboard: %s is waiting for your approval%s. Answer with :Switchboard approve or a code action.'):format(
        a.tool or 'a tool call', left_text(a)),
      vim.log.levels.WARN
    )
  end
  start_timer()
end

--- The approval prompt (showMessageRequest `params`) was dismissed (or could not be shown): tell
--- the user once, then keep reminding while it is pending.
function M.dismissed(params, client_id)
  local a = approvals.find_for_prompt(params, client_id)
  if a or not approvals.prompt_id(params) then
    return mark(a, client_id)
  end
  local client = client_id and require('switchboard.compat').get_client_by_id(client_id) or nil
  if client_id and not client then
    return
  end
  require('switchboard.commands').approvals(function(err, list)
    if not err and type(list) == 'table' then
      approvals.sync(list, client_id)
    end
    mark(approvals.find_for_prompt(params, client_id), client_id)
  end, client)
end

approvals.on_change(function()
  if #approvals.dismissed() == 0 then
    M.stop()
  end
end)

return M
