#!/usr/bin/env bash
# run.sh [NVIM]: the headless suite on one Neovim, against the real binaries.
#   SWITCHBOARD_BIN      path to the switchboard binary (required)
#   SWITCHBOARD_MCPTEST  path to cmd/mcptest (required)
#   SWITCHBOARD_TEST_FILTER=substring  runs only the matching cases
# Prints one line per case and `N passed, N failed` last; exits non-zero when a case failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
plugin=$(dirname "$here")
nvim=${1:-${NVIM:-nvim}}
: "${SWITCHBOARD_BIN:?set SWITCHBOARD_BIN to the switchboard binary}"
: "${SWITCHBOARD_MCPTEST:?set SWITCHBOARD_MCPTEST to the mcptest binary}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-nvim-test.XXXXXX")
keep=${SWITCHBOARD_TEST_KEEP:-}
cleanup() { [ -n "$keep" ] || rm -rf "$tmp"; }
trap cleanup EXIT

# Neovim's own state stays inside the temp dir.
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/xdg/config" XDG_DATA_HOME="$tmp/xdg/data" \
	XDG_STATE_HOME="$tmp/xdg/state" XDG_CACHE_HOME="$tmp/xdg/cache"
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME"
export SWITCHBOARD_TEST_TMP="$tmp" SWITCHBOARD_PLUGIN_DIR="$plugin"
export SWITCHBOARD_BIN SWITCHBOARD_MCPTEST
# The plugin's default cmd is { 'switchboard', 'serve' }: the binary under test comes first.
SWITCHBOARD_BIN=$(cd "$(dirname "$SWITCHBOARD_BIN")" && pwd)/$(basename "$SWITCHBOARD_BIN")
[ "$(basename "$SWITCHBOARD_BIN")" = switchboard ] || { echo "run.sh: SWITCHBOARD_BIN must be named switchboard" >&2; exit 2; }
export PATH="$(dirname "$SWITCHBOARD_BIN"):$PATH"
SWITCHBOARD_MCPTEST=$(cd "$(dirname "$SWITCHBOARD_MCPTEST")" && pwd)/$(basename "$SWITCHBOARD_MCPTEST")

# A watchdog: no case may hang the run.
timeout -k 5 "${SWITCHBOARD_TEST_DEADLINE:-300}" \
	"$nvim" --headless -u NONE -i NONE -n -c "luafile $here/main.lua" </dev/null 2>"$tmp/stderr" || rc=$?
rc=${rc:-0}
if [ "$rc" -ne 0 ] && [ -s "$tmp/stderr" ]; then
	echo "--- nvim stderr:" && tail -n 30 "$tmp/stderr"
fi
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	echo "run.sh: nvim timed out"
	echo "0 passed, 1 failed"
fi
exit "$rc"
