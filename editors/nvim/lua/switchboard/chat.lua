-- The chat buffer: the transcript of one conversation, fed by switchboard/event notifications
-- (text deltas, tool calls with their approval state, results), with a prompt area at the bottom.
--   <CR> (normal mode) sends the prompt area; <C-c> cancels the running turn; q closes the window.
local approvals = require('switchboard.approvals')

local M = {}
local modname = ... -- for 'foldexpr' (v:lua.require'<this module>')

local ns = vim.api.nvim_create_namespace('switchboard_chat')
local MARKER = '### You  (<CR> send, <C-c> cancel, q close)'

---@class SwitchboardChat
---@field buf integer
---@field conversation string|nil
---@field turn string|nil
---@field waiting boolean     a prompt was sent and its turn id is not known yet
---@field early table[]       events that arrived before the turn id
---@field marker integer      extmark id of the prompt marker line
---@field tools table<string, {mark:integer, name:string, args:string, approval_text:string|nil, result_text:string|nil, approval:string|nil}>
---@field in_text boolean     the last transcript line is assistant text being streamed
M.chats = {}
M.current = nil -- buffer number of the most recently used chat

local function chat_of(buf)
  buf = buf or M.current
  local c = buf and M.chats[buf]
  if c and vim.api.nvim_buf_is_valid(c.buf) then
    return c
  end
end

local function marker_row(c)
  local pos = vim.api.nvim_buf_get_extmark_by_id(c.buf, ns, c.marker, {})
  return pos[1]
end

local function with_modifiable(buf, fn)
  local was = vim.bo[buf].modifiable
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn)
  vim.bo[buf].modifiable = was
  if not ok then
    error(err)
  end
end

-- Appends transcript lines just above the prompt marker. Returns the row of the first one.
local function append(c, lines)
  local row = marker_row(c)
  with_modifiable(c.buf, function()
    vim.api.nvim_buf_set_lines(c.buf, row, row, false, lines)
  end)
  c.in_text = false
  return row
end

-- Replaces the text of one line in place (nvim_buf_set_text keeps the extmarks on that line where
-- they are; replacing the line with nvim_buf_set_lines would move them).
local function set_line(c, row, text)
  local old = vim.api.nvim_buf_get_lines(c.buf, row, row + 1, false)[1] or ''
  with_modifiable(c.buf, function()
    vim.api.nvim_buf_set_text(c.buf, row, 0, row, #old, { text })
  end)
end

local function follow(c)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == c.buf and win ~= vim.api.nvim_get_current_win() then
      pcall(vim.api.nvim_win_set_cursor, win, { vim.api.nvim_buf_line_count(c.buf), 0 })
    end
  end
end

local function text_delta(c, text)
  if text == nil or text == '' then
    return
  end
  local pieces = vim.split(text, '\n', { plain = true })
  local row = marker_row(c)
  with_modifiable(c.buf, function()
    if c.in_text and row > 0 then
      local last = vim.api.nvim_buf_get_lines(c.buf, row - 1, row, false)[1] or ''
      vim.api.nvim_buf_set_text(c.buf, row - 1, #last, row - 1, #last, { pieces[1] })
      table.remove(pieces, 1)
    end
    if #pieces > 0 then
      vim.api.nvim_buf_set_lines(c.buf, row, row, false, pieces)
    end
  end)
  c.in_text = true
end

local function short_json(v, max)
  if v == nil or v == vim.NIL then
    return ''
  end
  local s = type(v) == 'string' and v or (pcall(vim.fn.json_encode, v) and vim.fn.json_encode(v) or '')
  s = s:gsub('\n', ' ')
  max = max or 100
  if #s > max then
    s = s:sub(1, max - 3) .. '...'
  end
  return s
end

local function tool_line(t)
  local status = t.approval_text or 'requested'
  if t.result_text then
    status = status .. ', ' .. t.result_text
  end
  return ('  [tool] %s %s  -- %s'):format(t.name, t.args, status)
end

local decision_words = {
  once = 'allowed once',
  always = 'allowed (tool added to the allowlist)',
  server = 'allowed (server added to the allowlist)',
  deny = 'denied',
}

local function render_tool(c, t)
  local pos = vim.api.nvim_buf_get_extmark_by_id(c.buf, ns, t.mark, {})
  if pos[1] then
    set_line(c, pos[1], tool_line(t))
  end
end

-- The approval that belongs to a tool call of this chat's turn, if one is pending.
local function attach_pending_approval(c, t)
  for _, a in ipairs(approvals.list()) do
    if a.tool == t.name and (a.turn == nil or a.turn == c.turn) and not c.approval_of[a.id] then
      c.approval_of[a.id] = t.id
      t.approval = a.id
      t.approval_text = 'awaiting approval (:Switchboard approve)'
      return
    end
  end
end

local function tool_call(c, tc)
  if type(tc) ~= 'table' then
    return
  end
  local id = tc.id or tostring(#vim.tbl_keys(c.tools) + 1)
  local t = c.tools[id]
  if not t then
    local row = append(c, { '' })
    t = { id = id, name = tc.name or '?', args = short_json(tc.arguments) }
    t.mark = vim.api.nvim_buf_set_extmark(c.buf, ns, row, 0, {})
    c.tools[id] = t
    attach_pending_approval(c, t)
  end
  local state = tc.approval or tc.state
  if state == 'pending' then
    if not t.approval then
      t.approval_text = 'pending'
    end
  elseif tc.decidedBy == 'repeat' then
    -- A repeat of a denied or twice-failed call of this turn: neither asked nor run.
    local why = type(tc.reason) == 'string' and tc.reason ~= '' and tc.reason
      or 'it repeats a call of this turn that was denied or failed twice.'
    t.approval_text = 'not run: ' .. why:gsub('[%c]', ' ')
    t.denied = true
  elseif tc.decidedBy == 'unknown' or tc.decidedBy == 'invalid' then
    -- No such tool (its server is not running?) or bad arguments: the result's summary says why.
    t.approval_text = 'not run'
    t.denied = true
  elseif type(tc.label) == 'string' and tc.label ~= '' and (state == 'allowed' or state == 'denied') then
    -- The host's words for people, saying which grant ("allowed once by you"): they win.
    t.label = tc.label:gsub('%c', ' ')
    t.approval_text = t.label
    t.denied = state == 'denied'
  elseif type(state) == 'string' and state ~= '' and not t.resolved then
    local by = tc.decidedBy
    if by and by ~= vim.NIL and by ~= '' then
      state = state .. ' (' .. tostring(by) .. ')'
    end
    t.approval_text = state
    t.denied = tc.approval == 'denied'
  end
  render_tool(c, t)
end

local function tool_result(c, ev)
  local r = ev.result or ev.toolResult or {}
  local id = r.id or (type(ev.toolCall) == 'table' and ev.toolCall.id) or ev.id
  local t = id and c.tools[id]
  if not t then
    for _, x in pairs(c.tools) do
      if x.name == (r.name or (type(ev.toolCall) == 'table' and ev.toolCall.name)) then
        t = x
      end
    end
  end
  local is_error = r.isError == true
  require('switchboard.views').note(r.view) -- a tool with an MCP App view
  if t then
    if not t.denied then
      t.result_text = is_error and 'failed' or 'done'
    end
    render_tool(c, t)
  end
  -- A denied, unrun or failed call: the host's sentence for people. The text is then the model's
  -- wording ("... Do not retry it unless the user asks.", raw {"error": ...}), never shown.
  local summary = type(r.summary) == 'string' and r.summary ~= '' and r.summary:gsub('%c', ' ') or nil
  local text = summary or tostring(r.text or ev.text or ''):gsub('%s+$', '')
  local lines = vim.split(text, '\n', { plain = true })
  local out = {}
  for i, l in ipairs(lines) do
    if i > 8 then
      table.insert(out, ('    ... (%d more lines)'):format(#lines - 8))
      break
    end
    table.insert(out, (i == 1 and (is_error and '    ! ' or '    = ') or '      ') .. l)
  end
  if r.truncated and not summary then
    table.insert(out, '    (output truncated by the host)')
  end
  -- Under its tool line when there is one (calls run in parallel), else at the end.
  local pos = t and vim.api.nvim_buf_get_extmark_by_id(c.buf, ns, t.mark, {})
  if pos and pos[1] then
    local row = pos[1] + 1 + (t.result_lines or 0)
    with_modifiable(c.buf, function()
      vim.api.nvim_buf_set_lines(c.buf, row, row, false, out)
    end)
    t.result_lines = (t.result_lines or 0) + #out
    c.in_text = false
  else
    append(c, out)
  end
end

local function handle(c, ev)
  local kind = ev.kind
  if kind == 'text' then
    text_delta(c, ev.text or ev.delta)
  elseif kind == 'toolCall' then
    tool_call(c, ev.toolCall or ev)
  elseif kind == 'toolResult' then
    tool_result(c, ev)
  elseif kind == 'error' then
    local e = ev.error
    if type(e) == 'table' then
      e = e.message or vim.inspect(e)
    end
    append(c, { '  error: ' .. tostring(e or ev.text or 'unknown error'):gsub('\n', ' ') })
  elseif kind == 'done' then
    local reason = ev.stopReason
    local note = nil
    if reason == 'cancelled' then
      note = '  (cancelled)'
    elseif reason and reason ~= '' and reason ~= 'end_turn' and reason ~= 'tool_use' and reason ~= 'error' then
      note = '  (stopped: ' .. reason .. ')'
    end
    if note then
      append(c, { note })
    end
    local usage = M.usage_lines(ev)
    if #usage > 0 then
      append(c, usage)
    end
    append(c, { '' })
    if c.turn == ev.turn then
      c.turn = nil
    end
    c.cancelling = false
    c.last_done = ev.turn
  end
  follow(c)
end

local function count(n)
  local s = tostring(math.floor(tonumber(n) or 0))
  local out = s:reverse():gsub('(%d%d%d)', '%1,'):reverse()
  return (out:gsub('^,', ''))
end

--- One line of usage: "1,200 input tokens (800 cached), 150 output tokens, $0.0031".
function M.usage_text(u)
  local cached = {}
  if (tonumber(u.cachedInputTokens) or 0) > 0 then
    table.insert(cached, count(u.cachedInputTokens) .. ' cached')
  end
  if (tonumber(u.cacheWriteTokens) or 0) > 0 then
    table.insert(cached, count(u.cacheWriteTokens) .. ' written to the cache')
  end
  local out = count(u.inputTokens) .. ' input tokens'
  if #cached > 0 then
    out = out .. ' (' .. table.concat(cached, ', ') .. ')'
  end
  out = out .. ', ' .. count(u.outputTokens) .. ' output tokens'
  local cost = tonumber(u.cost)
  if cost and cost > 0 then
    out = out .. (cost >= 1 and (', $%.2f'):format(cost) or (', $%.4f'):format(cost))
  end
  return out
end

-- A usage worth showing: well-formed, and some tokens were counted (a provider that reports none
-- gives zeros).
local function is_usage(u)
  return type(u) == 'table' and type(u.inputTokens) == 'number' and type(u.outputTokens) == 'number'
    and u.inputTokens + u.outputTokens > 0
end

--- The usage lines of a done event: this turn's and the conversation's (none when absent).
function M.usage_lines(ev)
  local out = {}
  if is_usage(ev.usage) then
    table.insert(out, '  This turn: ' .. M.usage_text(ev.usage) .. '.')
  end
  if is_usage(ev.conversationUsage) then
    table.insert(out, '  Conversation: ' .. M.usage_text(ev.conversationUsage) .. '.')
  end
  return out
end

--- switchboard/event handler.
function M.on_event(ev, _)
  if type(ev) ~= 'table' then
    return
  end
  for _, c in pairs(M.chats) do
    if vim.api.nvim_buf_is_valid(c.buf) then
      if (ev.turn and ev.turn == c.turn) or (ev.conversation and ev.conversation == c.conversation and c.turn == ev.turn) then
        return handle(c, ev)
      end
    end
  end
  -- The event may belong to a prompt whose reply (with the turn id) is still on its way.
  for _, c in pairs(M.chats) do
    if c.waiting then
      table.insert(c.early, ev)
      return
    end
  end
end

--- switchboard/viewMessage handler: a view's message, which the person chose to send, started a
--- turn of a chat's conversation. It goes in that chat's transcript as from the view (the host
--- escaped the text), never as the person's, and the chat follows the turn as its own.
function M.on_view_message(n)
  if type(n) ~= 'table' or type(n.conversation) ~= 'string' or type(n.turn) ~= 'string' then
    return
  end
  local toolform = require('switchboard.toolform')
  local tool = toolform.clean(type(n.view) == 'table' and n.view.tool or 'a tool', 100)
  local c
  for _, x in pairs(M.chats) do
    if vim.api.nvim_buf_is_valid(x.buf) and x.conversation == n.conversation then
      c = x
    end
  end
  if not c then
    -- Not a conversation of a chat buffer here: say so, the turn runs on the host regardless.
    vim.notify(('switchboard: the view of %s sent a message to a chat that is not open: %s'):format(tool, toolform.clean(n.text, 300)), vim.log.levels.INFO)
    return
  end
  local lines = { '## From the view of ' .. tool }
  table.insert(lines, '> ' .. toolform.clean(n.text, 8000))
  for _, v in ipairs(n.viewContext or {}) do
    table.insert(lines, ('  (the view of %s added context: %s)'):format(toolform.clean(v.tool, 100), toolform.clean(v.text, 400)))
  end
  table.insert(lines, '')
  table.insert(lines, '## Switchboard')
  append(c, lines)
  c.turn = n.turn
  follow(c)
end

approvals.on_change(function(e)
  for _, c in pairs(M.chats) do
    if vim.api.nvim_buf_is_valid(c.buf) then
      if e.type == 'requested' then
        local a = e.approval
        if c.turn and (a.turn == nil or a.turn == c.turn) then
          for _, t in pairs(c.tools) do
            if t.name == a.tool and not t.approval then
              c.approval_of[a.id] = t.id
              t.approval = a.id
              t.approval_text = 'awaiting approval (:Switchboard approve)'
              render_tool(c, t)
              break
            end
          end
        end
      elseif e.type == 'resolved' then
        local tid = c.approval_of[e.id]
        local t = tid and c.tools[tid]
        if t then
          t.resolved = true
          t.denied = e.decision == 'deny'
          t.approval_text = t.label or ((decision_words[e.decision] or tostring(e.decision)) .. ' by ' .. tostring(e.by))
          render_tool(c, t)
        end
      end
    end
  end
end)

local function prompt_text(c)
  local row = marker_row(c)
  local lines = vim.api.nvim_buf_get_lines(c.buf, row + 1, -1, false)
  return vim.trim(table.concat(lines, '\n'))
end

local function set_prompt(c, text)
  local row = marker_row(c)
  vim.api.nvim_buf_set_lines(c.buf, row + 1, -1, false, vim.split(text or '', '\n', { plain = true }))
end

local function create()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, 'switchboard://chat/' .. buf)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '# Switchboard chat', '', MARKER, '' })
  local c = {
    buf = buf,
    tools = {},
    approval_of = {},
    early = {},
    waiting = false,
    in_text = false,
  }
  c.marker = vim.api.nvim_buf_set_extmark(buf, ns, 2, 0, {})
  -- Markdown (the model writes it); b:switchboard_chat tells it from other Markdown buffers.
  vim.api.nvim_buf_set_var(buf, 'switchboard_chat', true)
  vim.bo[buf].filetype = 'markdown'
  M.chats[buf] = c
  local keys = require('switchboard.config').options.chat.keys or {}
  local o = { buffer = buf, silent = true }
  if keys.send then
    vim.keymap.set('n', keys.send, function()
      M.send(nil, buf)
    end, vim.tbl_extend('force', o, { desc = 'Switchboard: send the prompt' }))
  end
  if keys.cancel then
    vim.keymap.set({ 'n', 'i' }, keys.cancel, function()
      M.cancel(buf)
    end, vim.tbl_extend('force', o, { desc = 'Switchboard: cancel the running turn' }))
  end
  if keys.close then
    vim.keymap.set('n', keys.close, '<cmd>close<cr>', vim.tbl_extend('force', o, { nowait = true }))
  end
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    callback = function()
      M.chats[buf] = nil
      -- The conversation ends with its buffer: the host forgets it, and stops serving its views.
      if c.conversation then
        require('switchboard.commands').chat_end(c.conversation)
      end
    end,
  })
  return c
end

--- Opens (or shows) the chat window. Returns the chat buffer.
function M.open(new)
  local c = (not new) and chat_of() or nil
  if not c then
    c = create()
  end
  M.current = c.buf
  local win = vim.fn.bufwinid(c.buf)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    local layout = require('switchboard.config').options.chat.layout
    if layout == 'tab' then
      vim.cmd('tabnew')
    elseif layout == 'split' then
      vim.cmd('botright split')
    elseif layout ~= 'current' then
      vim.cmd('botright vsplit')
    end
    vim.api.nvim_win_set_buf(0, c.buf)
    vim.wo.wrap = true
  end
  -- Each tool call (its line and its result lines) is a fold, closed: zo opens one.
  vim.wo.foldmethod = 'expr'
  vim.wo.foldexpr = ("v:lua.require'%s'.foldexpr(v:lnum)"):format(modname)
  vim.wo.foldenable = true
  vim.wo.foldlevel = 0
  pcall(vim.api.nvim_win_set_cursor, 0, { vim.api.nvim_buf_line_count(c.buf), 0 })
  return c.buf
end

--- A new conversation in a new chat buffer.
function M.new()
  return M.open(true)
end

--- Sends `text` (or the prompt area) as the next prompt of the chat's conversation.
function M.send(text, buf, extra)
  local c = chat_of(buf)
  if not c then
    c = chat_of(M.open())
  end
  text = text or prompt_text(c)
  if text == '' then
    return
  end
  if c.turn or c.waiting then
    vim.notify('switchboard: a turn is still running (<C-c> cancels it)', vim.log.levels.WARN)
    return
  end
  set_prompt(c, '')
  local lines = { '## You' }
  vim.list_extend(lines, vim.split(text, '\n', { plain = true }))
  extra = extra or {}
  local attached = require('switchboard.resources').take() -- :Switchboard attach
  if #attached > 0 then
    extra.attachments = attached
    for _, a in ipairs(attached) do
      table.insert(lines, '(attached ' .. a.uri .. ')')
    end
  end
  table.insert(lines, '')
  table.insert(lines, '## Switchboard')
  append(c, lines)
  c.waiting = true
  c.early = {}
  require('switchboard.commands').chat(text, c.conversation, nil, function(err, res)
    c.waiting = false
    if err then
      append(c, { '  error: ' .. require('switchboard.commands').errmsg(err), '' })
      return
    end
    c.conversation = res.conversation
    c.turn = res.turn
    -- What MCP Apps views added to the model's context with this turn (the host escaped it).
    for _, n in ipairs(res.viewContext or {}) do
      local toolform = require('switchboard.toolform')
      append(c, { ('  (the view of %s added context: %s)'):format(toolform.clean(n.tool, 100), toolform.clean(n.text, 400)) })
    end
    local early = c.early
    c.early = {}
    for _, ev in ipairs(early) do
      if ev.turn == c.turn then
        handle(c, ev)
      end
    end
  end, extra)
end

--- Cancels the running turn of a chat (the current one by default).
function M.cancel(buf)
  local c = chat_of(buf)
  if not c or not c.turn then
    vim.notify('switchboard: no turn is running', vim.log.levels.INFO)
    return
  end
  if c.cancelling then
    return
  end
  c.cancelling = true
  append(c, { '  (cancelling...)' })
  require('switchboard.commands').cancel(c.turn, function(err)
    if err then
      c.cancelling = false
      vim.notify('switchboard: ' .. require('switchboard.commands').errmsg(err), vim.log.levels.WARN)
    end
  end)
end

--- 'foldexpr' of the chat window: a tool call line starts a fold, the indented result lines
--- below it stay in it.
function M.foldexpr(lnum)
  local line = vim.fn.getline(lnum)
  if line:match('^  %[tool%] ') then
    return '>1'
  elseif line:match('^    ') then
    return '='
  end
  return '0'
end

--- A note from the host (not the model), put in the transcript of the open chat, if any.
function M.note(text)
  local c = chat_of()
  if not c then
    return false
  end
  append(c, { '> **note:** ' .. tostring(text):gsub('%s*\n%s*', ' ') })
  follow(c)
  return true
end

--- The chat state of a buffer (for tests and statuslines).
function M.get(buf)
  return chat_of(buf)
end

--- The transcript (every line above the prompt marker).
function M.transcript(buf)
  local c = chat_of(buf)
  if not c then
    return {}
  end
  return vim.api.nvim_buf_get_lines(c.buf, 0, marker_row(c), false)
end

return M
