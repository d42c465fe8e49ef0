#!/usr/bin/env bash
# The VS Code extension's node tier, from a clean checkout: npm ci, type-check, lint, bundle,
# package the .vsix, then the unit tests under node (a stand-in vscode module with the real
# vscode-languageclient against the real switchboard binary and cmd/mcptest).
# Ends with "N passed, N failed". Env: SWITCHBOARD_BIN / MCPTEST_BIN to skip the Go builds.
set -euo pipefail
ext="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$(cd "$ext/../.." && pwd)"
cd "$ext"
start=$SECONDS
phase() { printf '== %s (t=%ss)\n' "$1" "$((SECONDS - start))"; }

phase "npm ci"
if [ "${SWITCHBOARD_SKIP_NPM_CI:-}" != 1 ]; then npm ci --no-audit --no-fund --loglevel=error; fi
phase "typecheck"
npm run --silent typecheck
phase "lint"
npm run --silent lint
phase "bundle"
npm run --silent build
phase "go build"
bin="$ext/test/.work/bin"
rm -rf "$ext/test/.work"
mkdir -p "$bin"
# The binary the tests run is the one the .vsix carries: built as package.sh builds it.
if [ -z "${SWITCHBOARD_BIN:-}" ]; then (cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/switchboard" ./cmd/switchboard); export SWITCHBOARD_BIN="$bin/switchboard"; fi
if [ -z "${MCPTEST_BIN:-}" ]; then (cd "$repo" && go build -o "$bin/mcptest" ./cmd/mcptest); export MCPTEST_BIN="$bin/mcptest"; fi

phase "package"
# The generic .vsix (no binary; finds switchboard through the setting, $SWITCHBOARD_PATH or PATH)
# and this machine's platform .vsix, which carries the binary (the one the e2e workbench installs).
npx vsce package --no-dependencies --skip-license -o switchboard.vsix </dev/null | tail -1
SWITCHBOARD_BUNDLE_BIN="$SWITCHBOARD_BIN" bash scripts/package.sh host
export SWITCHBOARD_VSIX_PLATFORM
SWITCHBOARD_VSIX_PLATFORM="$(ls "$ext"/vsix/switchboard-linux-*.vsix | head -1)"

phase "node tests"
tap="$ext/test/.work/results.tap"
set +e
node --import tsx --test --test-concurrency=1 --test-timeout=120000 \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap" \
  test/*.test.ts
rc=$?
set -e
pass="$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tap" | tail -1)"
fail="$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tap" | tail -1)"
[ "$rc" -ne 0 ] && [ "${fail:-0}" = 0 ] && fail=1
phase "done"
echo "vscode node tier: $((SECONDS - start)) s"
echo "${pass:-0} passed, ${fail:-0} failed"
exit "$rc"
