-- Switchboard for Neovim: starts `switchboard serve` as a language server and exposes what it
-- offers (commands, approvals, chat, status). require('switchboard').setup(opts) from 0.7 on;
-- on 0.11+ vim.lsp.enable('switchboard') with lsp/switchboard.lua works too.
local compat = require('switchboard.compat')
local config = require('switchboard.config')
local protocol = require('switchboard.protocol')

local M = {}

M.name = 'switchboard'

-- What the host last told us, per client id: servers = ServerStatus[].
-- servers_seq counts each client's serversChanged notifications (see servers_answer).
M.state = { servers = {}, version = {}, servers_seq = {} }

local augroup

local function fire(pattern)
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = pattern, modeline = false })
  -- redrawstatus! : every window's statusline, not only the current one.
  pcall(vim.cmd, 'redrawstatus!')
end
M._fire = fire

--- Handlers for every switchboard notification and for window/showMessageRequest.
function M.handlers()
  return {
    ['$/progress'] = function(err, result, ctx, cfg)
      return require('switchboard.progress').handler(err, result, ctx, cfg)
    end,
    ['window/showMessage'] = function(err, params, ctx, cfg)
      if require('switchboard.notices').show_message(params, ctx) then
        return vim.NIL
      end
      return vim.lsp.handlers['window/showMessage'](err, params, ctx, cfg)
    end,
    ['window/showMessageRequest'] = function(err, params, ctx, cfg)
      return require('switchboard.confirm').show_message_request(err, params, ctx, cfg)
    end,
    -- A sign-in page (external): vim.ui.open where it exists (0.10+); else success=false and the
    -- host prints the URL as a message.
    ['window/showDocument'] = function(err, params, ctx, cfg)
      if params and params.external then
        if vim.ui and vim.ui.open then
          local ok, obj = pcall(vim.ui.open, params.uri)
          return { success = ok and obj ~= nil }
        end
        return { success = false }
      end
      return vim.lsp.handlers['window/showDocument'](err, params, ctx, cfg)
    end,
    [protocol.notify.servers_changed] = function(_, params, ctx)
      local id = ctx and ctx.client_id
      if id then
        M.state.servers_seq[id] = (M.state.servers_seq[id] or 0) + 1
      end
      M._set_servers(id, params and params.servers)
    end,
    [protocol.notify.approval_requested] = function(_, params, ctx)
      require('switchboard.approvals').requested(params, ctx and ctx.client_id)
      fire('SwitchboardApproval')
    end,
    [protocol.notify.approval_resolved] = function(_, params, ctx)
      require('switchboard.approvals').resolved(params, ctx and ctx.client_id)
      fire('SwitchboardApproval')
    end,
    [protocol.notify.event] = function(_, params, ctx)
      require('switchboard.chat').on_event(params, ctx and ctx.client_id)
    end,
    [protocol.notify.elicitation_requested] = function(_, params, ctx)
      require('switchboard.elicitation').requested(params, ctx and ctx.client_id)
    end,
    [protocol.notify.elicitation_resolved] = function(_, params, ctx)
      require('switchboard.elicitation').resolved(params, ctx and ctx.client_id)
    end,
    [protocol.notify.pins_changed] = function(_, params)
      require('switchboard.pins').changed(params)
    end,
    [protocol.notify.resources_changed] = function(_, params)
      require('switchboard.resources').on_changed(params)
    end,
    [protocol.notify.input_requested] = function(_, params, ctx)
      require('switchboard.inputs').requested(params, ctx and ctx.client_id)
    end,
    [protocol.notify.input_resolved] = function() end,
    -- A view's message that the person sent started a chat turn (MCP Apps ui/message).
    [protocol.notify.view_message] = function(_, params)
      require('switchboard.chat').on_view_message(params)
    end,
    -- Show result, chosen on the host's notice that a task ended (capability taskResults).
    [protocol.notify.show_task_result] = function(_, params)
      if type(params) == 'table' and type(params.id) == 'string' then
        vim.schedule(function()
          require('switchboard.tasks').show(params)
        end)
      end
    end,
  }
end

function M._set_servers(client_id, servers)
  if client_id then
    M.state.servers[client_id] = servers or {}
  end
  fire('SwitchboardServers')
end

--- Returns a function that takes the answer to a switchboard.servers request sent now and caches
--- it, unless a serversChanged notification arrived meanwhile: the host may have listed the
--- servers before a change it then announced, so the notification is the newer of the two (every
--- change is announced, so the cache never stays behind).
function M.servers_answer(client_id)
  local seq = M.state.servers_seq[client_id] or 0
  return function(servers)
    if (M.state.servers_seq[client_id] or 0) == seq then
      M._set_servers(client_id, servers)
    end
  end
end

--- The host's servers as last reported (any running client).
function M.servers()
  local c = M.client()
  return c and M.state.servers[c.id] or {}
end

function M._on_init(client, result)
  local info = result and result.serverInfo
  M.state.version[client.id] = info and info.version
  -- Fill the caches; later changes arrive as notifications.
  vim.schedule(function()
    local commands = require('switchboard.commands')
    local answer = M.servers_answer(client.id)
    commands.exec(protocol.cmd.servers, nil, function(err, servers)
      if not err and type(servers) == 'table' then
        answer(servers)
      end
    end, client)
    commands.exec(protocol.cmd.approvals, nil, function(err, list)
      if not err and type(list) == 'table' then
        require('switchboard.approvals').sync(list, client.id)
      end
    end, client)
    commands.exec(protocol.cmd.elicitations, nil, function(err, list)
      if not err and type(list) == 'table' then
        require('switchboard.elicitation').sync(list, client.id)
      end
    end, client)
  end)
end

function M._on_exit(_, _, client_id)
  vim.schedule(function()
    M.state.servers[client_id] = nil
    M.state.servers_seq[client_id] = nil
    require('switchboard.approvals').clear(client_id)
    require('switchboard.elicitation').clear(client_id)
    require('switchboard.progress').clear(client_id)
    fire('SwitchboardServers')
  end)
end

local function root_dir(bufnr)
  local r = config.options.root_dir
  if type(r) == 'function' then
    r = r(bufnr)
  end
  return r or vim.fn.getcwd()
end

--- The vim.lsp client config for `opts` (the current options by default).
function M.client_config(opts)
  local o = opts or config.options
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.window = capabilities.window or {}
  capabilities.window.workDoneProgress = true
  -- MCP elicitation forms are shown here (switchboard/elicitationRequested), not as prompts;
  -- a big tool result's text comes once, in `text` (the plugin never reads `content`).
  capabilities.experimental = capabilities.experimental or {}
  capabilities.experimental.switchboard = { elicitation = true, pinReview = true, inputs = true, textOnce = true, taskResults = true, viewMessages = true }
  local init = config.init_options(o)
  return {
    name = M.name,
    cmd = config.resolve_cmd(o.cmd),
    cmd_env = o.cmd_env,
    root_dir = root_dir(),
    init_options = init,
    settings = { switchboard = init },
    capabilities = capabilities,
    handlers = M.handlers(),
    on_init = M._on_init,
    on_exit = M._on_exit,
  }
end

local function is_file_buffer(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return false
  end
  if vim.api.nvim_buf_get_name(bufnr) == '' then
    return false
  end
  local fts = config.options.filetypes
  return fts == nil or vim.tbl_contains(fts, vim.bo[bufnr].filetype)
end

-- The hosts this plugin started, by workspace root: root -> client id. Neovim 0.7 lists a client
-- that is still initializing in neither get_active_clients() nor vim.lsp.start (0.8+), so without
-- this every BufReadPost / FileType of the first second started another host.
M._hosts = {}

local function live(id)
  local c = id and compat.get_client_by_id(id)
  if c and c.name == M.name and not compat.is_stopped(c) then
    return c
  end
end

-- The host started for `root`, also while it initializes.
local function host_for(root)
  local c = live(M._hosts[root])
  if not c then
    M._hosts[root] = nil
  end
  return c
end

--- The running switchboard client, if any: the host of the current buffer's workspace root first.
--- (A host still initializing counts from 0.8 on; on 0.7 only once it is initialized, as before.)
function M.client()
  local usable = function(c)
    return c and (compat.has('0.8') or c.initialized) and c or nil
  end
  local c = usable(host_for(root_dir(vim.api.nvim_get_current_buf())))
  if c then
    return c
  end
  for root in pairs(M._hosts) do
    c = usable(host_for(root))
    if c then
      return c
    end
  end
  for _, x in ipairs(compat.get_clients(M.name)) do
    if not compat.is_stopped(x) then
      return x
    end
  end
end

--- Starts the host for the buffer's workspace root unless one runs (or is starting), and attaches
--- `bufnr` (when it is a file buffer). Returns the client id.
function M.start(bufnr)
  if bufnr and not is_file_buffer(bufnr) then
    bufnr = nil
  end
  local root = root_dir(bufnr or vim.api.nvim_get_current_buf())
  local c = host_for(root)
  if not c then
    for _, x in ipairs(compat.get_clients(M.name)) do
      if not compat.is_stopped(x) and (x.config.root_dir == nil or x.config.root_dir == root) then
        c = x -- started outside setup() (vim.lsp.enable)
        break
      end
    end
  end
  if c then
    if bufnr then
      compat.attach(bufnr, c.id)
    end
    return c.id
  end
  local cfg = M.client_config()
  cfg.root_dir = root
  local id = compat.start(cfg, bufnr)
  if id then
    M._hosts[root] = id
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if b ~= bufnr and vim.api.nvim_buf_is_loaded(b) and is_file_buffer(b) and root_dir(b) == root then
        compat.attach(b, id)
      end
    end
  end
  return id
end

--- Stops every switchboard client.
function M.stop(force)
  for _, c in ipairs(compat.get_clients(M.name)) do
    compat.stop(c, force)
  end
end

--- Stops the host and starts a new one (new options, new binary).
function M.restart()
  local old = M.client()
  M.stop()
  if old then
    vim.wait(3000, function()
      return compat.is_stopped(old)
    end, 20)
  end
  return M.start(vim.api.nvim_get_current_buf())
end

--- Changes options at run time; the host gets workspace/didChangeConfiguration (servers added,
--- removed or restarted; mode, provider...). A changed `cmd` needs M.restart().
function M.update(opts)
  local o = config.update(opts)
  local settings = { switchboard = config.init_options(o) }
  for _, c in ipairs(compat.get_clients(M.name)) do
    c.config.settings = settings
    compat.notify(c, 'workspace/didChangeConfiguration', { settings = settings })
  end
end

--- setup(opts): see :help switchboard-setup.
function M.setup(opts)
  config.set(opts)
  -- Called again while the host runs (a reloaded config): the host gets the new settings.
  if M.client() then
    M.update({})
  end
  augroup = vim.api.nvim_create_augroup('switchboard', { clear = true })
  if config.options.autostart then
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'FileType' }, {
      group = augroup,
      callback = function(ev)
        if is_file_buffer(ev.buf) then
          M.start(ev.buf)
        end
      end,
    })
    M.start(vim.api.nvim_get_current_buf())
  end
  return M
end

function M.statusline()
  return require('switchboard.status').statusline()
end

return M
