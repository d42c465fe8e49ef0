-- MCP elicitation: an MCP server asks the user to fill in a form while it works. The host
-- announces each question (switchboard/elicitationRequested) and its end elsewhere (timeout, the
-- server gave up: switchboard/elicitationResolved); the answer goes back with switchboard.elicit.
--
-- Questions are asked one at a time, oldest first: a select "Answer / Decline / Cancel" under the
-- server's message, then each field in turn (vim.ui.input for text and numbers, vim.ui.select for
-- yes/no, a choice, several choices), then the answer. As with approvals, Esc (a nil answer) at any
-- step is not an answer: nothing is sent, the question stays pending on the host (and in the
-- statusline) with the values entered so far, and only :Switchboard elicit asks it again (those
-- values as defaults); the queue moves on. Every next step is scheduled, so synchronous pickers
-- (the built-in ones) and asynchronous ones (telescope, dressing, snacks: they call back later, or
-- never) behave the same. A form whose question ended elsewhere stops asking (its kept values go);
-- a picker that answers afterwards is ignored.
local compat = require('switchboard.compat')

local M = {}

-- vim.ui.select kinds (vim.ui.input gets the field kind too, for UIs that read it).
M.kind = 'switchboard_elicitation' -- the question: Answer (Accept for an empty form) / Decline / Cancel
M.kind_field = 'switchboard_elicitation_field' -- a field: yes/no, a choice, several choices
M.kind_pending = 'switchboard_elicitation_pending' -- :Switchboard elicit, which question

-- The pending questions: the one queue of questions (pending.lua), as approvals.lua keeps its.
-- Keyed by client and id (a restarted host counts its ids from the start again); an entry's item
-- is the Elicitation; a resolution is { action, by } (a late elicitationRequested is ignored).
local queue = require('switchboard.pending').new()
-- key -> field name -> the value entered so far (SKIP: left without an answer). Kept while the
-- question is pending, so that a form asked again (:Switchboard elicit, or after another one took
-- its place) offers them as defaults; dropped when the question ends.
local kept = {}
local SKIP = setmetatable({}, { __tostring = function() return 'SKIP' end })
local form -- the form being asked: { e, id, key, client_id, values, state = 'asking'|'sending'|'closed' }

local key = require('switchboard.pending').key

local INFO, WARN = vim.log.levels.INFO, vim.log.levels.WARN

local function notify(msg, level)
  vim.notify('switchboard: ' .. msg, level or INFO)
end

local function changed()
  local ok, sb = pcall(require, 'switchboard')
  if ok and sb._fire then
    sb._fire('SwitchboardElicitation')
  end
end

local function one_line(s)
  return (tostring(s or ''):gsub('%s*\n%s*', ' '))
end

local function shorten(s, n)
  s = one_line(s)
  if #s > n then
    s = s:sub(1, n - 3) .. '...'
  end
  return s
end

-- vim.NIL (a JSON null) reads as absent.
local function val(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

-- A field as sent, with nulls dropped and lists made lists.
local function normalize_field(f)
  local out = {}
  for k, v in pairs(type(f) == 'table' and f or {}) do
    out[k] = val(v)
  end
  out.name = tostring(out.name or '')
  out.required = out.required == true
  if type(out.enum) ~= 'table' then
    out.enum = nil
  end
  if type(out.enumTitles) ~= 'table' or not out.enum or #out.enumTitles ~= #out.enum then
    out.enumTitles = out.enum
  end
  return out
end

local function normalize(e)
  local out = {
    id = val(e.id),
    server = tostring(val(e.server) or '?'),
    message = tostring(val(e.message) or ''),
    requestedAt = val(e.requestedAt),
    fields = {},
  }
  for _, f in ipairs(type(val(e.fields)) == 'table' and e.fields or {}) do
    table.insert(out.fields, normalize_field(f))
  end
  return out
end

--- "MCP server 'x'": every line the user sees names the server, since the rest is its words.
function M.who(e)
  return ("MCP server '%s'"):format(e.server)
end

local function entry_of(e)
  for _, p in ipairs(queue:list()) do
    if p.item == e then
      return p
    end
  end
end

--- A one-line description of a pending question, for pickers and lists.
function M.describe(e)
  local n = #e.fields
  local p = entry_of(e)
  local mark = ''
  if form and form.e == e and form.state ~= 'closed' then
    mark = ' [open]'
  elseif p and p.dismissed then
    mark = ' [dismissed]'
  end
  return ('%s: %s (%d field%s)%s'):format(e.server, shorten(e.message, 100), n, n == 1 and '' or 's', mark)
end

-- Validation, as the host does it (mcpbridge.ValidateElicitation): the same rules and words. ----

local function chars(s)
  return select(2, s:gsub('[^\128-\191]', ''))
end

local function num(x)
  return ('%g'):format(x)
end

local function valid_date(y, m, d)
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  if not (y and m and d) or m < 1 or m > 12 or d < 1 then
    return false
  end
  local days = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }
  if m == 2 and y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0) then
    days[2] = 29
  end
  return d <= days[m]
end

local atext = "[%w!#$%%&'*+/=?^_`{|}~%-\128-\255]"

local function dot_atom(s)
  return s ~= '' and not s:find('^%.') and not s:find('%.$') and not s:find('..', 1, true)
    and (s:gsub('%.', '')):find('^' .. atext .. '+$') ~= nil
end

-- What Go's url.Parse checks: every % starts an escape, and a hierarchical URI's host[:port].
local function valid_uri(s)
  if not s:find('^%a[%w+.%-]*:') or s:find('%c') then
    return false
  end
  for i in s:gmatch('()%%') do
    if not s:sub(i + 1, i + 2):find('^%x%x$') then
      return false
    end
  end
  local authority = s:match('^%a[%w+.%-]*://([^/?#]*)')
  if not authority then
    return true
  end
  local host = authority:match('[^@]*$')
  local port = host:match('^%[[^%]%s]*%](.*)$') or host:match('^[^%s%%:%[%]]*(.*)$')
  return port == '' or port:find('^:%d*$') ~= nil
end

local formats = {
  email = function(s)
    local l, d = s:match('^(.+)@([^@]+)$')
    if not (l and dot_atom(l) and (dot_atom(d) or d:find('^%[[^%[%]\\%s]*%]$'))) then
      return 'must be an email address'
    end
  end,
  uri = function(s)
    if not valid_uri(s) then
      return 'must be a URI with a scheme (https://...)'
    end
  end,
  date = function(s)
    local y, m, d = s:match('^(%d%d%d%d)%-(%d%d)%-(%d%d)$')
    if not valid_date(y, m, d) then
      return 'must be a date (YYYY-MM-DD)'
    end
  end,
  ['date-time'] = function(s)
    local y, mo, d, h, mi, sec, rest = s:match('^(%d%d%d%d)%-(%d%d)%-(%d%d)T(%d%d):(%d%d):(%d%d)(.*)$')
    rest = rest and rest:gsub('^[.,]%d+', '', 1)
    local zone = rest == 'Z'
    if rest and not zone then
      local oh, om = rest:match('^[+-](%d%d):(%d%d)$')
      zone = oh ~= nil and tonumber(oh) < 24 and tonumber(om) < 60
    end
    if not (zone and valid_date(y, mo, d) and tonumber(h) < 24 and tonumber(mi) < 60 and tonumber(sec) < 60) then
      return 'must be a date and time (RFC 3339, e.g. 2026-11-30T12:00:00Z)'
    end
  end,
}

--- Why value `v` does not fit field `f` (nil when it does). A nil value is an absent one.
function M.check(f, v)
  if v == nil then
    if f.required then
      return 'is required'
    end
    return nil
  end
  if f.type == 'string' then
    if type(v) ~= 'string' then
      return 'must be a string'
    end
    local n = chars(v)
    if f.minLength and n < f.minLength then
      return ('must be at least %d characters'):format(f.minLength)
    end
    if f.maxLength and n > f.maxLength then
      return ('must be at most %d characters'):format(f.maxLength)
    end
    if f.enum and not vim.tbl_contains(f.enum, v) then
      return 'must be one of ' .. table.concat(f.enum, ', ')
    end
    return f.format and formats[f.format] and formats[f.format](v) or nil
  elseif f.type == 'number' or f.type == 'integer' then
    if type(v) ~= 'number' or v ~= v or v == math.huge or v == -math.huge then
      return 'must be a number'
    end
    if f.type == 'integer' and v ~= math.floor(v) then
      return 'must be a whole number'
    end
    if f.minimum and v < f.minimum then
      return 'must be at least ' .. num(f.minimum)
    end
    if f.maximum and v > f.maximum then
      return 'must be at most ' .. num(f.maximum)
    end
  elseif f.type == 'boolean' then
    if type(v) ~= 'boolean' then
      return 'must be true or false'
    end
  elseif f.type == 'array' then
    if type(v) ~= 'table' or vim.tbl_count(v) ~= #v then
      return 'must be a list'
    end
    if f.minItems and #v < f.minItems then
      return ('needs at least %d choices'):format(f.minItems)
    end
    if f.maxItems and #v > f.maxItems then
      return ('takes at most %d choices'):format(f.maxItems)
    end
    for _, x in ipairs(v) do
      if not vim.tbl_contains(f.enum or {}, x) then
        return 'each choice must be one of ' .. table.concat(f.enum or {}, ', ')
      end
    end
  end
  return nil
end

--- The field a whole answer gets wrong first and why (nil when it fits), as the host checks it:
--- a name that is not a field, then each field in order (missing when required, or a bad value).
function M.check_content(fields, content)
  local known = {}
  for _, f in ipairs(fields) do
    known[f.name] = true
  end
  for name in pairs(content) do
    if not known[name] then
      return name, ('%q is not a field of this form'):format(name)
    end
  end
  for _, f in ipairs(fields) do
    local problem = M.check(f, val(content[f.name]))
    if problem then
      return f.name, problem
    end
  end
  return nil
end

--- What typed text means for an input field: value (nil = no answer), or nil and the reason.
function M.parse(f, text)
  if f.type == 'number' or f.type == 'integer' then
    local s = vim.trim(text)
    if s == '' then
      return nil, M.check(f, nil)
    end
    s = s:gsub('^%+', '', 1)
    local plain = s:match('^%-?%d+%.?%d*$') or s:match('^%-?%.%d+$')
      or s:match('^%-?%d+%.?%d*[eE][-+]?%d+$') or s:match('^%-?%.%d+[eE][-+]?%d+$')
    local x = plain and tonumber(s)
    if not x then
      return nil, 'must be a number'
    end
    return x, M.check(f, x)
  end
  if text == '' and not f.required then
    return nil, nil -- left empty: skipped
  end
  return text, M.check(f, text)
end

-- Prompts ------------------------------------------------------------------------------------

local function label(f)
  local t = f.title
  if type(t) ~= 'string' or t == '' then
    t = f.name
  end
  return shorten(t, 80)
end
M.label = label

local format_names = { email = 'email address', uri = 'URI', date = 'date YYYY-MM-DD', ['date-time'] = 'date and time, RFC 3339' }

-- "1 to 10", "at least 2 characters", "at most 1 choice".
local function range(lo, hi, noun, fmt)
  fmt = fmt or tostring
  local function of(n)
    return noun and (' ' .. noun .. (n == 1 and '' or 's')) or ''
  end
  if lo and hi then
    return ('%s to %s%s'):format(fmt(lo), fmt(hi), of(hi))
  elseif lo then
    return ('at least %s%s'):format(fmt(lo), of(lo))
  elseif hi then
    return ('at most %s%s'):format(fmt(hi), of(hi))
  end
end

local function is_input(f)
  return f.type ~= 'array' and f.type ~= 'boolean' and not f.enum
end

local function hints(f)
  local h = {}
  local function add(x)
    if x then
      table.insert(h, x)
    end
  end
  if f.type == 'string' then
    add(f.format and format_names[f.format])
    add(range(f.minLength ~= 0 and f.minLength or nil, f.maxLength, 'character'))
  elseif f.type == 'number' or f.type == 'integer' then
    local what = f.type == 'integer' and 'whole number' or 'number'
    local r = range(f.minimum, f.maximum, nil, num)
    add(r and what .. ' ' .. r or what)
  elseif f.type == 'array' then
    add(range(f.minItems ~= 0 and f.minItems or nil, f.maxItems, 'choice') or 'several choices')
    add('pick to toggle')
  end
  if not f.required then
    add(is_input(f) and 'optional, empty skips' or 'optional')
  end
  return h
end

local function prompt(fm, f, reason)
  local p = ('[%s] %s'):format(fm.e.server, label(f))
  if type(f.description) == 'string' and f.description ~= '' then
    p = p .. ' - ' .. shorten(f.description, 120)
  end
  local h = hints(f)
  if #h > 0 then
    p = p .. ' (' .. table.concat(h, ', ') .. ')'
  end
  if reason then
    p = p .. ' [' .. reason .. ']'
  end
  return p
end

--- A field's prompt as the form asks it, for another asker (toolform.lua): "[server] Label -
--- description (hints)".
function M.field_prompt(server, f, reason)
  return prompt({ e = { server = server } }, f, reason)
end

local function to_text(v)
  if type(v) == 'number' then
    if v == math.floor(v) and math.abs(v) < 1e15 then
      return ('%d'):format(v)
    end
    return num(v)
  end
  if type(v) == 'string' then
    return v
  end
  return nil
end

M.to_text = to_text
M.is_input = is_input
M.normalize_field = normalize_field

-- The queue ----------------------------------------------------------------------------------

--- Pending questions, oldest first.
function M.list()
  return queue:items()
end

function M.count()
  return queue:count()
end

--- The id of the question being asked, or nil.
function M.active()
  return form and form.state ~= 'closed' and form.id or nil
end

--- The values kept for pending question `id` of client `client_id` (field name -> value), or nil
--- (for tests).
function M._kept(id, client_id)
  return kept[key(client_id, id)]
end

--- How question `id` of client `client_id` ended: { action, by }, or nil.
function M.resolution(id, client_id)
  return queue:resolution(id, client_id)
end

local start, pump

local function close(fm)
  fm.state = 'closed'
  if form == fm then
    form = nil
  end
end

-- After a question is answered, dismissed or dropped: the next one (a dismissed question waits
-- for :Switchboard elicit).
pump = function()
  if form then
    return
  end
  for _, p in ipairs(queue:list()) do
    if not p.dismissed then
      return start(p)
    end
  end
end

-- The question left the queue (answered, ended elsewhere, gone from the host): its kept values go.
local function drop(k)
  kept[k] = nil
end

local function client_of(fm)
  return fm.client_id and compat.get_client_by_id(fm.client_id) or nil
end

local function content_of(fm)
  local c = {}
  for _, f in ipairs(fm.e.fields) do
    local v = fm.values[f.name]
    if v ~= nil and v ~= SKIP then
      c[f.name] = v
    end
  end
  if next(c) == nil then
    return vim.empty_dict()
  end
  return c
end

local function later(fm, fn)
  vim.schedule(function()
    if form == fm and fm.state == 'asking' then
      fn()
    end
  end)
end

local ask_field

-- Sends the answer. An answer the host refuses (InvalidParams naming a field) asks that field again.
local function send(fm, action)
  if form ~= fm or fm.state ~= 'asking' then
    return
  end
  fm.state = 'sending'
  local content = action == 'accept' and content_of(fm) or nil
  require('switchboard.commands').elicit(fm.id, action, content, function(err)
    if form ~= fm or fm.state ~= 'sending' then
      return -- dropped meanwhile (:Switchboard elicit picked another question)
    end
    if err then
      local msg = tostring(type(err) == 'table' and err.message or err)
      local text = msg:gsub('^[%w.]+:%s*', '', 1)
      local gone = msg:find('no pending elicitation', 1, true) ~= nil or queue:entry(fm.id, fm.client_id) == nil
      if action == 'accept' and type(err) == 'table' and err.code == -32602 and not gone then
        local name = text:match('^"([^"]*)"')
        local index
        for i, f in ipairs(fm.e.fields) do
          if f.name == name then
            index = i
          end
        end
        notify(('%s refused the answer: %s'):format(M.who(fm.e), text), WARN)
        fm.state = 'asking'
        if index then
          -- '"name" (Title): reason' or '"name" is required': the reason, for the prompt.
          local why = text:match('^"[^"]*"%s*%b()%s*:?%s*(.+)$') or text:match('^"[^"]*"%s*:?%s*(.+)$') or text
          fm.only = true -- that field, then send again
          return later(fm, function()
            ask_field(fm, index, why)
          end)
        end
        return later(fm, function()
          ask_field(fm, 1, text) -- no field named: the whole form again, answers kept
        end)
      end
      notify(('answer to %s not sent: %s'):format(M.who(fm.e), text), WARN)
    end
    queue:resolve(fm.id, fm.client_id, queue:resolution(fm.id, fm.client_id) or { action = action, by = 'user' })
    drop(fm.key)
    close(fm)
    changed()
    vim.schedule(pump)
  end, client_of(fm))
end

-- After field i: the next field, or (after the last one, or a field asked again) the answer.
local function next_field(fm, i)
  later(fm, function()
    if fm.only or i >= #fm.e.fields then
      fm.only = nil
      send(fm, 'accept')
    else
      ask_field(fm, i + 1)
    end
  end)
end

-- Esc (a nil answer): not an answer. Nothing is sent; the question stays pending with what was
-- entered (fm.values is kept[key]) and is not asked again by itself; the queue moves on.
local function dismiss(fm)
  if form ~= fm or fm.state ~= 'asking' then
    return
  end
  queue:dismiss(queue:entry(fm.id, fm.client_id), true)
  close(fm)
  notify(('%s is waiting for your answer: :Switchboard elicit to answer, decline or cancel it'):format(M.who(fm.e)), INFO)
  changed()
  vim.schedule(pump)
end

local function ui_failed(fm, err)
  notify('could not ask: ' .. tostring(err), vim.log.levels.ERROR)
  send(fm, 'cancel')
end

local function pick(fm, items, opts, on_item)
  opts.kind = opts.kind or M.kind_field
  opts.format_item = function(it)
    return it.label
  end
  opts.switchboard = { server = fm.e.server, message = fm.e.message, id = fm.id }
  local ok, err = pcall(vim.ui.select, items, opts, function(item)
    if form ~= fm or fm.state ~= 'asking' then
      return -- the question ended meanwhile, or this picker was left for another one
    end
    if item == nil then
      return later(fm, function()
        dismiss(fm)
      end)
    end
    on_item(item)
  end)
  if not ok then
    ui_failed(fm, err)
  end
end

-- Several choices: a select that toggles one choice per pick, until "Done".
local function ask_array(fm, i, f, chosen, reason)
  local items = {}
  for k, v in ipairs(f.enum or {}) do
    local on = vim.tbl_contains(chosen, v)
    table.insert(items, { label = (on and '[x] ' or '[ ] ') .. tostring(f.enumTitles[k] or v), value = v, on = on })
  end
  table.insert(items, { label = ('Done (%d chosen)'):format(#chosen), done = true })
  pick(fm, items, { prompt = prompt(fm, f, reason) }, function(item)
    if item.done then
      local v = chosen
      if #chosen == 0 and not f.required then
        v = nil -- nothing chosen in an optional field: no answer
      end
      local why = M.check(f, v)
      if why then
        notify(('%s: %s'):format(label(f), why), WARN)
        return later(fm, function()
          ask_array(fm, i, f, chosen, why)
        end)
      end
      fm.values[f.name] = v == nil and SKIP or v
      return next_field(fm, i)
    end
    local nxt = vim.tbl_filter(function(x)
      return x ~= item.value
    end, chosen)
    local why
    if not item.on then
      if f.maxItems and #chosen >= f.maxItems then
        why = ('takes at most %d choices'):format(f.maxItems)
        notify(('%s: %s'):format(label(f), why), WARN)
      else
        -- Keep the server's order.
        nxt = vim.tbl_filter(function(x)
          return x == item.value or vim.tbl_contains(chosen, x)
        end, f.enum)
      end
    end
    fm.values[f.name] = nxt -- kept should the form be dismissed before Done
    later(fm, function()
      ask_array(fm, i, f, nxt, why)
    end)
  end)
end

-- Asks field i; `reason` says why it is asked again, `text` what was typed then.
ask_field = function(fm, i, reason, text)
  local f = fm.e.fields[i]
  if not f then
    return send(fm, 'accept')
  end
  local current = fm.values[f.name]
  local skipped = current == SKIP -- left without an answer before: no default then
  if current == nil then
    current = f.default
  elseif skipped then
    current = nil
  end
  if f.type == 'array' then
    local chosen = {}
    for _, v in ipairs(type(current) == 'table' and current or {}) do
      if vim.tbl_contains(f.enum or {}, v) then
        table.insert(chosen, v)
      end
    end
    return ask_array(fm, i, f, chosen, reason)
  end
  if not is_input(f) then
    local items
    if f.type == 'boolean' then
      items = { { label = 'Yes', value = true }, { label = 'No', value = false } }
    else
      items = {}
      for k, v in ipairs(f.enum) do
        table.insert(items, { label = tostring(f.enumTitles[k] or v), value = v })
      end
    end
    for _, it in ipairs(items) do
      if current ~= nil and it.value == current then
        it.label = it.label .. ' (default)'
      end
    end
    if not f.required then
      table.insert(items, { label = 'Skip (no answer)' .. (skipped and ' (default)' or ''), skip = true })
    end
    return pick(fm, items, { prompt = prompt(fm, f, reason) }, function(item)
      if item.skip then
        fm.values[f.name] = SKIP
      else
        fm.values[f.name] = item.value
      end
      next_field(fm, i)
    end)
  end
  local opts = {
    prompt = prompt(fm, f, reason) .. ': ',
    default = text or to_text(current),
    kind = M.kind_field,
  }
  local ok, err = pcall(compat.input, opts, function(typed)
    if form ~= fm or fm.state ~= 'asking' then
      return
    end
    if typed == nil then
      return later(fm, function()
        dismiss(fm)
      end)
    end
    local v, why = M.parse(f, typed)
    if why then
      notify(('%s: %s'):format(label(f), why), WARN)
      return later(fm, function()
        ask_field(fm, i, why, typed)
      end)
    end
    fm.values[f.name] = v == nil and SKIP or v
    next_field(fm, i)
  end)
  if not ok then
    ui_failed(fm, err)
  end
end

-- The question itself: Answer (or Accept, for a form without fields) / Decline / Cancel. Esc here
-- answers nothing, as at any other step.
local function intro(fm)
  local e = fm.e
  local first = #e.fields == 0 and 'Accept' or ('Answer (%d field%s)'):format(#e.fields, #e.fields == 1 and '' or 's')
  local items = {
    { label = first, answer = true },
    { label = 'Decline', action = 'decline' },
    { label = "Cancel (don't answer)", action = 'cancel' },
  }
  pick(fm, items, {
    prompt = ('%s asks: %s'):format(M.who(e), one_line(e.message)),
    kind = M.kind,
  }, function(item)
    if item.action then
      return later(fm, function()
        send(fm, item.action)
      end)
    end
    later(fm, function()
      ask_field(fm, 1)
    end)
  end)
end

start = function(entry)
  if form and form.state ~= 'closed' then
    close(form) -- left unanswered; it stays pending and is asked again later
  end
  kept[entry.key] = kept[entry.key] or {}
  local fm = { e = entry.item, id = entry.item.id, key = entry.key, client_id = entry.client_id, values = kept[entry.key], state = 'asking' }
  form = fm
  changed()
  later(fm, function()
    intro(fm)
  end)
end

--- Asks pending question `e` now (:Switchboard elicit), dismissed or not, from its first select
--- and with the values entered before as defaults. The form that is open is left (not answered)
--- and asked again afterwards.
function M.ask(e)
  local p = entry_of(e)
  if not p then
    return notify('that question is no longer pending', WARN)
  end
  queue:dismiss(p, false)
  start(p)
end

-- Host notifications ---------------------------------------------------------------------------

local function add(e, client_id)
  local _, new = queue:add(e.id, e, client_id) -- not new: known already, or ended before this arrived
  return new
end

--- switchboard/elicitationRequested.
function M.requested(params, client_id)
  if type(params) ~= 'table' or val(params.id) == nil then
    return
  end
  local e = normalize(params)
  if not add(e, client_id) then
    return
  end
  local queued = form ~= nil and '\n(asked after the question before it)' or ''
  notify(('%s asks: %s%s'):format(M.who(e), e.message, queued), INFO)
  changed()
  vim.schedule(pump)
end

local ended_because = {
  timeout = 'not answered in time',
  cancelled = 'the server withdrew it',
  disconnect = 'the connection ended',
  user = 'answered elsewhere',
}

--- switchboard/elicitationResolved.
function M.resolved(params, client_id)
  if type(params) ~= 'table' or val(params.id) == nil then
    return
  end
  local k = key(client_id, params.id)
  local p = queue:resolve(params.id, client_id, { action = val(params.action), by = val(params.by) })
  drop(k)
  local function ended(e)
    notify(('the question of %s ended: %s (%s)'):format(M.who(e), ended_because[val(params.by)] or tostring(val(params.by)),
      tostring(val(params.action))), WARN)
  end
  if form and form.key == k and form.state == 'asking' then
    local fm = form
    close(fm)
    ended(fm.e)
    vim.schedule(pump)
  elseif p and p.dismissed then
    ended(p.item) -- the user was told it waits for them
  end
  if p then
    changed()
  end
end

--- Replaces the local view of one client's questions with the host's (switchboard.elicitations).
function M.sync(list, client_id)
  local host = {}
  for _, raw in ipairs(type(list) == 'table' and list or {}) do
    if type(raw) == 'table' and val(raw.id) ~= nil then
      local e = normalize(raw)
      table.insert(host, { id = e.id, item = e })
    end
  end
  for _, p in ipairs(queue:sync(host, client_id)) do
    drop(p.key)
    if form and form.key == p.key and form.state == 'asking' then
      close(form)
    end
  end
  changed()
  vim.schedule(pump)
end

--- Forgets one client's questions (it stopped), or every client's.
function M.clear(client_id)
  for _, p in ipairs(queue:clear(client_id)) do
    drop(p.key)
  end
  if form and (client_id == nil or form.client_id == client_id) then
    close(form)
  end
  changed()
  vim.schedule(pump)
end

return M
