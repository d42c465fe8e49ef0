#!/usr/bin/env bash
# Installs what the end-to-end test needs on a fresh Debian 12 machine (as root, Node 20):
# Debian's chromium, the headers code-server's native modules build against, ripgrep, and
# code-server 4.100.3 + playwright-core from e2e/package-lock.json.
# See shared/notes/editors.md section 2.1 for why each workaround is here.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$SECONDS

if [ "${SWITCHBOARD_E2E_SKIP_APT:-}" != 1 ]; then
  need=()
  for p in chromium libkrb5-dev ripgrep; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    echo "e2e/setup: apt-get install ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi
command -v chromium >/dev/null || { echo "e2e/setup: chromium is missing" >&2; exit 1; }
command -v rg >/dev/null || { echo "e2e/setup: rg is missing" >&2; exit 1; }

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" != 20 ]; then
  echo "e2e/setup: code-server 4.100.3 needs Node 20 (found $(node --version))" >&2
  exit 1
fi

# @vscode/ripgrep's postinstall downloads rg from GitHub: seed its cache with Debian's rg.
# The file name is tied to code-server 4.100.3's shrinkwrap (@vscode/ripgrep 1.15.11).
cache="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11"
mkdir -p "$cache"
tar czf "$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg

if [ -x "$here/node_modules/.bin/code-server" ] && [ "${SWITCHBOARD_E2E_REINSTALL:-}" != 1 ] \
   && cmp -s "$here/package-lock.json" "$here/node_modules/.package-lock.json.copy" 2>/dev/null; then
  echo "e2e/setup: node_modules is current"
else
  cd "$here"
  # As root, code-server's postinstall wants unsafe-perm; npx (node-pty's node-gyp) must not prompt.
  npm_config_unsafe_perm=true npm_config_yes=true npm_config_fund=false npm_config_audit=false \
    npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.package-lock.json.copy
fi
echo "e2e/setup: code-server $(node -p "require('$here/node_modules/code-server/package.json').version"), playwright-core $(node -p "require('$here/node_modules/playwright-core/package.json').version")"
echo "e2e/setup: done in $((SECONDS - start)) s"
