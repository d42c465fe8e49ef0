-- :checkhealth switchboard
local compat = require('switchboard.compat')
local h = compat.health

local M = {}

local function readable(path, what, optional)
  if vim.fn.filereadable(path) == 1 then
    h.ok(what .. ' readable: ' .. path)
    return true
  end
  if vim.fn.filereadable(path) == 0 and compat.uv.fs_stat(path) then
    h.error(what .. ' exists but is not readable: ' .. path)
    return false
  end
  if optional then
    h.info(what .. ' not present: ' .. path)
  else
    h.warn(what .. ' not found: ' .. path)
  end
  return false
end

-- Text a config file controls, made printable (control characters as ^X) before it is shown.
local function shown(v)
  return vim.fn.strtrans(tostring(v))
end

-- The accepted keys of a server entry (host/wire/PROTOCOL.md section 1).
local entry_keys = {
  type = true, command = true, args = true, env = true, cwd = true, url = true, headers = true,
  disabled = true, startupTimeoutSeconds = true, callTimeoutSeconds = true,
  enabledTools = true, disabledTools = true,
}

--- Problems of a server name (PROTOCOL.md section 2), or nil.
function M.name_problem(name)
  if type(name) ~= 'string' or not name:match('^[A-Za-z0-9][A-Za-z0-9_-]*$') then
    return 'only letters, digits, _ and - (starting with a letter or digit)'
  elseif #name > 32 then
    return 'at most 32 characters'
  elseif name:find('__', 1, true) then
    return 'no "__" inside'
  elseif name:sub(-1) == '_' then
    return 'must not end in "_"'
  end
end

--- Checks the entries of a decoded MCP config file: each bad one is skipped by the host.
local function check_entries(path, data)
  if type(data) ~= 'table' then
    return h.error(path .. ': the top level is not a JSON object')
  end
  local servers = data.mcpServers or data.servers
  if servers == nil then
    return h.warn(path .. ': no "mcpServers" or "servers" key; it defines no server')
  end
  if type(servers) ~= 'table' then
    return h.error(path .. ': "mcpServers" / "servers" is not an object')
  end
  local n, bad = 0, 0
  for name, entry in pairs(servers) do
    n = n + 1
    local problems = {}
    local why = M.name_problem(name)
    if why then
      table.insert(problems, 'bad name (' .. why .. ')')
    end
    if type(entry) ~= 'table' then
      table.insert(problems, 'the entry is not an object')
    else
      local keys = vim.tbl_keys(entry)
      table.sort(keys)
      for _, k in ipairs(keys) do
        if not entry_keys[k] then
          table.insert(problems, ('unknown key "%s"'):format(shown(k)))
        end
      end
      if entry.command == nil and entry.url == nil then
        table.insert(problems, 'neither "command" nor "url"')
      end
    end
    if #problems > 0 then
      bad = bad + 1
      h.warn(('%s: server "%s": %s'):format(path, shown(name), table.concat(problems, '; ')),
        { 'This server is skipped; the others still start.' })
    end
  end
  if bad == 0 then
    h.ok(('%s: %d server%s'):format(path, n, n == 1 and '' or 's'))
  end
end

local function json_file(path, what, entries)
  if not readable(path, what, true) then
    return
  end
  local ok, data = pcall(function()
    return compat.json_decode(table.concat(vim.fn.readfile(path), '\n'))
  end)
  if not ok then
    h.error(what .. ' is not valid JSON: ' .. tostring(data))
  elseif entries then
    check_entries(path, data)
  end
end

local default_key_env = { openai = 'OPENAI_API_KEY', anthropic = 'ANTHROPIC_API_KEY' }

-- The model provider (chat): which one, and whether its API key is in the host's environment
-- (never the key itself).
local function check_provider(o)
  local p = o.provider
  if p == nil then
    return h.info('no provider set: the chat is unavailable (tools still work: :Switchboard call)', {
      "require('switchboard').setup({ provider = { type = 'anthropic', model = '...' } })",
    })
  end
  h.ok(('provider %s%s'):format(shown(p.type or '?'), p.model and (', model ' .. shown(p.model)) or ''))
  if p.type == 'script' then
    if not p.script or vim.fn.filereadable(p.script) ~= 1 then
      h.error('provider script not found: ' .. shown(p.script or '(none)'))
    end
    return
  end
  local env = p.apiKeyEnv or default_key_env[p.type]
  if not env then
    return h.info('no apiKeyEnv set for this provider')
  end
  local v = (o.cmd_env and o.cmd_env[env]) or os.getenv(env)
  if v and vim.trim(v) ~= '' then
    h.ok(('API key: $%s is set'):format(env))
  else
    h.warn(('API key: $%s is not set in the environment the host starts with'):format(env), {
      ('Set %s before starting Neovim, or name another variable with provider.apiKeyEnv.'):format(env),
    })
  end
end

--- The workspace root the host uses (or would use).
local function workspace_root(client)
  if client and client.config and client.config.root_dir then
    return client.config.root_dir
  end
  return vim.fn.getcwd()
end

function M.config_dir()
  local xdg = os.getenv('XDG_CONFIG_HOME')
  if not xdg or xdg == '' then
    xdg = vim.fn.expand('~/.config')
  end
  return xdg .. '/switchboard'
end

function M.check()
  local config = require('switchboard.config')
  local sb = require('switchboard')
  h.start('Neovim')
  local v = vim.version()
  local vs = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.7') == 1 then
    h.ok('Neovim ' .. vs)
  else
    h.error('Neovim ' .. vs .. ' is too old; 0.7 or newer is needed')
  end

  h.start('switchboard binary')
  local cmd = config.resolve_cmd(config.options.cmd or {})
  local exe = cmd[1]
  if not exe or vim.fn.executable(exe) ~= 1 then
    local where = '$PATH'
    if exe == 'switchboard' then
      where = config.plugin_root() .. '/bin nor on $PATH'
    end
    h.error(('%s not found on %s'):format(tostring(exe), where), {
      "lazy.nvim: add build = 'bash cmd/switchboard/build.sh editors/nvim/bin/switchboard' to the spec, then :Lazy build switchboard",
      'or: go install github.com/switchboard-dev/switchboard/cmd/switchboard@latest (puts it in $(go env GOPATH)/bin: add that to $PATH)',
      "or set require('switchboard').setup({ cmd = { '/abs/path/switchboard', 'serve' } })",
    })
  else
    local path = vim.fn.exepath(exe)
    local out = vim.fn.system({ path, '--version' })
    if vim.v.shell_error == 0 then
      h.ok(('%s: %s'):format(path, vim.trim(out)))
    else
      h.error(('%s --version failed: %s'):format(path, vim.trim(out)))
    end
  end

  h.start('configuration')
  local dir = M.config_dir()
  local client = sb.client()
  json_file(dir .. '/mcp.json', 'MCP servers file', true)
  json_file(dir .. '/config.json', 'settings file')
  local root = workspace_root(client)
  for _, rel in ipairs({ '.vscode/mcp.json', '.mcp.json', '.switchboard/mcp.json' }) do
    json_file(root .. '/' .. rel, 'workspace MCP file', true)
  end
  local allow = dir .. '/allow_tool'
  if client then
    local res = require('switchboard.commands').exec_sync(require('switchboard.protocol').cmd.allowlist_get, nil, 2000, client)
    if res and res.path then
      allow = res.path
    end
  end
  readable(allow, 'allowlist', true)
  for _, f in ipairs(config.options.configFiles or {}) do
    json_file(f, 'config file', true)
  end

  h.start('provider (chat)')
  check_provider(config.options)

  h.start('host (switchboard serve)')
  if not client then
    h.info('not running (it starts with require("switchboard").setup() or vim.lsp.enable("switchboard"))')
    return
  end
  local version = sb.state.version[client.id]
  h.ok(('running (client id %d%s)'):format(client.id, version and (', version ' .. version) or ''))
  local list, err = require('switchboard.commands').exec_sync(require('switchboard.protocol').cmd.servers, nil, 3000, client)
  if not list then
    h.error('switchboard.servers failed: ' .. require('switchboard.commands').errmsg(err))
    return
  end
  if #list == 0 then
    h.info('no MCP servers configured')
  end
  for _, s in ipairs(list) do
    local line = require('switchboard.commands').format_server(s)
    if s.state == 'ready' then
      h.ok(line)
    elseif s.state == 'failed' then
      local advice = {}
      if s.stderrTail and s.stderrTail ~= vim.NIL and s.stderrTail ~= '' then
        table.insert(advice, 'stderr: ' .. tostring(s.stderrTail):gsub('\n', ' | '))
      end
      table.insert(advice, ':Switchboard reconnect ' .. s.name)
      h.error(line, advice)
    elseif s.state == 'untrusted' then
      h.warn(line, { ':Switchboard trust ' .. s.name .. ' shows what it runs and asks whether to trust it' })
    elseif s.state == 'blocked' then
      local rule = type(s.policy) == 'table' and s.policy.rule or nil
      h.warn(line, { rule and ('rule: ' .. tostring(rule)) or 'your organisation\'s policy blocks it; ask your administrator' })
    else
      h.info(line)
    end
  end
  local n = require('switchboard.approvals').count()
  if n > 0 then
    h.warn(('%d approval%s pending'):format(n, n == 1 and '' or 's'), { ':Switchboard approve' })
  end
end

return M
