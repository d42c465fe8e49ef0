#!/usr/bin/env bash
# Builds switchboard, mcptest and sbbench, installs mcp-hub (pinned) if missing, and prints the
# side-by-side table. Extra arguments go to sbbench, e.g. `cmd/sbbench/run.sh --quick`.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN=$ROOT/bin
MCP_HUB_VERSION=4.2.1
HUB_DIR=$ROOT/.cache/mcp-hub
HUB_JS=$HUB_DIR/node_modules/mcp-hub/dist/cli.js
EVERYTHING_VERSION=2026.8.31 # as in cmd/switchboard/npmref_test.go
EVERYTHING_DIR=$ROOT/.cache/server-everything
EVERYTHING_JS=$EVERYTHING_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js

bash cmd/switchboard/build.sh "$BIN/switchboard" # as it ships
go build -o "$BIN/mcptest" ./cmd/mcptest
go build -o "$BIN/sbbench" ./cmd/sbbench

hub_args=()
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "run.sh: node/npm not found: mcp-hub columns will be empty" >&2
  hub_args=(--mcp-hub none --everything none)
else
  have=$(node -p "require('$HUB_DIR/node_modules/mcp-hub/package.json').version" 2>/dev/null || true)
  if [[ "$have" != "$MCP_HUB_VERSION" ]]; then
    mkdir -p "$HUB_DIR"
    npm install --prefix "$HUB_DIR" --no-audit --no-fund --no-save "mcp-hub@$MCP_HUB_VERSION" >&2
  fi
  hub_args=(--mcp-hub "$HUB_JS")
  have=$(node -p "require('$EVERYTHING_DIR/node_modules/@modelcontextprotocol/server-everything/package.json').version" 2>/dev/null || true)
  if [[ "$have" != "$EVERYTHING_VERSION" ]]; then
    mkdir -p "$EVERYTHING_DIR"
    npm install --prefix "$EVERYTHING_DIR" --no-audit --no-fund --no-save "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >&2
  fi
  hub_args+=(--everything "$EVERYTHING_JS")
fi

"$BIN/sbbench" agent # the scripted-model benchmark of tool search (issue 18)

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), node $(node --version 2>/dev/null || echo none), mcp-hub $MCP_HUB_VERSION" >&2
exec "$BIN/sbbench" --switchboard "$BIN/switchboard" --mcptest "$BIN/mcptest" "${hub_args[@]}" "$@"
