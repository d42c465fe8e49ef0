-- Issue 12 items 7 and 8 in Neovim: people read the host's summary and label, never the model's
-- wording; :Switchboard tools shows each tool's parameters; :Switchboard call asks the arguments
-- from the input schema. Against the real host and cmd/mcptest.
local T = require('harness')

local function protocol()
  return require('switchboard.protocol')
end

-- The model's wording: a person must never see it where the host gave a summary.
local model_words = { 'Do not retry', 'decided by', '{"error"', 'Unknown tool' }

local function none_of_model_words(text, what)
  for _, w in ipairs(model_words) do
    T.hasnt(text, w, what)
  end
end

local function broken_opts(extra)
  return vim.tbl_deep_extend('force', {
    servers = { demo = { command = T.mcptest }, broken = { command = T.mcptest, args = { '--exit-at-start' } } },
  }, extra or {})
end

T.case(':Switchboard call: a denied call and a failed server say so in a sentence for people', function()
  T.start(broken_opts())
  T.answer('switchboard_approval', T.pick('Deny'))
  vim.cmd('Switchboard call mcp__demo__echo {"text":"no"}')
  T.wait('the denial', function()
    return T.notes_text():find('You denied mcp__demo__echo.', 1, true) ~= nil
  end, nil, nil, T.notes_text)
  vim.cmd('Switchboard call mcp__broken__echo {"text":"x"}')
  T.wait('the failed server', function()
    return T.notes_text():find("Server 'broken' is not running (", 1, true) ~= nil
  end, nil, nil, T.notes_text)
  T.has(T.notes_text(), 'reconnect it.')
  -- Without JSON, a tool that is not listed: the host says why (no form to ask).
  vim.cmd('Switchboard call mcp__broken__other')
  T.wait('the failed server again', function()
    local n = 0
    for _ in T.notes_text():gmatch("Server 'broken' is not running") do
      n = n + 1
    end
    return n == 2
  end, nil, nil, T.notes_text)
  none_of_model_words(T.notes_text(), 'the notices')
end)

T.case('chat: the label says which grant, the summaries replace the model text', function()
  local script = T.dir .. '/chat.script'
  T.write(script, table.concat({
    'expect last_user ~ "go"',
    'reply tool_call id=a1 name=mcp__demo__echo args={"text":"first"}',
    '',
    'expect last_tool_result id=a1 ~ "first"',
    'reply tool_call id=d1 name=mcp__demo__big args={"n":3}',
    '',
    'expect last_tool_result id=d1 ~ "denied"',
    'reply tool_call id=b1 name=mcp__broken__echo args={"text":"x"}',
    '',
    'expect last_tool_result id=b1 ~ ""',
    'reply text "Done."',
    '',
  }, '\n'))
  T.start(broken_opts({ provider = { type = 'script', script = script } }))
  T.answer('switchboard_approval', function(labels, _, opts)
    local want = tostring(opts.prompt):find('mcp__demo__big', 1, true) and 'Deny' or 'Allow once'
    return T.pick(want)(labels)
  end)
  vim.cmd('Switchboard chat go')
  local chat = require('switchboard.chat')
  T.wait('turn done', function()
    local ch = chat.get()
    return ch and ch.last_done ~= nil
  end)
  local text = table.concat(chat.transcript(), '\n')
  T.has(text, '[tool] mcp__demo__echo {"text": "first"}  -- allowed once by you, done')
  T.has(text, '[tool] mcp__demo__big {"n": 3}  -- denied by you')
  T.has(text, '[tool] mcp__broken__echo {"text": "x"}  -- not run')
  T.has(text, '    ! You denied mcp__demo__big.')
  T.ok(text:find("    ! Server 'broken' is not running %(.+%); reconnect it%."), 'the failed server:\n' .. text)
  T.has(text, '    = first')
  none_of_model_words(text, 'the chat')
end)

local hostile = 'count\27[2J\7 of \226\128\174things'

T.case(':Switchboard tools shows each parameter, escaped', function()
  T.start({ mode = 'always-allow' })
  local schema = vim.fn.json_encode({
    type = 'object',
    properties = {
      n = { type = 'integer', minimum = 1, maximum = 5, description = hostile },
      color = { type = 'string', enum = { 'red', 'blue' } },
      opts = { type = 'object', description = 'extra options' },
    },
    required = { 'n' },
  })
  local res = T.exec(protocol().cmd.call_tool, { name = 'mcp__demo__add_tool', arguments = { name = 'shaped', schema = schema } })
  T.eq(res.isError, false, vim.inspect(res))
  T.wait('the new tool listed', function()
    for _, t in ipairs(T.exec(protocol().cmd.tools) or {}) do
      if t.name == 'mcp__demo__shaped' then
        return true
      end
    end
  end)
  vim.cmd('Switchboard tools demo')
  T.wait('tools buffer', function()
    return vim.api.nvim_buf_get_name(0):find('switchboard://tools', 1, true) ~= nil
  end)
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local text = table.concat(lines, '\n')
  T.has(text, '    text: string, required - text to return')
  T.has(text, '    n: number, required - number of bytes\n    char: string, optional - what to repeat (default x)')
  T.has(text, '    n: integer, required - count\\x1b[2J\\x07 of \\u202ethings')
  T.has(text, '    color: one of red, blue, optional')
  T.has(text, '    opts: object, optional - extra options')
  T.ok(not text:gsub('\n', ''):find('%c'), 'no control characters in the buffer')
end)

T.case(':Switchboard call TOOL asks the arguments from the input schema, then calls through the gate', function()
  T.start()
  -- n is asked first (required); "many" is refused as typed and asked again; char is optional.
  T.answer_input(T.by_prompt({
    ['[demo] n - number of bytes'] = { 'many', '4' },
    ['[demo] char - what to repeat'] = 'ab',
  }))
  local asked
  T.answer('switchboard_approval', function(labels, _, opts)
    asked = opts.prompt
    return T.pick('Allow once')(labels)
  end)
  vim.cmd('Switchboard call mcp__demo__big')
  T.wait('the result', function()
    return T.notes_text():find('mcp__demo__big: abab', 1, true) ~= nil
  end, nil, nil, T.notes_text)
  local n = T.inputs_with('[demo] n')
  T.eq(#n, 2, 'n asked twice')
  T.has(n[2].prompt, '[must be a number]')
  T.eq(n[2].default, 'many', 'what was typed is offered again')
  T.has(tostring(asked), 'mcp__demo__big', 'the call passed the confirm gate')
  -- Esc at any step calls nothing.
  local before = #T.selects_of('switchboard_approval')
  T.answer_input(T.by_prompt({ ['[demo] text'] = T.CANCEL }))
  vim.cmd('Switchboard call mcp__demo__echo')
  T.wait('cancelled', function()
    return T.notes_text():find('call of mcp__demo__echo cancelled: nothing was called', 1, true) ~= nil
  end, nil, nil, T.notes_text)
  T.eq(#T.selects_of('switchboard_approval'), before, 'no approval asked')
end)

T.case(':Switchboard call without a name: pick the tool; choices, yes/no and JSON fields', function()
  T.start({ mode = 'always-allow' })
  local schema = vim.fn.json_encode({
    type = 'object',
    properties = {
      color = { type = 'string', enum = { 'red', 'blue' } },
      loud = { type = 'boolean' },
      opts = { type = 'object' },
    },
    required = { 'color', 'loud' },
  })
  local res = T.exec(protocol().cmd.call_tool, { name = 'mcp__demo__add_tool', arguments = { name = 'shaped', schema = schema } })
  T.eq(res.isError, false, vim.inspect(res))
  T.wait('the new tool listed', function()
    for _, t in ipairs(T.exec(protocol().cmd.tools) or {}) do
      if t.name == 'mcp__demo__shaped' then
        return true
      end
    end
  end)
  T.answer('switchboard_tool', T.pick('mcp__demo__shaped'))
  T.answer('switchboard_tool_field', T.by_prompt({ ['[demo] color'] = 'blue', ['[demo] loud'] = 'No' }, true))
  T.answer_input(T.by_prompt({ ['[demo] opts'] = { '{nope', '{"k": 1}' } }))
  local asked
  T.answer('switchboard_approval', function(labels, _, o)
    asked = o.prompt
    return T.pick('Allow once')(labels)
  end)
  vim.cmd('Switchboard call')
  T.wait('the result', function()
    return T.notes_text():find('mcp__demo__shaped: I am shaped', 1, true) ~= nil
  end, nil, nil, T.notes_text)
  local opts = T.inputs_with('[demo] opts')
  T.eq(#opts, 2, 'bad JSON asked again')
  T.has(opts[2].prompt, 'must be JSON (object)')
  -- The arguments that went through the gate, as the approval showed them.
  T.has(tostring(asked), 'mcp__demo__shaped')
  T.has(tostring(asked), '"color":"blue"')
  T.has(tostring(asked), '"loud":false')
  T.has(tostring(asked), '"opts":{"k":1}')
end)
