-- window/showMessageRequest through vim.ui.select, so telescope / dressing / snacks / fzf-lua
-- pickers show the host's approval and trust prompts.
--
-- 0.10+: server-request handlers run in a coroutine; we yield until the picker answers (any picker,
-- synchronous or not). 0.7: the handler's return value is the reply, so we can only wait for a
-- synchronous picker. An asynchronous one makes us reply null ("dismissed"); the host keeps the
-- approval pending, and the picker's later answer is sent with switchboard.approve (or the user
-- answers with :Switchboard approve or a code action).
local compat = require('switchboard.compat')
local approvals = require('switchboard.approvals')

local M = {}

-- 0.10+: prompts whose picker has not answered yet, by coroutine.
local waiting = {}

-- An approval answered elsewhere (code action, :Switchboard approve, timeout): stop waiting for its
-- picker (the prompt's params name the approval's id) and reply null (the host ignores it). Should the picker still answer, that choice goes
-- out with switchboard.approve, like a late answer on 0.7.
approvals.on_change(function(e)
  if e.type ~= 'resolved' or not e.approval or not e.approval.tool then
    return
  end
  for _, w in pairs(waiting) do
    if w.approval and w.approval == e.approval.id and w.client_id == e.client_id then
      w.release()
      return
    end
  end
end)

--- How many prompts wait for their picker (0.10+).
function M.waiting()
  return vim.tbl_count(waiting)
end

-- vim.ui.select `kind`s, so users' picker configs and tests can recognise our prompts.
M.kind_approval = 'switchboard_approval'
M.kind_trust = 'switchboard_trust'
M.kind_other = 'switchboard_message'

local function kind_of(actions)
  for _, a in ipairs(actions) do
    if approvals.decision_for_title(a.title) then
      return M.kind_approval
    end
    if a.title == 'Trust' then
      return M.kind_trust
    end
  end
  return M.kind_other
end

-- The confirm gate's own prompt: every button an approval answer (another question that happens to
-- offer a "Deny" also has buttons of its own, e.g. an elicitation's "Decline").
local function only_approval_titles(actions)
  for _, a in ipairs(actions) do
    if not approvals.decision_for_title(a.title) then
      return false
    end
  end
  return true
end

local function one_line(s)
  return (tostring(s or ''):gsub('%s*\n%s*', ' '))
end

local function select_opts(params, kind)
  return {
    prompt = one_line(params.message),
    kind = kind,
    format_item = function(a)
      return a.title
    end,
    -- Extra context for pickers that can show it; `approval` is the id of the approval asked.
    switchboard = { message = params.message, type = params.type, approval = approvals.prompt_id(params) },
  }
end

-- A choice made after we already answered null (0.7 with an asynchronous picker, or a 0.10+
-- prompt answered elsewhere first): sent with switchboard.approve / switchboard.trust.
function M._late_answer(params, choice, client_id)
  if not choice then
    return
  end
  local commands = require('switchboard.commands')
  -- The host that asked (one per root; each counts its approvals from a1).
  local client = client_id and require('switchboard.compat').get_client_by_id(client_id) or nil
  if client_id and not client then
    vim.notify('switchboard: the Switchboard that asked has stopped; nothing was answered', vim.log.levels.WARN)
    return
  end
  local trust = ({ ['Trust'] = 'trust', ["Don't trust"] = 'deny' })[choice.title]
  if trust then
    -- The server the host says the question is about, never one read out of the message (a
    -- workspace file's path can hold quotes).
    local about = type(params.switchboard) == 'table' and params.switchboard or {}
    local server = type(about.trustServer) == 'string' and about.trustServer ~= '' and about.trustServer or nil
    local fingerprint = type(about.fingerprint) == 'string' and about.fingerprint or nil
    if server then
      -- With the fingerprint of what the prompt showed: a definition changed since is refused.
      commands.trust(server, trust, function(err)
        if err then
          vim.notify('switchboard: ' .. commands.errmsg(err), vim.log.levels.WARN)
        end
      end, client, fingerprint)
    end
    return
  end
  local decision = approvals.decision_for_title(choice.title)
  if not decision then
    return
  end
  local function answer(a)
    if not a then
      vim.notify('switchboard: that approval is no longer pending', vim.log.levels.WARN)
      return
    end
    commands.approve(a.id, decision, function(err)
      if err then
        vim.notify('switchboard: ' .. (err.message or tostring(err)), vim.log.levels.WARN)
      end
    end, client)
  end
  -- The approval the prompt asked, by the id the host put in it; never one guessed from the
  -- message (a server's tool name can contain another server's).
  local a = approvals.find_for_prompt(params, client_id)
  if a or not approvals.prompt_id(params) then
    return answer(a)
  end
  commands.approvals(function(err, list)
    if not err then
      approvals.sync(list, client_id)
    end
    answer(approvals.find_for_prompt(params, client_id))
  end, client)
end

function M.show_message_request(_, params, ctx)
  params = params or {}
  local actions = params.actions or {}
  if #actions == 0 then
    vim.notify(params.message or '', vim.log.levels.INFO)
    return vim.NIL
  end
  local kind = kind_of(actions)
  -- The host sends approvalRequested before the prompt, but the prompt goes out on its own and
  -- can reach us after approvalResolved (answered first by a code action, :Switchboard approve, a
  -- timeout or a cancelled turn). Nothing would then release its picker: when no approval of its
  -- tool is pending here and one was resolved, open none and reply null (the host ignores it). A
  -- prompt whose tool has a pending approval is always shown.
  local client_id = ctx and ctx.client_id
  if
    only_approval_titles(actions)
    and not approvals.find_for_prompt(params, client_id)
    and approvals.resolved_for_prompt(params, client_id)
  then
    return vim.NIL
  end
  local opts = select_opts(params, kind)

  if compat.in_yieldable_coroutine() then
    local co = coroutine.running()
    local state = 'waiting' -- then 'answered', or 'released' (answered elsewhere)
    local function reply(v)
      waiting[co] = nil
      -- Resume from the main loop: a synchronous picker calls back before we yield.
      vim.schedule(function()
        coroutine.resume(co, v)
      end)
    end
    local function on_choice(choice)
      if state == 'waiting' then
        state = 'answered'
        if not choice and kind == M.kind_approval then
          require('switchboard.remind').dismissed(params, client_id)
        end
        reply(choice or vim.NIL)
      elseif state == 'released' then
        M._late_answer(params, choice, client_id)
      end
    end
    waiting[co] = {
      approval = approvals.prompt_id(params),
      client_id = client_id,
      release = function()
        if state == 'waiting' then
          state = 'released'
          reply(vim.NIL)
        end
      end,
    }
    local ok, err = pcall(vim.ui.select, actions, opts, on_choice)
    if not ok then
      state = 'answered'
      waiting[co] = nil
      vim.notify('switchboard: picker failed: ' .. tostring(err), vim.log.levels.ERROR)
      return vim.NIL
    end
    return coroutine.yield()
  end

  -- 0.7: answer now.
  local state, choice = 'waiting', nil
  local ok, err = pcall(vim.ui.select, actions, opts, function(c)
    if state == 'waiting' then
      state, choice = 'answered', c
    elseif state == 'replied' then
      M._late_answer(params, c, client_id)
    end
  end)
  if not ok then
    vim.notify('switchboard: picker failed: ' .. tostring(err), vim.log.levels.ERROR)
  end
  if state == 'answered' and choice then
    return choice
  end
  -- Dismissed (Esc), or an asynchronous picker that answers later: the host keeps it pending.
  state = state == 'answered' and 'done' or 'replied'
  if kind == M.kind_approval then
    vim.schedule(function()
      require('switchboard.remind').dismissed(params, client_id)
    end)
  end
  return vim.NIL
end

return M
