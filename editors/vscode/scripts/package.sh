#!/usr/bin/env bash
# Builds platform-specific .vsix files, each carrying its platform's switchboard binary in bin/
# (cross-compiled with CGO_ENABLED=0). The extension runs that binary unless the user sets
# switchboard.path.
#
#   scripts/package.sh                  every platform below
#   scripts/package.sh linux-x64 ...    only these (VS Code target names)
#   scripts/package.sh host             the platform of this machine (what `make test` builds)
#
# Output: $SWITCHBOARD_VSIX_OUT (default editors/vscode/vsix)/switchboard-<target>.vsix.
# Env: SWITCHBOARD_BUNDLE_BIN=<file> to
# bundle that binary instead of building one (one target only; test.sh passes the one it tests).
set -euo pipefail
ext="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$(cd "$ext/../.." && pwd)"
out="${SWITCHBOARD_VSIX_OUT:-$ext/vsix}"
all=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64)
start=$SECONDS

host_target() {
  local os arch
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) os=win32 ;; esac
  case "$(uname -m)" in x86_64|amd64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) echo "package: unknown machine $(uname -m)" >&2; exit 1 ;; esac
  echo "$os-$arch"
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
for i in "${!targets[@]}"; do [ "${targets[$i]}" = host ] && targets[$i]="$(host_target)"; done

cd "$ext"
# vsce runs the vscode:prepublish script (the minified bundle) itself.
mkdir -p "$out"
version="$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)"
# bin/ is the staging place of one binary at a time; never leave one behind for the next target.
trap 'rm -rf "$ext/bin"' EXIT
for t in "${targets[@]}"; do
  t0=$SECONDS
  case "$t" in
    linux-x64) goos=linux goarch=amd64 ;;
    linux-arm64) goos=linux goarch=arm64 ;;
    alpine-x64) goos=linux goarch=amd64 ;;
    alpine-arm64) goos=linux goarch=arm64 ;;
    darwin-x64) goos=darwin goarch=amd64 ;;
    darwin-arm64) goos=darwin goarch=arm64 ;;
    win32-x64) goos=windows goarch=amd64 ;;
    win32-arm64) goos=windows goarch=arm64 ;;
    *) echo "package: unknown target $t (known: ${all[*]} alpine-x64 alpine-arm64)" >&2; exit 2 ;;
  esac
  exe=switchboard
  [ "$goos" = windows ] && exe=switchboard.exe
  rm -rf "$ext/bin"
  mkdir -p "$ext/bin"
  if [ -n "${SWITCHBOARD_BUNDLE_BIN:-}" ]; then
    [ ${#targets[@]} -eq 1 ] || { echo "package: SWITCHBOARD_BUNDLE_BIN needs exactly one target" >&2; exit 2; }
    cp "$SWITCHBOARD_BUNDLE_BIN" "$ext/bin/$exe"
  else (cd "$repo" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch bash cmd/switchboard/build.sh "$ext/bin/$exe" \
    -ldflags "-s -w -X main.version=$version"); fi
  chmod 755 "$ext/bin/$exe"
  npx vsce package --no-dependencies --skip-license --target "$t" -o "$out/switchboard-$t.vsix" </dev/null >/dev/null
  echo "package: $out/switchboard-$t.vsix ($(du -k "$out/switchboard-$t.vsix" | cut -f1) KB, $((SECONDS - t0)) s)"
done
echo "package: ${#targets[@]} .vsix in $((SECONDS - start)) s"
