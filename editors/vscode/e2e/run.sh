#!/usr/bin/env bash
# End-to-end test of the Switchboard extension in a real VS Code workbench: code-server 4.100.3
# served on 127.0.0.1, driven by Debian's chromium through playwright-core (run.mjs).
#
# Fresh profile every run; the .vsix is installed with code-server --install-extension; the
# extension starts the real switchboard binary with cmd/mcptest as MCP servers. code-server runs in
# its own process group (setsid), which is ended at exit. Screenshots of failed steps go to
# e2e/work/<run>/screenshots (printed).
#
# Needs: e2e/setup.sh done; Go (to build the binaries unless SWITCHBOARD_BIN and MCPTEST_BIN are
# given); the extension's npm ci done (to package the .vsix unless SWITCHBOARD_VSIX is given).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ext="$(cd "$here/.." && pwd)"
repo="$(cd "$ext/../.." && pwd)"
start=$SECONDS

work="${SWITCHBOARD_E2E_WORK:-$here/work/run-$(date +%Y%m%d-%H%M%S)-$$}"
rm -rf "$work"
mkdir -p "$work"/{bin,ud/User,ud/Machine,ext,ws,xdg-config,xdg-data,xdg-state,hook,screenshots}
# A short TMPDIR: chromium's singleton socket path must fit in a sockaddr_un.
tmp="$(mktemp -d /tmp/sbe2e.XXXXXX)"
echo "e2e: work folder $work"

# --- binaries and the .vsix ---
if [ -n "${SWITCHBOARD_BIN:-}" ]; then cp "$SWITCHBOARD_BIN" "$work/bin/switchboard"; else (cd "$repo" && go build -o "$work/bin/switchboard" ./cmd/switchboard); fi
if [ -n "${MCPTEST_BIN:-}" ]; then cp "$MCPTEST_BIN" "$work/bin/mcptest"; else (cd "$repo" && go build -o "$work/bin/mcptest" ./cmd/mcptest); fi
vsix="${SWITCHBOARD_VSIX:-$ext/switchboard.vsix}"
if [ ! -f "$vsix" ]; then
  (cd "$ext" && npx vsce package --no-dependencies --skip-license -o "$vsix" </dev/null >/dev/null)
fi

cs="$here/node_modules/.bin/code-server"
[ -x "$cs" ] || { echo "e2e: code-server is not installed: run e2e/setup.sh" >&2; exit 1; }

# --- fresh profile ---
printf 'hello from the e2e workspace\n' >"$work/ws/a.txt"
node - "$work" <<'JS'
const fs = require("fs"), path = require("path");
const work = process.argv[2];
const settings = {
  "workbench.startupEditor": "none",
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.tips.enabled": false,
  "security.workspace.trust.enabled": false,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "chat.commandCenter.enabled": false,
  "window.commandCenter": false,
  "workbench.editor.enablePreview": false,
  "switchboard.path": path.join(work, "bin", "switchboard"),
  "switchboard.servers": {
    mcptest: { command: path.join(work, "bin", "mcptest") },
    broken: { command: path.join(work, "bin", "mcptest"), args: ["--exit-at-start"] },
    asker: { command: path.join(work, "bin", "mcptest"), args: ["--elicit"] },
  },
  "switchboard.approvalTimeoutSeconds": 600,
  "switchboard.provider": { type: "script", script: path.join(work, "chat.script") },
};
// The scripted model of the chat step (session/script format): one tool call, then an answer.
fs.writeFileSync(path.join(work, "chat.script"), [
  'expect last_user ~ "hello switchboard"',
  'reply text "Let me ask the echo tool."',
  'reply tool_call id=c1 name=mcp__mcptest__echo args={"text":"chat ping"}',
  "",
  'expect last_tool_result id=c1 ~ "chat ping"',
  'reply text "The echo tool said: chat ping"',
  "",
].join("\n"));
// Machine-scoped settings (switchboard.servers) are read from the remote (Machine) settings in code-server.
for (const d of ["User", "Machine"]) fs.writeFileSync(path.join(work, "ud", d, "settings.json"), JSON.stringify(settings, null, 2));
JS

export XDG_CONFIG_HOME="$work/xdg-config" XDG_DATA_HOME="$work/xdg-data" XDG_STATE_HOME="$work/xdg-state"
export SWITCHBOARD_EVENTS="$work/events.jsonl" SWITCHBOARD_VSCODE_TESTDIR="$work/hook"
export TMPDIR="$tmp"
unset SWITCHBOARD_PATH

"$cs" --user-data-dir "$work/ud" --extensions-dir "$work/ext" --install-extension "$vsix" >"$work/install.log" 2>&1 \
  || { cat "$work/install.log"; exit 1; }

port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
setsid "$cs" --auth none --bind-addr "127.0.0.1:$port" --user-data-dir "$work/ud" --extensions-dir "$work/ext" \
  --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  "$work/ws" >"$work/code-server.log" 2>&1 </dev/null &
pgid=$!

cleanup() {
  local rc=$?
  if kill -0 "$pgid" 2>/dev/null; then
    kill -TERM -- "-$pgid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 -- "-$pgid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pgid" 2>/dev/null || true
  fi
  # MCP servers live in process groups of their own (the host ends them on shutdown); end any
  # that outlived it, by pid, matched on this run's private binary path.
  local left
  left="$(ps -eo pid=,args= | awk -v b="$work/bin/" 'index($0, b) && !/awk/ {print $1}')"
  if [ -n "$left" ]; then
    echo "e2e: ending leftover processes: $(echo $left)"
    kill -KILL $left 2>/dev/null || true
  fi
  rm -rf "$tmp"
  if [ "$rc" -eq 0 ] && [ "${SWITCHBOARD_E2E_KEEP:-}" != 1 ]; then
    rm -rf "$work"
  else
    echo "e2e: kept $work (code-server.log, events.jsonl, screenshots/)"
  fi
  echo "e2e: total $((SECONDS - start)) s"
  exit $rc
}
trap cleanup EXIT INT TERM

for _ in $(seq 150); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { echo "e2e: code-server did not come up" >&2; cat "$work/code-server.log"; exit 1; }
echo "e2e: code-server listening on 127.0.0.1:$port after $((SECONDS - start)) s"

E2E_URL="http://127.0.0.1:$port/?folder=$work/ws" E2E_WORK="$work" node "$here/run.mjs"
