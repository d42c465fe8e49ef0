#!/usr/bin/env bash
# tui.sh [NVIM]: one real-terminal test. Neovim's TUI runs under tmux with its built-in
# vim.ui.select; the host's approval prompt must appear on screen, and is answered by typing
# "2 Enter" (Allow tool). Asserted through the allowlist file and the host's SWITCHBOARD_EVENTS file.
# Then an MCP elicitation form is answered with keys through Neovim's own vim.ui.select and
# vim.ui.input (an optional field left empty: skipped, not cancelled, on 0.7 too), and a second one
# is left with Escape (not an answer: it stays pending) and answered with :Switchboard elicit, the
# name typed before filled in. Last, a long call's progress shows in both windows' statuslines.
# Needs SWITCHBOARD_BIN and SWITCHBOARD_MCPTEST, and tmux.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
plugin=$(dirname "$here")
nvim=${1:-${NVIM:-nvim}}
nvim=$(command -v "$nvim")
: "${SWITCHBOARD_BIN:?}" "${SWITCHBOARD_MCPTEST:?}"
SWITCHBOARD_BIN=$(cd "$(dirname "$SWITCHBOARD_BIN")" && pwd)/$(basename "$SWITCHBOARD_BIN")
SWITCHBOARD_MCPTEST=$(cd "$(dirname "$SWITCHBOARD_MCPTEST")" && pwd)/$(basename "$SWITCHBOARD_MCPTEST")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-nvim-tui.XXXXXX")
sock="sb-nvim-tui-$$"
cleanup() {
	tmux -L "$sock" kill-server >/dev/null 2>&1 || true
	[ -n "${SWITCHBOARD_TEST_KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" \
	XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
mkdir -p "$HOME" "$XDG_CONFIG_HOME/switchboard" "$tmp/work"
export SWITCHBOARD_EVENTS="$tmp/events.jsonl" SWITCHBOARD_PLUGIN_DIR="$plugin" SWITCHBOARD_BIN SWITCHBOARD_MCPTEST
export SWITCHBOARD_TUI_FILE="$tmp/work/notes.txt" SWITCHBOARD_TUI_RESULT="$tmp/ask-result.json"
echo "some text" >"$SWITCHBOARD_TUI_FILE"
allow="$XDG_CONFIG_HOME/switchboard/allow_tool"
cd "$tmp/work"

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
not_ok() {
	fail=$((fail + 1))
	echo "not ok - $*"
	echo "--- screen:"
	tmux -L "$sock" capture-pane -p -t sb 2>/dev/null | sed 's/^/    /' || true
	[ -f "$SWITCHBOARD_EVENTS" ] && { echo "--- events:"; sed 's/^/    /' "$SWITCHBOARD_EVENTS"; }
}
screen() { tmux -L "$sock" capture-pane -p -t sb 2>/dev/null || true; }
# wait_for SECONDS CMD...: polls every 0.1 s.
wait_for() {
	local n=$(($1 * 10))
	[ -z "${gave_up:-}" ] || n=1 # after the prompt never came, do not wait for its effects
	shift
	while [ $n -gt 0 ]; do
		if "$@"; then return 0; fi
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}
screen_has() { screen | grep -qF -- "$1"; }

tmux -L "$sock" -f /dev/null new-session -d -s sb -x 120 -y 30 \
	"TERM=xterm-256color '$nvim' -u '$here/tui_init.lua' -i NONE -n"

if wait_for 20 screen_has "Allow mcp__demo__echo?"; then
	ok "the approval prompt is on screen"
else
	not_ok "the approval prompt is on screen"
	gave_up=1
fi
if screen_has "Allow tool" && screen_has "Type number"; then
	ok "its four answers are listed (Neovim's own vim.ui.select)"
else
	not_ok "its four answers are listed"
fi
[ -n "${SWITCHBOARD_TUI_SHOT:-}" ] && screen >"$SWITCHBOARD_TUI_SHOT"
tmux -L "$sock" send-keys -t sb 2 Enter

if wait_for 10 grep -sqxF "mcp__demo__echo" "$allow"; then
	ok "typing 2 Enter (Allow tool) wrote the allowlist"
else
	not_ok "typing 2 Enter wrote the allowlist"
fi
resolved() { grep '"approvalResolved"' "$SWITCHBOARD_EVENTS" 2>/dev/null | grep '"always"' | grep -q '"user"'; }
if wait_for 10 resolved; then
	ok "the host recorded approvalResolved {decision: always, by: user}"
else
	not_ok "the host recorded approvalResolved"
fi
if wait_for 10 screen_has "typed in tmux"; then
	ok "the tool result is shown"
else
	not_ok "the tool result is shown"
fi
if wait_for 5 screen_has "SB 1/1"; then
	ok "the statusline shows the server"
else
	not_ok "the statusline shows the server"
fi

# An elicitation form, field by field, with the built-in prompts.
keys() { tmux -L "$sock" send-keys -t sb "$@"; }
tmux -L "$sock" send-keys -t sb Escape ':SBAsk' Enter
if wait_for 10 screen_has "MCP server 'demo' asks: TUI question" && screen_has "Answer (3 fields)"; then
	ok "the question is on screen, naming the server"
else
	not_ok "the question is on screen"
	gave_up=1
fi
keys 1 Enter
if wait_for 10 screen_has "[demo] Name (at least 1 character):"; then
	ok "the first field is asked (input())"
else
	not_ok "the first field is asked"
fi
keys Ada Enter
if wait_for 10 screen_has "[demo] Nickname (optional, empty skips):"; then
	ok "the optional field is asked"
else
	not_ok "the optional field is asked"
fi
keys Enter
if wait_for 10 screen_has "[demo] Agree" && screen_has "1: Yes"; then
	ok "the yes/no field is asked (inputlist)"
else
	not_ok "the yes/no field is asked"
fi
keys 1 Enter
answered() { grep -sqF '{"action":"accept","content":{"agree":true,"name":"Ada"}}' "$SWITCHBOARD_TUI_RESULT"; }
if wait_for 10 answered; then
	ok "the server got the answer (the empty optional field skipped)"
else
	not_ok "the server got {agree: true, name: Ada}: $(cat "$SWITCHBOARD_TUI_RESULT" 2>/dev/null)"
fi

# Escape is not an answer: the question stays pending, and :Switchboard elicit asks it again with
# what was typed. (Enter after the notice clears its hit-enter prompt, and the screen with it.)
rm -f "$SWITCHBOARD_TUI_RESULT"
resolved_count() { grep -c '"elicitationResolved"' "$SWITCHBOARD_EVENTS" 2>/dev/null || true; }
keys Escape ':SBAsk Second TUI question' Enter
if wait_for 10 screen_has "MCP server 'demo' asks: Second TUI question" && screen_has "Cancel (don't answer)"; then
	ok "a second question, with Cancel (don't answer) among its answers"
else
	not_ok "a second question, with Cancel (don't answer)"
fi
keys 1 Enter
wait_for 10 screen_has "[demo] Name (at least 1 character):" || true
keys Bo Enter
if wait_for 10 screen_has "[demo] Nickname (optional, empty skips):"; then
	ok "its fields are asked"
else
	not_ok "its fields are asked"
fi
keys Escape
if wait_for 10 screen_has "MCP server 'demo' is waiting for your answer: :Switchboard elicit"; then
	ok "Escape in a field: the notice says the question waits"
else
	not_ok "Escape in a field: the notice says the question waits"
fi
if [ "$(resolved_count)" = 1 ] && [ ! -e "$SWITCHBOARD_TUI_RESULT" ]; then
	ok "nothing was answered (the host still waits)"
else
	not_ok "nothing was answered: $(resolved_count) elicitationResolved, result: $(cat "$SWITCHBOARD_TUI_RESULT" 2>/dev/null)"
fi
keys Enter
if wait_for 10 screen_has "SB 1/1 1 question"; then
	ok "the statusline still counts it"
else
	not_ok "the statusline still counts it"
fi
keys ':Switchboard elicit' Enter
if wait_for 10 screen_has "MCP server 'demo' asks: Second TUI question"; then
	ok ":Switchboard elicit asks it again"
else
	not_ok ":Switchboard elicit asks it again"
fi
keys 1 Enter
if wait_for 10 screen_has "[demo] Name (at least 1 character): Bo"; then
	ok "the name typed before is filled in"
else
	not_ok "the name typed before is filled in"
fi
keys Enter
wait_for 10 screen_has "[demo] Nickname (optional, empty skips):" || true
keys Enter
wait_for 10 screen_has "[demo] Agree" || true
keys 1 Enter
answered2() { grep -sqF '{"action":"accept","content":{"agree":true,"name":"Bo"}}' "$SWITCHBOARD_TUI_RESULT"; }
if wait_for 10 answered2; then
	ok "the server got the answer, with the kept name"
else
	not_ok "the server got {agree: true, name: Bo}: $(cat "$SWITCHBOARD_TUI_RESULT" 2>/dev/null)"
fi

# Progress of a long call, in both windows' statuslines (redrawstatus!), gone after :Switchboard cancel.
on_screen() { [ "$(screen | grep -o -- "$1" | wc -l)" -ge "$2" ]; }
keys Escape ':SBSlow' Enter
if wait_for 10 on_screen "mcp__demo__slow 100% step 2 of 2" 2 || wait_for 10 on_screen "mcp__demo__slow" 2; then
	ok "the progress of a long call shows in both windows' statuslines"
else
	not_ok "the progress of a long call shows in both windows' statuslines"
fi
keys ':Switchboard cancel' Enter
# (The cancel notice in the command line may name the tool once.)
slow_gone() { [ "$(screen | grep -o mcp__demo__slow | wc -l)" -le 1 ] && on_screen "SB 1/1" 2; }
if wait_for 10 slow_gone; then
	ok ":Switchboard cancel ends it; both statuslines clear"
else
	not_ok ":Switchboard cancel ends it; both statuslines clear"
fi

tmux -L "$sock" send-keys -t sb Escape ':qa!' Enter
wait_for 5 sh -c "! tmux -L '$sock' has-session -t sb 2>/dev/null" || true
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
