-- A small plain-Lua test harness for headless Neovim (0.7 and newer).
--   nvim --headless -u NONE -i NONE -c 'luafile tests/main.lua'
-- Each case gets its own config dir, workspace and host process. The last line is
-- `N passed, N failed` and the exit code is non-zero when a case failed.
local T = {}

T.cases = {}
T.notes = {} -- vim.notify captures of the current case
T.selects = {} -- vim.ui.select calls of the current case
T.inputs = {} -- vim.ui.input calls of the current case
T.deprecations = {}

local uv = vim.uv or vim.loop
local out = io.stdout

function T.log(fmt, ...)
  out:write((select('#', ...) > 0 and fmt:format(...) or fmt) .. '\n')
  out:flush()
end

function T.case(name, fn, opts)
  table.insert(T.cases, { name = name, fn = fn, opts = opts or {} })
end

local function fail(msg, level)
  error(msg, (level or 1) + 1)
end

function T.ok(cond, msg)
  if not cond then
    fail(msg or 'assertion failed', 2)
  end
  return cond
end

function T.eq(got, want, msg)
  if not vim.deep_equal(got, want) then
    fail(('%s: want %s, got %s'):format(msg or 'eq', vim.inspect(want), vim.inspect(got)), 2)
  end
end

--- `hay` (a string or a list of strings) contains `needle` (plain text).
function T.has(hay, needle, msg)
  local s = type(hay) == 'table' and table.concat(hay, '\n') or tostring(hay)
  if not s:find(needle, 1, true) then
    fail(('%s: %q not found in:\n%s'):format(msg or 'has', needle, s), 2)
  end
end

function T.hasnt(hay, needle, msg)
  local s = type(hay) == 'table' and table.concat(hay, '\n') or tostring(hay)
  if s:find(needle, 1, true) then
    fail(('%s: %q unexpectedly found in:\n%s'):format(msg or 'hasnt', needle, s), 2)
  end
end

T.timeout = tonumber(os.getenv('SWITCHBOARD_TEST_TIMEOUT_MS') or '') or 20000

--- Runs the event loop until cond() is true; fails after `ms` (default T.timeout).
--- `last` (optional): a function whose result is added to the failure message.
function T.wait(what, cond, ms, interval, last)
  local ok = vim.wait(ms or T.timeout, function()
    local good, v = pcall(cond)
    return good and v
  end, interval or 10)
  if not ok then
    fail('timed out waiting for ' .. what .. (last and (' (last: ' .. vim.inspect(last()) .. ')') or ''), 2)
  end
end

function T.read(path)
  local f = io.open(path, 'r')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

function T.write(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
end

--- Lines of the host's SWITCHBOARD_EVENTS file (decoded JSON objects).
function T.events()
  local s = T.read(T.events_file) or ''
  local list = {}
  for line in s:gmatch('[^\n]+') do
    local ok, v = pcall(vim.fn.json_decode, line)
    if ok then
      table.insert(list, v)
    end
  end
  return list, s
end

-- vim.ui.select stub ---------------------------------------------------------------------------
-- T.answer(kind, fn) registers a responder for one kind: fn(labels, items, opts, on_choice)
-- returns an index (answered synchronously), 0 (dismissed, nil), or 'async' (the responder keeps
-- on_choice and calls it later, or never). A prompt of a kind with no responder fails the case.
T.responders = {}

function T.answer(kind, fn)
  T.responders[kind] = fn
end

--- A responder that picks the first item whose label starts with `prefix`.
function T.pick(prefix)
  return function(labels)
    for i, l in ipairs(labels) do
      if l:sub(1, #prefix) == prefix then
        return i
      end
    end
    error(('no item %q among %s'):format(prefix, vim.inspect(labels)))
  end
end

--- A responder that answers the queued responders in turn (the last one repeats).
function T.sequence(...)
  local list = { ... }
  local n = 0
  return function(...)
    n = math.min(n + 1, #list)
    return list[n](...)
  end
end

-- T.ui_async = true makes the stubs answer from the event loop (vim.schedule / vim.defer_fn), as
-- telescope, dressing or snacks do, instead of inside the vim.ui call as the built-in ones do.
T.ui_async = false

local delivered = 0

local function deliver(fn)
  if not T.ui_async then
    return fn()
  end
  delivered = delivered + 1
  if delivered % 2 == 1 then
    vim.schedule(fn)
  else
    vim.defer_fn(fn, 5)
  end
end

local function stub_select(items, opts, on_choice)
  opts = opts or {}
  local fmt = opts.format_item or tostring
  local labels = {}
  for i, it in ipairs(items) do
    labels[i] = fmt(it)
  end
  local rec = { kind = opts.kind, prompt = opts.prompt, labels = labels, items = items, opts = opts, on_choice = on_choice }
  table.insert(T.selects, rec)
  local r = T.responders[opts.kind or '']
  if not r then
    T.unexpected = ('unexpected vim.ui.select kind=%s prompt=%s items=%s'):format(
      tostring(opts.kind), tostring(opts.prompt), vim.inspect(labels))
    on_choice(nil, nil)
    return
  end
  local ok, idx = pcall(r, labels, items, opts, on_choice)
  if not ok then
    T.unexpected = tostring(idx)
    on_choice(nil, nil)
    return
  end
  if idx == 'async' then
    return
  end
  deliver(function()
    if idx == 0 or idx == nil then
      on_choice(nil, nil)
    else
      on_choice(items[idx], idx)
    end
  end)
end

-- vim.ui.input stub -----------------------------------------------------------------------------
-- T.answer_input(fn): fn(prompt, opts, on_confirm) returns the typed text, T.CANCEL (Esc: nil) or
-- T.ASYNC (the responder keeps on_confirm). An input with no responder fails the case.
T.CANCEL = setmetatable({}, { __tostring = function() return 'CANCEL' end })
T.ASYNC = setmetatable({}, { __tostring = function() return 'ASYNC' end })
T.input_responder = nil

function T.answer_input(fn)
  T.input_responder = fn
end

local function stub_input(opts, on_confirm)
  opts = opts or {}
  local rec = { prompt = opts.prompt, default = opts.default, kind = opts.kind, on_confirm = on_confirm }
  table.insert(T.inputs, rec)
  if not T.input_responder then
    T.unexpected = ('unexpected vim.ui.input prompt=%s'):format(tostring(opts.prompt))
    on_confirm(nil)
    return
  end
  local ok, v = pcall(T.input_responder, opts.prompt or '', opts, on_confirm)
  if not ok then
    T.unexpected = tostring(v)
    on_confirm(nil)
    return
  end
  if v == T.ASYNC then
    return
  end
  rec.answer = v
  deliver(function()
    on_confirm(v ~= T.CANCEL and v or nil)
  end)
end

--- The inputs whose prompt contains `text`.
function T.inputs_with(text)
  return vim.tbl_filter(function(r)
    return tostring(r.prompt):find(text, 1, true) ~= nil
  end, T.inputs)
end

--- A responder that answers by prompt: `answers` maps a text the prompt contains to an answer, or
--- to a list of answers used in turn (the last one repeats). For vim.ui.input an answer is the text
--- (or T.CANCEL, T.ASYNC, or a function(opts) returning one); for vim.ui.select it is the start of
--- the label to pick (or 0 to dismiss, or 'async').
function T.by_prompt(answers, is_select)
  local used = {}
  return function(prompt, a2, a3)
    -- select responders get (labels, items, opts, on_choice); input responders (prompt, opts, cb).
    local labels, opts = nil, a2
    if is_select then
      labels, opts = prompt, a3
      prompt = opts.prompt or ''
    end
    for key, v in pairs(answers) do
      if prompt:find(key, 1, true) then
        if type(v) == 'table' and v ~= T.CANCEL and v ~= T.ASYNC then
          used[key] = math.min((used[key] or 0) + 1, #v)
          v = v[used[key]]
        end
        if type(v) == 'function' then
          v = v(opts)
        end
        if not is_select or v == 0 or v == 'async' then
          return v
        end
        return T.pick(v)(labels)
      end
    end
    error(('no answer for prompt %q'):format(prompt))
  end
end

--- The selects of one kind recorded in this case.
function T.selects_of(kind)
  return vim.tbl_filter(function(s)
    return s.kind == kind
  end, T.selects)
end

function T.notes_text()
  local lines = {}
  for _, n in ipairs(T.notes) do
    table.insert(lines, n.msg)
  end
  return table.concat(lines, '\n')
end

-- Per-case environment --------------------------------------------------------------------------

T.root = assert(os.getenv('SWITCHBOARD_TEST_TMP'), 'SWITCHBOARD_TEST_TMP not set')
T.bin = assert(os.getenv('SWITCHBOARD_BIN'), 'SWITCHBOARD_BIN not set')
T.mcptest = assert(os.getenv('SWITCHBOARD_MCPTEST'), 'SWITCHBOARD_MCPTEST not set')
T.plugin_dir = assert(os.getenv('SWITCHBOARD_PLUGIN_DIR'), 'SWITCHBOARD_PLUGIN_DIR not set')
assert(vim.fn.exepath('switchboard') == T.bin, 'switchboard on $PATH is not ' .. T.bin)

local function reset_modules()
  for k in pairs(package.loaded) do
    if k == 'switchboard' or k:match('^switchboard%.') then
      package.loaded[k] = nil
    end
  end
end

--- Every client not stopped, by id: also those still initializing (0.7 lists them nowhere else).
function T.all_clients(name)
  local list = {}
  for id = 1, 1000 do
    local c = vim.lsp.get_client_by_id(id)
    local stopped = false
    if c and vim.fn.has('nvim-0.11') == 1 then
      stopped = c:is_stopped()
    elseif c then
      stopped = c.is_stopped()
    end
    if c and not stopped and (name == nil or c.name == name) then
      table.insert(list, c)
    end
  end
  return list
end

local function stop_clients()
  local clients = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  vim.list_extend(clients, T.all_clients())
  for _, c in ipairs(clients) do
    if vim.fn.has('nvim-0.11') == 1 then
      c:stop(true)
    else
      c.stop(true)
    end
  end
  -- A loaded machine can take seconds to end a host: the next case must not see it.
  vim.wait(15000, function()
    local left = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
    return #left == 0 and #T.all_clients() == 0
  end, 20)
end

local function before(i)
  T.dir = ('%s/case%02d'):format(T.root, i)
  vim.fn.mkdir(T.dir .. '/work', 'p')
  vim.fn.mkdir(T.dir .. '/config/switchboard', 'p')
  T.config_dir = T.dir .. '/config/switchboard'
  T.allow_file = T.config_dir .. '/allow_tool'
  T.events_file = T.dir .. '/events.jsonl'
  vim.env.XDG_CONFIG_HOME = T.dir .. '/config'
  vim.env.XDG_STATE_HOME = T.dir .. '/state'
  vim.env.SWITCHBOARD_EVENTS = T.events_file
  vim.cmd('silent! %bwipeout!')
  vim.cmd('cd ' .. vim.fn.fnameescape(T.dir .. '/work'))
  T.notes, T.selects, T.deprecations, T.responders, T.unexpected = {}, {}, {}, {}, nil
  T.inputs, T.input_responder, T.ui_async = {}, nil, false
  reset_modules()
end

local function after()
  stop_clients()
  pcall(vim.api.nvim_del_augroup_by_name, 'switchboard')
  vim.cmd('silent! tabonly!')
  vim.cmd('silent! only!')
  vim.cmd('silent! %bwipeout!')
end

-- Fixtures -------------------------------------------------------------------------------------

--- Options for setup(): the real binary and mcptest as server "demo".
function T.opts(extra)
  -- cmd stays the default { 'switchboard', 'serve' }: run.sh puts the binary first on $PATH.
  return vim.tbl_deep_extend('force', {
    servers = { demo = { command = T.mcptest } },
    approvalTimeoutSeconds = 60,
  }, extra or {})
end

--- Opens a file in the case's workspace, runs setup(opts), waits until the client is initialized
--- and attached, and (unless opts.wait_ready == false) until every server has left "starting".
function T.start(extra, wait_ready)
  local file = T.dir .. '/work/a.txt'
  T.write(file, 'hello\nworld\n')
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local sb = require('switchboard')
  sb.setup(T.opts(extra))
  T.wait('client initialized', function()
    local c = sb.client()
    return c and c.initialized ~= false and c.server_capabilities ~= nil
  end)
  local c = sb.client()
  T.wait('buffer attached', function()
    return vim.lsp.buf_is_attached(0, c.id)
  end)
  if wait_ready ~= false then
    local want = vim.tbl_keys(T.opts(extra).servers or {})
    T.wait_servers(function(list)
      for _, name in ipairs(want) do
        local s = T.server(list, name)
        if not s or s.state == 'starting' then
          return false
        end
      end
      return true
    end, 'servers ' .. table.concat(want, ', ') .. ' started')
  end
  return sb, c
end

--- Waits until the host's server list satisfies pred (asking switchboard.servers).
function T.wait_servers(pred, what)
  local commands = require('switchboard.commands')
  local last
  T.wait(what or 'servers', function()
    local list = commands.exec_sync(require('switchboard.protocol').cmd.servers, nil, 2000)
    last = list
    return type(list) == 'table' and pred(list)
  end, nil, 50)
  return last
end

function T.server(list, name)
  for _, s in ipairs(list or {}) do
    if s.name == name then
      return s
    end
  end
end

--- Calls a host command and waits for its answer: result, err.
function T.exec(command, arg, ms)
  local done, res, err = false, nil, nil
  require('switchboard.commands').exec(command, arg, function(e, r)
    done, res, err = true, r, e
  end)
  T.wait('reply to ' .. command, function()
    return done
  end, ms)
  return res, err
end

-- Running ---------------------------------------------------------------------------------------

function T.run_one(i, c)
  before(i)
  local start = uv.hrtime()
  local ok, err = xpcall(c.fn, debug.traceback)
  if T.unexpected then
    err = (ok and '' or (tostring(err) .. '\n')) .. 'picker: ' .. T.unexpected
    ok = false
  end
  if ok and #T.deprecations > 0 then
    ok, err = false, 'deprecated API used: ' .. T.deprecations[1]
  end
  local ms = (uv.hrtime() - start) / 1e6
  if ok then
    T.log('ok %d - %s (%.0f ms)', i, c.name, ms)
  else
    T.log('not ok %d - %s (%.0f ms)', i, c.name, ms)
    for line in tostring(err):gmatch('[^\n]+') do
      T.log('    %s', line)
    end
    if #T.notes > 0 then
      T.log('    notifications:')
      for _, n in ipairs(T.notes) do
        T.log('      [%s] %s', tostring(n.level), (n.msg:gsub('\n', ' | ')))
      end
    end
    local ev = T.read(T.events_file or '')
    if ev and os.getenv('SWITCHBOARD_TEST_VERBOSE') then
      local lines = vim.split(ev, '\n', { plain = true })
      T.log('    events file (last 40 lines):')
      for k = math.max(1, #lines - 40), #lines do
        T.log('      %s', lines[k])
      end
    end
  end
  local ok2, err2 = pcall(after)
  if not ok2 then
    T.log('    cleanup failed: %s', tostring(err2))
  end
  return ok
end

function T.run()
  local orig_select, orig_input, orig_notify, orig_deprecate = vim.ui.select, vim.ui.input, vim.notify, vim.deprecate
  vim.ui.select = stub_select
  vim.ui.input = stub_input
  vim.notify = function(msg, level)
    table.insert(T.notes, { msg = tostring(msg), level = level })
  end
  vim.deprecate = function(name, alt, ver, plugin, bt)
    table.insert(T.deprecations, ('%s (use %s), from:\n%s'):format(name, tostring(alt), debug.traceback('', 2)))
    return orig_deprecate(name, alt, ver, plugin, bt)
  end

  local filter = os.getenv('SWITCHBOARD_TEST_FILTER')
  local passed, failed, skipped = 0, 0, 0
  local t0 = uv.hrtime()
  for i, c in ipairs(T.cases) do
    if not filter or filter == '' or c.name:find(filter, 1, true) or (filter:find("|", 1, true) and vim.tbl_contains(vim.split(filter, "|", { plain = true }), c.name)) then
      if c.opts.skip and c.opts.skip() then
        skipped = skipped + 1
        T.log('skip %d - %s', i, c.name)
      elseif T.run_one(i, c) then
        passed = passed + 1
      else
        failed = failed + 1
      end
    end
  end
  vim.ui.select, vim.ui.input, vim.notify, vim.deprecate = orig_select, orig_input, orig_notify, orig_deprecate
  local v = vim.version()
  T.log('# nvim %d.%d.%d, %.1f s', v.major, v.minor, v.patch, (uv.hrtime() - t0) / 1e9)
  T.log('%d passed, %d failed%s', passed, failed, skipped > 0 and (', %d skipped'):format(skipped) or '')
  if failed > 0 or passed == 0 then
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

return T
