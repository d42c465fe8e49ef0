-- Options: defaults, the user's setup(opts), and their mapping to initializationOptions.
local M = {}

M.defaults = {
  -- How to start the host. The first word must be an executable on $PATH or an absolute path.
  -- With the default 'switchboard', a binary built into the plugin folder (bin/switchboard, the
  -- lazy.nvim build step) is used before $PATH.
  cmd = { 'switchboard', 'serve' },
  -- Extra environment for the host process.
  cmd_env = nil,
  -- initializationOptions (PROTOCOL.md section 1); nil = the host's default.
  servers = nil, -- { name = { command=..., args={...}, env={...}, ... } }
  mode = nil, -- 'single-confirm' | 'always-allow' | 'allowlist-only'
  approvalTimeoutSeconds = nil,
  provider = nil, -- { type='openai'|'anthropic'|'openai-compatible'|'script', model=..., ... }
  configFiles = nil, -- { '/abs/path/mcp.json' }
  toolSearchThreshold = nil, -- above this many tools the model searches for tools (host default 40; < 0 = never)
  alwaysLoadedTools = nil, -- { 'mcp__github__*' }: always sent to the model when tool search is on
  daemonIdleSeconds = nil, -- seconds the shared-server daemon stays after the last window (host default 60)
  -- Start the host on setup() and attach it to every file buffer.
  autostart = true,
  -- Attach only to these filetypes (nil = every buffer that is a file).
  filetypes = nil,
  -- Workspace root: a function(bufnr) -> path, or nil for the current directory.
  root_dir = nil,
  chat = {
    -- How the chat window opens: 'vsplit', 'split', 'tab' or 'current'.
    layout = 'vsplit',
    keys = { send = '<CR>', cancel = '<C-c>', close = 'q' },
  },
  -- Tell the user (vim.notify) when an approval could not be shown in a picker and waits.
  notify_pending = true,
  -- While a dismissed approval is pending, remind every this many seconds with one line in the
  -- command area (Normal mode only; 0 = never).
  remind_seconds = 30,
}

-- snake_case aliases accepted in setup() for the camelCase wire names.
local aliases = {
  approval_timeout_seconds = 'approvalTimeoutSeconds',
  config_files = 'configFiles',
  tool_search_threshold = 'toolSearchThreshold',
  always_loaded_tools = 'alwaysLoadedTools',
  daemon_idle_seconds = 'daemonIdleSeconds',
}

M.options = vim.deepcopy(M.defaults)

local function normalize(opts)
  opts = vim.deepcopy(opts or {})
  for snake, camel in pairs(aliases) do
    if opts[snake] ~= nil and opts[camel] == nil then
      opts[camel] = opts[snake]
    end
    opts[snake] = nil
  end
  return opts
end

-- (vim.validate's table form is deprecated from 0.11 on and the new form is missing on 0.7.)
local types = {
  cmd = 'table',
  cmd_env = 'table',
  servers = 'table',
  mode = 'string',
  approvalTimeoutSeconds = 'number',
  provider = 'table',
  configFiles = 'table',
  toolSearchThreshold = 'number',
  alwaysLoadedTools = 'table',
  daemonIdleSeconds = 'number',
  autostart = 'boolean',
  filetypes = 'table',
  chat = 'table',
  notify_pending = 'boolean',
  remind_seconds = 'number',
}

local function validate(o)
  for k, want in pairs(types) do
    local v = o[k]
    if v ~= nil and type(v) ~= want then
      error(('switchboard: option %s must be a %s, not a %s'):format(k, want, type(v)), 3)
    end
  end
  if o.root_dir ~= nil and type(o.root_dir) ~= 'string' and type(o.root_dir) ~= 'function' then
    error('switchboard: option root_dir must be a string or a function', 3)
  end
  if type(o.cmd) ~= 'table' or type(o.cmd[1]) ~= 'string' then
    error('switchboard: option cmd must be a list like { "switchboard", "serve" }', 3)
  end
  if o.mode and not vim.tbl_contains({ 'single-confirm', 'always-allow', 'allowlist-only' }, o.mode) then
    error(('switchboard: mode must be single-confirm, always-allow or allowlist-only, not %q'):format(o.mode), 3)
  end
end

function M.set(opts)
  local o = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), normalize(opts))
  validate(o)
  M.options = o
  return o
end

--- Changes the current options: each key given replaces the old value whole (so a `servers` map
--- without a server removes it); `chat` is merged.
function M.update(opts)
  local o = vim.deepcopy(M.options)
  for k, v in pairs(normalize(opts)) do
    if k == 'chat' and type(v) == 'table' then
      o.chat = vim.tbl_deep_extend('force', o.chat or {}, v)
    else
      o[k] = v
    end
  end
  validate(o)
  M.options = o
  return o
end

--- initializationOptions / settings.switchboard for the host: only the fields the user set.
function M.init_options(o)
  o = o or M.options
  local out = {}
  for _, k in ipairs({ 'servers', 'mode', 'approvalTimeoutSeconds', 'provider', 'configFiles', 'toolSearchThreshold', 'alwaysLoadedTools', 'daemonIdleSeconds' }) do
    if o[k] ~= nil then
      out[k] = vim.deepcopy(o[k])
    end
  end
  -- Maps that are empty must still be JSON objects ({} encodes as [] otherwise).
  for _, s in pairs(out.servers or {}) do
    for _, k in ipairs({ 'env', 'headers' }) do
      if type(s) == 'table' and type(s[k]) == 'table' and next(s[k]) == nil then
        s[k] = vim.empty_dict()
      end
    end
  end
  if out.servers and next(out.servers) == nil then
    out.servers = vim.empty_dict()
  end
  if next(out) == nil then
    return vim.empty_dict()
  end
  return out
end

--- The plugin folder (editors/nvim): where lua/switchboard/config.lua lies, two levels up.
function M.plugin_root()
  local src = debug.getinfo(1, 'S').source
  src = src:sub(1, 1) == '@' and src:sub(2) or src
  return vim.fn.fnamemodify(src, ':p:h:h:h')
end

--- The binary built into the plugin folder (root, default plugin_root()): bin/switchboard, or nil.
function M.bundled_binary(root)
  root = root or M.plugin_root()
  local name = vim.fn.has('win32') == 1 and 'switchboard.exe' or 'switchboard'
  local path = root .. '/bin/' .. name
  if vim.fn.executable(path) == 1 then
    return path
  end
  return nil
end

--- cmd with the default 'switchboard' replaced by the plugin folder's binary when there is one.
function M.resolve_cmd(cmd, root)
  if type(cmd) ~= 'table' or cmd[1] ~= 'switchboard' then
    return cmd
  end
  local bin = M.bundled_binary(root)
  if not bin then
    return cmd
  end
  local out = vim.deepcopy(cmd)
  out[1] = bin
  return out
end

return M
