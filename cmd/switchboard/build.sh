#!/usr/bin/env bash
# Builds switchboard as it ships: cmd/switchboard/build.sh OUT [go build flags...]
#
# Static (CGO_ENABLED=0 unless set), -trimpath, and without mcp-go's in-process transport.
# mcp-go v1.2.1's client packages hold an in-process transport (client/inprocess.go,
# client/transport/inprocess.go) that imports mcp-go's server package, and with it
# santhosh-tekuri/jsonschema/v6, whose init compiles every JSON Schema draft's meta-schemas: 5 ms
# and 1.7 MB at every start of `switchboard serve`, for code Switchboard never calls. The module
# cannot be patched in place (go build refuses an -overlay under GOMODCACHE), so this script copies
# mcp-go v1.2.1 from the module cache, leaves those two files out, and builds with a go.mod of its
# own (-modfile) that replaces mcp-go with the copy. The repository's go.mod and go.sum are not
# touched; `go build ./cmd/switchboard` and `go install` still work and give the same program,
# only slower to start. The Go test TestShippedBuild checks that this build links neither.
set -euo pipefail
GO=${GO:-go}
out=${1:?usage: cmd/switchboard/build.sh OUT [go build flags...]}
shift
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")/../.."

mod=$("$GO" mod download -json github.com/mark3labs/mcp-go | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
ver=$("$GO" list -m -f '{{.Version}}' github.com/mark3labs/mcp-go)
for f in client/inprocess.go client/transport/inprocess.go; do
  if [[ ! -f $mod/$f ]]; then
    echo "build.sh: mcp-go $ver has no $f: update this script for the new version" >&2
    exit 1
  fi
done

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
cp -R "$mod" "$work/mcp-go"
chmod -R u+w "$work/mcp-go"
rm "$work/mcp-go/client/inprocess.go" "$work/mcp-go/client/transport/inprocess.go"
cp go.mod go.sum "$work/"
printf '\nreplace github.com/mark3labs/mcp-go => %s/mcp-go\n' "$work" >>"$work/go.mod"

CGO_ENABLED=${CGO_ENABLED:-0} "$GO" build -trimpath -modfile="$work/go.mod" "$@" -o "$out" ./cmd/switchboard
