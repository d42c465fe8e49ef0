#!/usr/bin/env bash
# The official MCP conformance suite (client mode) against Switchboard: npm ci of the pinned
# suite, go build -race of cmd/sbconformance, then every client scenario of each era, one at a
# time, each at its era's wire (--spec-version), plus the extension scenarios once. A scenario
# listed in expected-failures.txt must fail and any other must pass; a listed one that passes
# fails the run too (the entry is stale). Ends with a table and "N passed, N expected to fail,
# N failed". Results: bin/conformance/<era>/<scenario>.log.
#
# usage: run.sh [--era 2025-11-25|2026-07-28|extension]... [--ignore-expected] [SCENARIO...]
#   --era E            run only era E (repeatable; default: every era)
#   --ignore-expected  report listed scenarios as pass/fail too, without failing the run on them
# Env: SWITCHBOARD_SKIP_NPM_CI=1 keeps node_modules as they are; SBCONFORMANCE_PROTOCOL is
# handed to the client (see main.go).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"

eras=()
scenarios=()
ignore=0
while [ $# -gt 0 ]; do
  case "$1" in
    --era) eras+=("$2"); shift 2 ;;
    --era=*) eras+=("${1#--era=}"); shift ;;
    --ignore-expected) ignore=1; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown flag $1" >&2; exit 2 ;;
    *) scenarios+=("$1"); shift ;;
  esac
done
[ ${#eras[@]} -gt 0 ] || eras=(2025-11-25 2026-07-28 extension)
for e in "${eras[@]}"; do
  case "$e" in 2025-11-25|2026-07-28|extension) ;; *) echo "run.sh: unknown era $e (2025-11-25, 2026-07-28 or extension)" >&2; exit 2 ;; esac
done

if [ "${SWITCHBOARD_SKIP_NPM_CI:-}" != 1 ]; then npm ci --no-audit --no-fund --loglevel=error; fi
# Node 20 lacks fs.globSync, which the suite's CLI imports: node20/globsync.mjs supplies it.
suite=(node --import "$here/node20/globsync.mjs" "$here/node_modules/@modelcontextprotocol/conformance/dist/index.js")

out="$repo/bin/conformance"
rm -rf "$out"
mkdir -p "$out"
(cd "$repo" && go build -race -o "$out/sbconformance" ./cmd/sbconformance)

# The suite's own list: "  - NAME [TAGS]" under "Client scenarios".
"${suite[@]}" list --client >"$out/list.txt"
known() { sed -n 's/^  - \([^ ]*\) \[\(.*\)\]$/\1 \2/p' "$out/list.txt"; }
[ "$(known | wc -l)" -gt 0 ] || { echo "run.sh: the suite listed no client scenarios (its list format changed?):" >&2; cat "$out/list.txt" >&2; exit 1; }
in_era() { known | awk -v era="$1" '{ n = split($2, t, ","); for (i = 1; i <= n; i++) if (t[i] == era) { print $1; break } }'; }

# expected-failures.txt: "ERA SCENARIO REASON..." lines; extension entries must be extension
# scenarios of the suite, and every entry needs a reason.
declare -A expected=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  line="${line%%#*}"
  read -r era name reason <<<"$line" || true
  [ -n "${era:-}" ] || continue
  where="expected-failures.txt:$lineno"
  case "$era" in 2025-11-25|2026-07-28|extension) ;; *) echo "run.sh: $where: unknown era '$era'" >&2; exit 1 ;; esac
  [ -n "${name:-}" ] && [ -n "${reason:-}" ] || { echo "run.sh: $where: want 'ERA SCENARIO REASON'" >&2; exit 1; }
  in_era "$era" | grep -qxF "$name" || { echo "run.sh: $where: '$name' is not a client scenario of $era in this suite" >&2; exit 1; }
  expected["$era $name"]="$reason"
done <"$here/expected-failures.txt"

client="$out/sbconformance"
pass=0 xfail=0 fail=0
table=()
start=$SECONDS
for era in "${eras[@]}"; do
  mapfile -t list < <(in_era "$era")
  if [ ${#scenarios[@]} -gt 0 ]; then
    mapfile -t list < <(printf '%s\n' "${list[@]}" | grep -xF -f <(printf '%s\n' "${scenarios[@]}") || true)
  fi
  for s in "${list[@]}"; do
    log="$out/$era/$s.log"
    mkdir -p "$(dirname "$log")"
    args=(client --command "$client" --scenario "$s" -o "$out/$era/results")
    # An extension is on no spec timeline: it runs at the suite's default version.
    [ "$era" = extension ] || args+=(--spec-version "$era")
    set +e
    SBCONFORMANCE_PROTOCOL="${SBCONFORMANCE_PROTOCOL:-}" "${suite[@]}" "${args[@]}" >"$log" 2>&1
    rc=$?
    set -e
    why="${expected["$era $s"]:-}"
    if [ $rc -eq 0 ] && [ -z "$why" ]; then
      verdict=pass; pass=$((pass + 1))
    elif [ $rc -ne 0 ] && [ -n "$why" ]; then
      verdict=xfail; xfail=$((xfail + 1))
    elif [ -n "$why" ] && [ $ignore = 1 ]; then
      verdict="pass (listed as expected to fail)"; pass=$((pass + 1))
    elif [ -n "$why" ]; then
      verdict="FAIL: passes but is listed in expected-failures.txt (remove the entry)"; fail=$((fail + 1))
    else
      verdict=FAIL; fail=$((fail + 1))
    fi
    table+=("$(printf '%-11s %-45s %s' "$era" "$s" "$verdict")")
    printf '%-11s %-45s %s\n' "$era" "$s" "$verdict"
    if [ "$verdict" = FAIL ] || { [ $rc -ne 0 ] && [ $ignore = 1 ]; }; then
      # The suite's failed and warning checks, and the client's last words.
      sed -n '/^Failed Checks:/,/OVERALL/p; /^Warning Checks:/,/OVERALL/p; /CLIENT TIMED OUT/p; /CLIENT EXITED WITH ERROR/p' "$log" | sed 's/^/    /' | head -40
      grep -h 'sbconformance: ' "$log" | tail -3 | sed 's/^/    /' || true
    fi
  done
done
echo
echo "== conformance ($((SECONDS - start)) s; logs in bin/conformance/<era>/)"
printf '%s\n' "${table[@]}"
echo "$pass passed, $xfail expected to fail, $fail failed"
[ $fail -eq 0 ]
