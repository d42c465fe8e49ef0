-- A tool's input schema as people read and fill it: the parameters for :Switchboard tools, and
-- the form :Switchboard call TOOL asks when no JSON is given. Typed fields (text, numbers, yes/no,
-- a choice, several choices) are asked and checked as elicitation.lua asks a server's form;
-- objects, free arrays and unions are asked as JSON. Everything here comes from the server:
-- control characters are made visible before any of it reaches a prompt or a buffer.
local compat = require('switchboard.compat')
local elicitation = require('switchboard.elicitation')

local M = {}

M.kind = 'switchboard_tool_field'

local function val(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

-- Code points that act on or hide from what a person reads, past ASCII (the host's escaper,
-- mcpbridge/safetext, escapes the same): C1 controls, soft hyphen, bidi controls, zero-width and
-- other invisible or format characters, marks that show as nothing (variation selectors,
-- Mongolian and Khmer ones), the line and paragraph separators, tag characters.
local hidden = {
  { 0x80, 0x9f }, { 0xad, 0xad }, { 0x34f, 0x34f }, { 0x600, 0x605 }, { 0x61c, 0x61c }, { 0x6dd, 0x6dd },
  { 0x70f, 0x70f }, { 0x890, 0x891 }, { 0x8e2, 0x8e2 }, { 0x115f, 0x1160 }, { 0x17b4, 0x17b5 },
  { 0x180b, 0x180f }, { 0x200b, 0x200f }, { 0x2028, 0x202e }, { 0x2060, 0x206f }, { 0x3164, 0x3164 },
  { 0xfe00, 0xfe0d }, { 0xfeff, 0xfeff }, { 0xffa0, 0xffa0 }, { 0xfff0, 0xfffb }, { 0x110bd, 0x110bd },
  { 0x110cd, 0x110cd }, { 0x13430, 0x1343f }, { 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a },
  { 0xe0000, 0xe007f }, { 0xe0100, 0xe01ef },
}

-- The characters a presentation selector makes an emoji of (the bases of Unicode's emoji
-- variation sequences, by block; keycap digits excepted): the host's list (safetext.emojiBases).
local symbols = {
  { 0xa9, 0xa9 }, { 0xae, 0xae }, { 0x203c, 0x203c }, { 0x2049, 0x2049 }, { 0x2122, 0x2122 }, { 0x2139, 0x2139 },
  { 0x2194, 0x2199 }, { 0x21a9, 0x21aa }, { 0x231a, 0x231b }, { 0x2328, 0x2328 }, { 0x23cf, 0x23cf },
  { 0x23e9, 0x23f3 }, { 0x23f8, 0x23fa }, { 0x24c2, 0x24c2 }, { 0x25aa, 0x25ab }, { 0x25b6, 0x25b6 },
  { 0x25c0, 0x25c0 }, { 0x25fb, 0x25fe }, { 0x2600, 0x27bf }, { 0x2934, 0x2935 }, { 0x2b05, 0x2b07 },
  { 0x2b1b, 0x2b1c }, { 0x2b50, 0x2b50 }, { 0x2b55, 0x2b55 }, { 0x3030, 0x3030 }, { 0x303d, 0x303d },
  { 0x3297, 0x3297 }, { 0x3299, 0x3299 }, { 0x1f000, 0x1faff },
}

local function in_ranges(cp, ranges)
  for _, r in ipairs(ranges) do
    if cp >= r[1] and cp <= r[2] then
      return true
    end
  end
  return false
end

local function is_hidden(cp, prev)
  if cp == 0xfe0e or cp == 0xfe0f then -- right after a symbol it writes an emoji; else it hides a bit
    return not in_ranges(prev, symbols)
  end
  return in_ranges(cp, hidden)
end

-- The code point of one UTF-8 sequence (nil when it is not one).
local function codepoint(seq)
  local b1, n = seq:byte(1), #seq
  if n == 2 and b1 >= 0xc2 and b1 <= 0xdf then
    return (b1 - 0xc0) * 0x40 + (seq:byte(2) - 0x80)
  elseif n == 3 and b1 >= 0xe0 and b1 <= 0xef then
    return (b1 - 0xe0) * 0x1000 + (seq:byte(2) - 0x80) * 0x40 + (seq:byte(3) - 0x80)
  elseif n == 4 and b1 >= 0xf0 and b1 <= 0xf4 then
    return (b1 - 0xf0) * 0x40000 + (seq:byte(2) - 0x80) * 0x1000 + (seq:byte(3) - 0x80) * 0x40 + (seq:byte(4) - 0x80)
  end
  return nil
end

--- Server text on one line, with control characters shown as \x.. and invisible or reordering
--- ones as \u.... (never sent to the terminal as they are).
function M.clean(s, max)
  s = tostring(s or ''):gsub('%s*\n%s*', ' '):gsub('%c', function(c)
    return ('\\x%02x'):format(c:byte())
  end)
  local function bytes(seq)
    return (seq:gsub('.', function(b)
      return ('\\x%02x'):format(b:byte())
    end))
  end
  local prev = 0
  s = s:gsub('^[\128-\191]+', bytes):gsub('[^\128-\191][\128-\191]*', function(seq)
    if #seq == 1 and seq:byte() < 0x80 then
      prev = seq:byte()
      return seq
    end
    local cp = codepoint(seq)
    local was = prev
    prev = cp or 0
    if not cp then
      return bytes(seq)
    end
    if is_hidden(cp, was) then
      return cp > 0xffff and ('\\U%08x'):format(cp) or ('\\u%04x'):format(cp)
    end
    return seq
  end)
  if max and #s > max then
    s = s:sub(1, max - 3) .. '...'
  end
  return s
end

-- The marks after a tool's name in :Switchboard tools (host/wire ToolInfo): what the organisation's
-- policy says, auto-approved, has a view, only for its view (never offered to the model).
function M.marks(t)
  local out = {}
  if t.policy == 'deny' then
    table.insert(out, '[blocked by your organisation]')
  elseif t.policy == 'ask' then
    table.insert(out, '[always asks: organisation]')
  end
  if t.allowlisted and t.policy ~= 'deny' then
    table.insert(out, '[allowed]')
  end
  if t.view then
    table.insert(out, '[view]')
  end
  if t.appOnly then
    table.insert(out, '[view only]')
  end
  return table.concat(out, ' ')
end

local function strings(v)
  v = val(v)
  if type(v) ~= 'table' or #v == 0 then
    return nil
  end
  local out = {}
  for _, x in ipairs(v) do
    if type(x) ~= 'string' then
      return nil
    end
    table.insert(out, x)
  end
  return out
end

local function num(v)
  v = val(v)
  if type(v) == 'number' and v == v and v ~= math.huge and v ~= -math.huge then
    return v
  end
end

local formats = { email = true, uri = true, date = true, ['date-time'] = true }

-- The schema's own type in words: "string", "integer or null", "array of string", "any JSON value".
local function type_words(p)
  local t = val(p.type)
  if type(t) == 'table' then
    local parts = {}
    for _, x in ipairs(t) do
      table.insert(parts, M.clean(x, 20))
    end
    return table.concat(parts, ' or ')
  elseif type(t) == 'string' then
    local items = type(val(p.items)) == 'table' and p.items or {}
    if t == 'array' and type(val(items.type)) == 'string' then
      return 'array of ' .. M.clean(items.type, 20)
    end
    return M.clean(t, 30)
  elseif strings(p.enum) then
    return 'string'
  elseif val(p.anyOf) or val(p.oneOf) then
    return 'one of several types'
  end
  return 'any JSON value'
end

--- The fields of a tool's input schema (its top-level properties), required ones first, each
--- group in the schema's order as decoded. Each: { field (an elicitation field), json, schema_type }.
function M.fields(schema)
  schema = type(val(schema)) == 'table' and schema or {}
  local props = type(val(schema.properties)) == 'table' and schema.properties or {}
  local required = {}
  for _, n in ipairs(strings(schema.required) or {}) do
    required[n] = true
  end
  local names = vim.tbl_keys(props)
  table.sort(names)
  local req, opt = {}, {}
  for _, name in ipairs(names) do
    local p = type(val(props[name])) == 'table' and props[name] or {}
    local f = { name = name, type = 'string', required = required[name] == true }
    if type(val(p.title)) == 'string' then
      f.title = M.clean(p.title, 80)
    end
    if type(val(p.description)) == 'string' then
      f.description = M.clean(p.description, 200)
    end
    local t = val(p.type)
    local items = type(val(p.items)) == 'table' and p.items or {}
    local json = false
    if t == 'string' or (t == nil and strings(p.enum)) then
      f.enum = strings(p.enum)
      f.format = type(val(p.format)) == 'string' and formats[p.format] and p.format or nil
      f.minLength, f.maxLength = num(p.minLength), num(p.maxLength)
      f.default = type(val(p.default)) == 'string' and p.default or nil
    elseif t == 'number' or t == 'integer' then
      f.type = t
      f.minimum, f.maximum = num(p.minimum), num(p.maximum)
      f.default = num(p.default)
    elseif t == 'boolean' then
      f.type = 'boolean'
      if type(val(p.default)) == 'boolean' then
        f.default = p.default
      end
    elseif t == 'array' and strings(items.enum) then
      f.type = 'array'
      f.enum = strings(items.enum)
      f.minItems, f.maxItems = num(p.minItems), num(p.maxItems)
    else
      json = true
    end
    if f.enum then
      -- What the user picks is shown cleaned; the value sent is the schema's own.
      f.enumTitles = vim.tbl_map(function(x)
        return M.clean(x, 80)
      end, f.enum)
    end
    table.insert(f.required and req or opt, { field = elicitation.normalize_field(f), json = json, schema_type = type_words(p) })
  end
  vim.list_extend(req, opt)
  return req
end

--- The parameters as lines for :Switchboard tools: "    name: type, required - description".
function M.param_lines(schema, indent)
  indent = indent or '    '
  local lines = {}
  for _, tf in ipairs(M.fields(schema)) do
    local f = tf.field
    local what = tf.json and tf.schema_type or f.type
    if f.enum and f.type ~= 'array' then
      what = 'one of ' .. table.concat(f.enumTitles, ', ')
    elseif f.type == 'array' and not tf.json then
      what = 'list of ' .. table.concat(f.enumTitles, ', ')
    end
    local line = ('%s%s: %s, %s'):format(indent, M.clean(f.name, 60), M.clean(what, 120), f.required and 'required' or 'optional')
    if f.description and f.description ~= '' then
      line = line .. ' - ' .. f.description
    end
    table.insert(lines, line)
  end
  return lines
end

local function json_example(tf)
  if tf.schema_type:find('^array') then
    return '[1, 2]'
  elseif tf.schema_type == 'object' then
    return '{"key": "value"}'
  end
  return '"text"'
end

--- What text typed for field tf means: value (nil: no answer), or nil and the problem.
function M.parse(tf, text)
  if not tf.json then
    return elicitation.parse(tf.field, text)
  end
  if vim.trim(text) == '' then
    if tf.field.required then
      return nil, 'is required'
    end
    return nil, nil
  end
  local ok, v = pcall(compat.json_decode, text)
  if not ok then
    return nil, ('must be JSON (%s), for example %s'):format(tf.schema_type, json_example(tf))
  end
  return v, nil
end

--- Asks tool's arguments field by field. done(arguments) after the last field, done(nil) when
--- the user pressed Esc at any step (nothing is called then). `tool` is a ToolInfo.
function M.ask(tool, done)
  local fields = M.fields(tool.inputSchema)
  local server = M.clean(tool.server or '?', 60)
  local values = {}
  local step
  local function prompt(tf, reason)
    local p = elicitation.field_prompt(server, tf.field, reason and M.clean(reason, 200))
    if tf.json then
      p = p .. (' (JSON: %s%s)'):format(tf.schema_type, tf.field.required and '' or ', empty skips')
    end
    return p
  end
  local function cancelled()
    vim.schedule(function()
      done(nil)
    end)
  end
  local function next_step(i)
    vim.schedule(function()
      step(i + 1)
    end)
  end
  local function pick(items, tf, reason, on_item)
    vim.ui.select(items, {
      prompt = prompt(tf, reason),
      kind = M.kind,
      format_item = function(it)
        return it.label
      end,
    }, function(item)
      if item == nil then
        return cancelled()
      end
      on_item(item)
    end)
  end
  local function ask_array(i, tf, chosen, reason)
    local f = tf.field
    local items = {}
    for k, v in ipairs(f.enum) do
      local on = vim.tbl_contains(chosen, v)
      table.insert(items, { label = (on and '[x] ' or '[ ] ') .. f.enumTitles[k], value = v, on = on })
    end
    table.insert(items, { label = ('Done (%d chosen)'):format(#chosen), done = true })
    pick(items, tf, reason, function(item)
      if item.done then
        local v = chosen
        if #chosen == 0 and not f.required then
          v = nil
        end
        local why = elicitation.check(f, v)
        if why then
          return vim.schedule(function()
            ask_array(i, tf, chosen, why)
          end)
        end
        values[f.name] = v
        return next_step(i)
      end
      -- Toggle the choice, keeping the schema's order.
      local nxt = vim.tbl_filter(function(x)
        if x == item.value then
          return not item.on
        end
        return vim.tbl_contains(chosen, x)
      end, f.enum)
      vim.schedule(function()
        ask_array(i, tf, nxt, nil)
      end)
    end)
  end
  local function ask_input(i, tf, reason, text)
    local f = tf.field
    local current = values[f.name]
    if current == nil and not tf.json then
      current = f.default
    end
    local default = text
    if default == nil and current ~= nil then
      default = tf.json and compat.json_encode(current) or elicitation.to_text(current)
    end
    compat.input({ prompt = prompt(tf, reason) .. ': ', default = default, kind = M.kind }, function(typed)
      if typed == nil then
        return cancelled()
      end
      local v, why = M.parse(tf, typed)
      if why then
        return vim.schedule(function()
          ask_input(i, tf, why, typed)
        end)
      end
      values[f.name] = v
      next_step(i)
    end)
  end
  step = function(i)
    local tf = fields[i]
    if not tf then
      local args = {}
      for _, x in ipairs(fields) do
        if values[x.field.name] ~= nil then
          args[x.field.name] = values[x.field.name]
        end
      end
      return done(args)
    end
    local f = tf.field
    if tf.json or elicitation.is_input(f) then
      return ask_input(i, tf)
    end
    if f.type == 'array' then
      return ask_array(i, tf, {}, nil)
    end
    local items
    if f.type == 'boolean' then
      items = { { label = 'Yes', value = true }, { label = 'No', value = false } }
    else
      items = {}
      for k, v in ipairs(f.enum) do
        table.insert(items, { label = f.enumTitles[k], value = v })
      end
    end
    for _, it in ipairs(items) do
      if f.default ~= nil and it.value == f.default then
        it.label = it.label .. ' (default)'
      end
    end
    if not f.required then
      table.insert(items, { label = 'Skip (no value)', skip = true })
    end
    pick(items, tf, nil, function(item)
      if item.skip then
        values[f.name] = nil
      else
        values[f.name] = item.value -- false stays false
      end
      next_step(i)
    end)
  end
  step(1)
end

return M
