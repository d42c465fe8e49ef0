-- Long calls (MCP tasks). A tool call that its server runs as a task shows its line (the task's
-- status message and how long it has run) as the call's progress, in the statusline like any long
-- call (progress.lua); :Switchboard cancel cancels it. :Switchboard tasks lists the running and
-- recent tasks (switchboard.tasks): picking a running one offers to cancel it
-- (switchboard.cancelTask, which sends the server tasks/cancel); picking one that ended after a
-- restart of the host shows its result in a scratch buffer, as does Show result on the host's
-- notice that a task ended (switchboard/showTaskResult). :Switchboard tasks cancel ID cancels one
-- by its id.
local protocol = require('switchboard.protocol')

local M = {}

local function commands()
  return require('switchboard.commands')
end

local function notify(msg, level)
  vim.notify('switchboard: ' .. msg, level or vim.log.levels.INFO)
end

local function clean(s, n)
  return require('switchboard.toolform').clean(tostring(s or ''), n or 120)
end

--- One picker line: "running  mcp__x__y  step 2 of 5  (agent, 2026-12-05T15:57:46Z)"; a result
--- that waits for the agent's next turn ends with "  [for the agent]".
function M.format(t)
  local msg = t.message ~= '' and ('  ' .. clean(t.message, 80)) or ''
  local line = ('%s  %s%s  (%s, %s)'):format(t.state, clean(t.tool), msg, clean(t.startedBy, 20), clean(t.started, 25))
  return t.forAgent and (line .. '  [for the agent]') or line
end

--- switchboard.tasks; cb(err, tasks).
function M.list(cb)
  commands().exec(protocol.cmd.tasks, nil, function(err, res)
    cb(err, type(res) == 'table' and res.tasks or {})
  end)
end

--- switchboard.cancelTask; cb(err).
function M.cancel(id, cb)
  cb = cb or function(err)
    if err then
      notify(commands().errmsg(err), vim.log.levels.ERROR)
    else
      notify('cancelling task ' .. id)
    end
  end
  commands().exec(protocol.cmd.cancel_task, { id = id }, function(err)
    cb(err)
  end)
end

--- Shows a task's result in a scratch buffer; returns the buffer. The result is the server's text,
--- escaped by the host (control, bidi and zero-width characters made visible).
function M.show(t)
  local buf = vim.api.nvim_create_buf(false, true)
  local how = clean(t.state, 20) .. (t.isError and ', an error result' or '')
  local lines = { ('# %s: task %s, %s'):format(clean(t.tool), clean(t.id, 20), how) }
  vim.list_extend(lines, vim.split(tostring(t.result or ''), '\n', { plain = true }))
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].modifiable = false
  vim.cmd('split')
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

--- :Switchboard tasks [cancel ID].
function M.pick(first, id)
  if first == 'cancel' then
    if not id or id == '' then
      return notify('usage: :Switchboard tasks cancel ID', vim.log.levels.ERROR)
    end
    return M.cancel(id)
  end
  M.list(function(err, tasks)
    if err then
      return notify(commands().errmsg(err), vim.log.levels.ERROR)
    end
    if #tasks == 0 then
      return notify('no tasks: no tool call has run as an MCP task')
    end
    vim.ui.select(tasks, {
      prompt = 'Switchboard tasks (pick a running one to cancel it, an ended one to see its result)',
      kind = 'switchboard_tasks',
      format_item = M.format,
    }, function(t)
      if not t then
        return
      end
      if t.state == 'running' and t.here then
        vim.schedule(function()
          vim.ui.select({ 'Cancel the task', 'Keep it running' }, {
            prompt = ('Cancel %s? The server is asked to stop it.'):format(clean(t.tool)),
            kind = 'switchboard_task_cancel',
          }, function(choice)
            if choice == 'Cancel the task' then
              M.cancel(t.id)
            end
          end)
        end)
      elseif t.state == 'running' then
        notify(('task %s is followed by another Switchboard; cancel it there'):format(t.id))
      elseif t.result and t.result ~= '' then
        vim.schedule(function()
          M.show(t)
        end)
      else
        notify(('task %s %s: %s'):format(t.id, t.state, clean(t.message)))
      end
    end)
  end)
end

return M
