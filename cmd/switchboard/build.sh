#!/usr/bin/env bash
# Builds switchboard as it ships: cmd/switchboard/build.sh OUT [go build flags...]
#
# Static (CGO_ENABLED=0 unless set), -trimpath, and without mcp-go's in-process transport.
# mcp-go v1.2.1's client packages hold an in-process transport (client/inprocess.go,
# client/transport/inprocess.go) that imports mcp-go's server package, and with it
# santhosh-tekuri/jsonschema/v6, whose init compiles every JSON Schema draft's meta-schemas: 5 ms
# and 1.7 MB at every start of `switchboard serve`, for code Switchboard never calls. The module
# cannot be patched in place (go build refuses an -overlay under GOMODCACHE), so this script copies
# mcp-go from the module cache into .cache/build, leaves those two files out, and builds with a
# go.mod of its own (-modfile) that replaces mcp-go with the copy. The repository's go.mod and
# go.sum are not touched; `go build ./cmd/switchboard` and `go install` still work and give the
# same program, only slower to start. The binary's build information shows the replacement
# (`go version -m`: mcp-go v1.2.1 => ./.cache/build/mcp-go-v1.2.1). TestShippedBuild checks that
# this build links neither package.
set -euo pipefail
GO=${GO:-go}
out=${1:?usage: cmd/switchboard/build.sh OUT [go build flags...]}
shift
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")/../.."

"$GO" mod download github.com/mark3labs/mcp-go # says why on stderr when it cannot
mod=$("$GO" list -m -f '{{.Dir}}' github.com/mark3labs/mcp-go)
ver=$("$GO" list -m -f '{{.Version}}' github.com/mark3labs/mcp-go)
for f in client/inprocess.go client/transport/inprocess.go; do
  if [[ ! -f $mod/$f ]]; then
    echo "build.sh: mcp-go $ver has no $f: update this script for the new version" >&2
    exit 1
  fi
done

# The copy lives at a fixed place inside the module (.cache is ignored by git and by ./...), named
# by version, so the replacement recorded in the binary is the same path every time: two builds of
# the same source give the same bytes. It is made once, in a temporary folder renamed into place.
rel=.cache/build/mcp-go-$ver
if [[ ! -f $rel/.complete ]]; then
  mkdir -p .cache/build
  tmp=$(mktemp -d .cache/build/tmp.XXXXXX)
  trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
  cp -R "$mod" "$tmp/m"
  chmod -R u+w "$tmp/m"
  rm "$tmp/m/client/inprocess.go" "$tmp/m/client/transport/inprocess.go"
  touch "$tmp/m/.complete"
  # A rename never replaces a folder another build may be reading: GNU mv -T fails when the copy
  # is already there (another build made it meanwhile); without -T (macOS) a plain rename does.
  mv -T "$tmp/m" "$rel" 2>/dev/null || [[ -f $rel/.complete ]] || mv "$tmp/m" "$rel"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"; [[ -z ${tmp:-} ]] || { chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"; }' EXIT
cp go.mod go.sum "$work/"
printf '\nreplace github.com/mark3labs/mcp-go => ./%s\n' "$rel" >>"$work/go.mod"

CGO_ENABLED=${CGO_ENABLED:-0} "$GO" build -trimpath -modfile="$work/go.mod" "$@" -o "$out" ./cmd/switchboard
