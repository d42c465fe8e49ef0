-- A config file's ${input:ID} (VS Code's "inputs") without a value: switchboard/inputRequested.
-- Asked with vim.ui.select (pickString), vim.fn.inputsecret (password: masked) or vim.ui.input,
-- and answered with switchboard.input. The value goes to the host only; it is never shown or
-- logged here.
local M = {}

--- Reads a password without echo (tests replace it).
function M.read_secret(prompt)
  local ok, v = pcall(vim.fn.inputsecret, prompt)
  if not ok then
    return nil
  end
  return v
end

local function one_line(s)
  return (tostring(s or ''):gsub('[%c]', ' '))
end

function M.requested(p, client_id)
  if type(p) ~= 'table' or type(p.id) ~= 'string' then
    return
  end
  local commands = require('switchboard.commands')
  local protocol = require('switchboard.protocol')
  local client = client_id and vim.lsp.get_client_by_id(client_id) or nil
  local function answer(value)
    local arg = { id = p.id, value = value }
    if value == nil then
      arg = { id = p.id, cancel = true }
    end
    commands.exec(protocol.cmd.input, arg, function(err)
      if err then
        vim.notify('switchboard: ' .. one_line(err.message or 'the input was not taken'), vim.log.levels.WARN)
      end
    end, client)
  end
  local prompt = one_line(p.message ~= nil and p.message or ('Input ' .. tostring(p.input))) .. ' '
  vim.schedule(function()
    if type(p.options) == 'table' and #p.options > 0 then
      vim.ui.select(p.options, { prompt = prompt, kind = 'switchboard_input' }, function(choice)
        answer(choice)
      end)
    elseif p.password then
      local v = M.read_secret(prompt)
      if v == nil or v == '' then
        answer(nil)
      else
        answer(v)
      end
    else
      vim.ui.input({ prompt = prompt }, function(v)
        answer(v)
      end)
    end
  end)
end

return M
