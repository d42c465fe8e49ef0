-- Entry point of the headless suite: nvim --headless -u NONE -i NONE -c 'luafile tests/main.lua'
-- (run.sh sets the environment: SWITCHBOARD_BIN, SWITCHBOARD_MCPTEST, SWITCHBOARD_TEST_TMP,
-- SWITCHBOARD_PLUGIN_DIR).
local dir = assert(os.getenv('SWITCHBOARD_PLUGIN_DIR'), 'SWITCHBOARD_PLUGIN_DIR not set')
vim.opt.runtimepath:prepend(dir)
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.cmd('runtime plugin/switchboard.lua')
package.path = dir .. '/tests/?.lua;' .. package.path

local T = require('harness')
local ok, err = pcall(require, os.getenv('SWITCHBOARD_TEST_CASES') or 'cases')
if not ok then
  T.log('loading the cases failed: %s', tostring(err))
  T.log('0 passed, 1 failed')
  vim.cmd('cquit 1')
end
-- Let startup finish before the first case.
vim.schedule(T.run)
