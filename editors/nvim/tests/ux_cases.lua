-- The plugin as a user meets it: one host per root, reminders for dismissed approvals, trust that
-- can be changed, progress, the statusline, the tools warning, the chat buffer.
local T = require('harness')

local function protocol()
  return require('switchboard.protocol')
end

local function initialize_count()
  local n = 0
  for _, e in ipairs(T.events()) do
    if e.kind == 'lifecycle' and e.event == 'initialize' then
      n = n + 1
    end
  end
  return n
end

-- Opens a real file (filetype detection on, as in a user's config) and checks that exactly one
-- host runs, also while it initializes, and after a second file is opened during that time.
local function one_host_case(setup_first)
  return function()
    vim.cmd('filetype on')
    local a, b = T.dir .. '/work/a.lua', T.dir .. '/work/b.lua'
    T.write(a, 'return 1\n')
    T.write(b, 'return 2\n')
    local sb = require('switchboard')
    if setup_first then
      sb.setup(T.opts())
      vim.cmd('edit ' .. vim.fn.fnameescape(a))
    else
      vim.cmd('edit ' .. vim.fn.fnameescape(a))
      sb.setup(T.opts())
    end
    T.eq(vim.bo.filetype, 'lua', 'FileType fired')
    vim.cmd('edit ' .. vim.fn.fnameescape(b))
    T.eq(#T.all_clients('switchboard'), 1, 'hosts started while the first initializes')
    T.wait('client initialized', function()
      local c = sb.client()
      return c and c.initialized and vim.lsp.buf_is_attached(0, c.id)
    end)
    local c = sb.client()
    vim.cmd('buffer ' .. vim.fn.bufnr(a))
    T.ok(vim.lsp.buf_is_attached(0, c.id), 'the first file is attached too')
    T.wait_servers(function(l)
      local d = T.server(l, 'demo')
      return d and d.state == 'ready'
    end)
    T.eq(#T.all_clients('switchboard'), 1, 'hosts')
    T.eq(initialize_count(), 1, 'initialize requests the host received')
    vim.cmd('filetype off')
  end
end

T.case('one host: setup() in init.lua before any file, then files open (FileType on)', one_host_case(true))
T.case('one host: a file open first, then setup()', one_host_case(false))

return T
