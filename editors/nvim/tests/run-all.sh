#!/usr/bin/env bash
# run-all.sh: the whole Neovim tier, from a clean checkout (what CI runs).
#
#  1. installs what is missing (as root: apt-get install neovim patchelf tmux; Debian 12 gives
#     Neovim 0.7.2),
#  2. builds switchboard and mcptest,
#  3. fetches Neovim 0.10.x (Debian trixie) and 0.12.x (Debian forky) without touching the system
#     (fetch-nvim.sh), while the 0.7 suite runs,
#  4. runs the headless suite (run.sh) and the tmux test (tui.sh) on each version.
#
# Required: 0.7.x and 0.10.x (any failure exits 1). 0.12.x is reported and never fails the run.
# Environment: SWITCHBOARD_NVIM_CACHE (default <repo>/.cache/nvim-tests) keeps the fetched
# Neovims between runs; SWITCHBOARD_SKIP_LATEST=1 skips 0.12; SWITCHBOARD_BIN and
# SWITCHBOARD_MCPTEST use prebuilt binaries instead of building.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
cache=${SWITCHBOARD_NVIM_CACHE:-$repo/.cache/nvim-tests}
mkdir -p "$cache"
t_start=$(date +%s)
elapsed() { echo $(($(date +%s) - t_start)); }
say() { echo "== [$(elapsed)s] $*"; }

# 1. Packages --------------------------------------------------------------------------------
need=()
command -v nvim >/dev/null || need+=(neovim)
command -v patchelf >/dev/null || need+=(patchelf)
command -v tmux >/dev/null || need+=(tmux)
command -v luacheck >/dev/null || need+=(lua-check)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "run-all: missing ${need[*]}; install them (apt-get install ${need[*]})" >&2
		exit 1
	fi
	say "apt-get install ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >"$cache/apt-update.log" 2>&1 || { cat "$cache/apt-update.log"; exit 1; }
	apt-get install -y -q --no-install-recommends "${need[@]}" >"$cache/apt-install.log" 2>&1 ||
		{ tail -n 30 "$cache/apt-install.log"; exit 1; }
fi

say "luacheck"
(cd "$here/.." && luacheck --no-color -q .) || { echo "run-all: luacheck found problems"; exit 1; }

# 2. Binaries --------------------------------------------------------------------------------
if [ -z "${SWITCHBOARD_BIN:-}" ] || [ -z "${SWITCHBOARD_MCPTEST:-}" ]; then
	say "go build switchboard, mcptest"
	mkdir -p "$cache/bin"
	(cd "$repo" && go build -o "$cache/bin/switchboard" ./cmd/switchboard && go build -o "$cache/bin/mcptest" ./cmd/mcptest)
	export SWITCHBOARD_BIN="${SWITCHBOARD_BIN:-$cache/bin/switchboard}"
	export SWITCHBOARD_MCPTEST="${SWITCHBOARD_MCPTEST:-$cache/bin/mcptest}"
fi
export SWITCHBOARD_BIN SWITCHBOARD_MCPTEST

# 3. Newer Neovims, fetched in the background ------------------------------------------------
bash "$here/fetch-nvim.sh" trixie "$cache/nvim-trixie" >"$cache/fetch-trixie.log" 2>&1 &
fetch_trixie=$!
fetch_forky=
if [ -z "${SWITCHBOARD_SKIP_LATEST:-}" ]; then
	bash "$here/fetch-nvim.sh" forky "$cache/nvim-forky" >"$cache/fetch-forky.log" 2>&1 &
	fetch_forky=$!
fi

# 4. Suites ----------------------------------------------------------------------------------
total_pass=0 total_fail=0
report=()
# run_one LABEL REQUIRED NVIM: the headless suite and the tmux test on one Neovim.
run_one() {
	local label=$1 required=$2 nvim=$3 t0 out p f line
	t0=$(date +%s)
	say "$label: $("$nvim" --version | head -1) -- headless suite"
	out=$(mktemp)
	bash "$here/run.sh" "$nvim" 2>&1 | tee "$out" | sed 's/^/   /' || true
	bash "$here/tui.sh" "$nvim" 2>&1 | tee -a "$out" | sed 's/^/   tui: /' || true
	p=0 f=0
	while read -r line; do
		p=$((p + $(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed.*/\1/')))
		f=$((f + $(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed.*/\2/')))
	done < <(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out")
	# A suite that died before its summary line counts as a failure.
	[ "$(grep -cE '^[0-9]+ passed, [0-9]+ failed' "$out")" -eq 2 ] || f=$((f + 1))
	rm -f "$out"
	report+=("$(printf '%-22s %-12s %3d passed, %d failed  (%ds)' "$label" "$([ "$required" = yes ] && echo required || echo non-blocking)" "$p" "$f" $(($(date +%s) - t0)))")
	if [ "$required" = yes ]; then
		total_pass=$((total_pass + p))
		total_fail=$((total_fail + f))
	fi
}

sys_version=$(nvim --version | head -1)
run_one "nvim ${sys_version#NVIM v} (apt)" yes nvim

if wait "$fetch_trixie"; then
	run_one "nvim $("$cache/nvim-trixie/nvim" --version | head -1 | sed 's/NVIM v//') (trixie)" yes "$cache/nvim-trixie/nvim"
else
	say "fetching Neovim from trixie failed:"
	tail -n 20 "$cache/fetch-trixie.log"
	report+=("nvim trixie             required     fetch failed")
	total_fail=$((total_fail + 1))
fi

if [ -n "$fetch_forky" ]; then
	if wait "$fetch_forky"; then
		run_one "nvim $("$cache/nvim-forky/nvim" --version | head -1 | sed 's/NVIM v//') (forky)" no "$cache/nvim-forky/nvim"
	else
		say "fetching Neovim from forky failed (non-blocking):"
		tail -n 20 "$cache/fetch-forky.log"
		report+=("nvim forky              non-blocking fetch failed")
	fi
fi

say "summary"
for r in "${report[@]}"; do
	echo "   $r"
done
echo "neovim: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
