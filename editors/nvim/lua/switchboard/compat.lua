-- Every difference between Neovim 0.7 and 0.12 that the plugin relies on, in one place.
-- Nothing else in the plugin calls a version-dependent vim.lsp / vim.health API directly.
local M = {}

local function has(v)
  return vim.fn.has('nvim-' .. v) == 1
end
M.has = has

M.uv = vim.uv or vim.loop

-- 0.11 made client methods take `self` (client:request); the dot form is deprecated there.
local method_call = has('0.11')

--- All running clients, optionally only those with `name`.
function M.get_clients(name)
  local all
  if vim.lsp.get_clients then
    all = vim.lsp.get_clients(name and { name = name } or nil)
  else
    all = vim.lsp.get_active_clients()
  end
  if not name then
    return all
  end
  local out = {}
  for _, c in ipairs(all) do
    if c.name == name then
      table.insert(out, c)
    end
  end
  return out
end

function M.get_client_by_id(id)
  return vim.lsp.get_client_by_id(id)
end

function M.is_stopped(client)
  if method_call then
    return client:is_stopped()
  end
  return client.is_stopped()
end

function M.request(client, method, params, handler, bufnr)
  if method_call then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.request_sync(client, method, params, timeout_ms, bufnr)
  if method_call then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

function M.notify(client, method, params)
  if method_call then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.stop(client, force)
  if method_call then
    return client:stop(force)
  end
  return client.stop(force)
end

function M.offset_encoding(client)
  return client.offset_encoding or 'utf-16'
end

--- Starts a client for `config`, attached to `bufnr` when given (a real file buffer), else
--- detached. Returns the client id or nil.
function M.start(config, bufnr)
  -- Reuse only a live client: one that is stopping stays listed until it exits.
  local function reuse(client, cfg)
    return client.name == cfg.name and client.config.root_dir == cfg.root_dir and not M.is_stopped(client)
  end
  if bufnr and vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr, reuse_client = reuse })
  end
  if not bufnr and has('0.11') then
    return vim.lsp.start(config, { attach = false, reuse_client = reuse })
  end
  local id = vim.lsp.start_client(config)
  if id and bufnr then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

function M.attach(bufnr, client_id)
  if vim.lsp.buf_is_attached(bufnr, client_id) then
    return true
  end
  return vim.lsp.buf_attach_client(bufnr, client_id)
end

--- True when the LSP layer calls server-request handlers inside a coroutine that may yield
--- (0.10+). On 0.7 a handler must return its answer at once.
function M.in_yieldable_coroutine()
  local co, is_main = coroutine.running()
  return co ~= nil and not is_main
end

--- vim.ui.input that tells an empty answer ('') from a cancelled one (nil). Before 0.10 the
--- built-in vim.ui.input reports both as nil, so there we call input() ourselves (with
--- cancelreturn); a replacement vim.ui.input (dressing, snacks...) is always used as it is.
local function builtin_ui(fn)
  local ok, info = pcall(debug.getinfo, fn, 'S')
  return ok and type(info) == 'table' and type(info.source) == 'string' and info.source:find('vim[/\\]ui%.lua$') ~= nil
end

function M.input(opts, on_confirm)
  if has('0.10') or not builtin_ui(vim.ui.input) then
    return vim.ui.input(opts, on_confirm)
  end
  local cancelled = '\27switchboard: cancelled\27'
  local ok, text = pcall(vim.fn.input, { prompt = opts.prompt, default = opts.default, cancelreturn = cancelled })
  if not ok or text == cancelled then
    on_confirm(nil)
  else
    on_confirm(text)
  end
end

function M.make_range_params(winid, client)
  return vim.lsp.util.make_range_params(winid or 0, M.offset_encoding(client))
end

function M.json_decode(s)
  if vim.json and vim.json.decode then
    return vim.json.decode(s)
  end
  return vim.fn.json_decode(s)
end

function M.json_encode(v)
  if vim.json and vim.json.encode then
    return vim.json.encode(v)
  end
  return vim.fn.json_encode(v)
end

function M.log_path()
  return require('vim.lsp.log').get_filename()
end

-- :checkhealth. 0.10+: vim.health.start/ok/...; 0.8-0.9: vim.health.report_*; 0.7: health#report_*.
M.health = {}
for _, kind in ipairs({ 'start', 'ok', 'warn', 'error', 'info' }) do
  M.health[kind] = function(msg, advice)
    local h = vim.health
    if h and h[kind] and has('0.10') then
      return h[kind](msg, advice)
    end
    if h and h['report_' .. kind] then
      return h['report_' .. kind](msg, advice)
    end
    if advice ~= nil and (kind == 'warn' or kind == 'error') then
      return vim.fn['health#report_' .. kind](msg, type(advice) == 'table' and advice or { advice })
    end
    return vim.fn['health#report_' .. kind](msg)
  end
end

return M
