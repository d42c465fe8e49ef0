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

local function json_file(path, what)
  if not readable(path, what, true) then
    return
  end
  local ok, err = pcall(function()
    compat.json_decode(table.concat(vim.fn.readfile(path), '\n'))
  end)
  if not ok then
    h.error(what .. ' is not valid JSON: ' .. tostring(err))
  end
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
  local cmd = config.options.cmd or {}
  local exe = cmd[1]
  if not exe or vim.fn.executable(exe) ~= 1 then
    h.error(('%s not found on $PATH'):format(tostring(exe)), {
      'Build it: go build -o ~/.local/bin/switchboard ./cmd/switchboard',
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
  json_file(dir .. '/mcp.json', 'MCP servers file')
  json_file(dir .. '/config.json', 'settings file')
  local allow = dir .. '/allow_tool'
  local client = sb.client()
  if client then
    local res = require('switchboard.commands').exec_sync(require('switchboard.protocol').cmd.allowlist_get, nil, 2000, client)
    if res and res.path then
      allow = res.path
    end
  end
  readable(allow, 'allowlist', true)
  for _, f in ipairs(config.options.configFiles or {}) do
    json_file(f, 'config file')
  end

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
