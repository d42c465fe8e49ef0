-- The one queue of pending questions (switchboard.pending), used by approvals and elicitations.
-- No host needed.
local T = require('harness')

T.case('pending queue: keyed by client and id, oldest first, resolved once, dismissed but pending', function()
  local Q = require('switchboard.pending').new()
  local a1, new = Q:add('a1', { n = 1 }, 1)
  T.ok(a1 and new, 'a1 added')
  T.ok(select(2, Q:add('a1', { n = 9 }, 1)) == false, 'a1 again is not new')
  Q:add('e2', { n = 2 }, 1)
  Q:add('a1', { n = 3 }, 2) -- a restarted host counts from the start again
  T.eq(vim.tbl_map(function(x) return x.n end, Q:items()), { 1, 2, 3 }, 'oldest first')
  T.eq(Q:entry('a1').item.n, 1, 'without a client: the oldest with that id')
  T.eq(Q:entry('a1', 2).item.n, 3, 'with a client: its own')

  T.ok(Q:dismiss(a1, true), 'dismissed')
  T.ok(not Q:dismiss(a1, true), 'dismissed once')
  T.eq(#Q:dismissed(), 1, 'one dismissed, still pending')
  T.eq(Q:count(), 3, 'dismissed questions stay pending')

  T.eq(Q:resolve('a1', 1, { by = 'user' }).item.n, 1, 'resolve returns the pending entry')
  T.eq(Q:resolve('a1', 1, { by = 'timeout' }), nil, 'resolved once: nothing pending the second time')
  T.eq(Q:add('a1', { n = 4 }, 1), nil, 'a late request after the resolution is ignored')
  T.eq(Q:resolutions(1), { { by = 'timeout' } }, 'the resolutions of client 1')
  T.eq(Q:resolutions(2), {}, 'client 2 resolved nothing')
  T.eq(#Q:dismissed(), 0, 'the dismissed mark ends with the question')
  T.ok(not Q:dismiss(a1, true), 'an ended question cannot be dismissed')

  local dropped = Q:sync({ { id = 'e5', item = { n = 5 } } }, 1)
  T.eq(#dropped, 1, 'sync drops what the host no longer has')
  T.eq(dropped[1].id, 'e2', 'e2 dropped')
  T.eq(vim.tbl_map(function(x) return x.n end, Q:items()), { 3, 5 }, 'client 2 untouched, e5 added')
  T.eq(#Q:clear(2), 1, 'clear one client')
  Q:clear()
  T.eq(Q:count(), 0, 'clear all')
  T.ok(Q:add('a1', { n = 6 }, 1) ~= nil, 'after clear, ids are fresh again')
end)

-- Two hosts (one per root) both count their approvals from a1: a prompt's answer, its skip and its
-- dismissal go to the approval of the host that asked, never to another's a1.
T.case('a prompt names its approval within the host that asked', function()
  local approvals = require('switchboard.approvals')
  approvals.clear()
  approvals.requested({ id = 'a1', tool = 'mcp__github__delete_repo' }, 101)
  approvals.requested({ id = 'a1', tool = 'mcp__notes__list' }, 202)
  local prompt = { message = 'Allow mcp__notes__list? {}', switchboard = { approval = 'a1' } }
  T.eq((approvals.find_for_prompt(prompt, 202) or {}).tool, 'mcp__notes__list', 'the prompt of host 202')
  T.eq((approvals.find_for_prompt(prompt, 101) or {}).tool, 'mcp__github__delete_repo', 'the prompt of host 101')
  T.eq(approvals.find_for_prompt({ message = prompt.message }, 202), nil, 'a prompt without an id is never guessed')
  approvals.resolved({ id = 'a1', decision = 'deny', by = 'user' }, 101)
  T.ok(approvals.resolved_for_prompt(prompt, 101), 'resolved in host 101')
  T.ok(not approvals.resolved_for_prompt(prompt, 202), 'still pending in host 202')
  T.ok(approvals.dismiss(approvals.find_for_prompt(prompt, 202), 202), 'dismissed in host 202')
  T.eq(vim.tbl_map(function(a) return a.tool end, approvals.dismissed()), { 'mcp__notes__list' }, 'dismissed')
  -- A late answer for a host that stopped answers nothing (and never the current buffer's host).
  local sent = {}
  local commands = require('switchboard.commands')
  local orig = commands.exec
  commands.exec = function(command, arg)
    table.insert(sent, { command, arg })
  end
  require('switchboard.confirm')._late_answer(prompt, { title = 'Allow tool' }, 999999)
  commands.exec = orig
  T.eq(sent, {}, 'commands sent for a stopped host')
  approvals.clear()
end)
