#!/usr/bin/env bash
# make test-stress: the Go suite with -race -count=3 and the frontend's vitest suite three
# times, while every core is kept busy by a background load started and stopped here
# (one busy loop per core, at normal priority, so the tests get about half the machine).
# A test that fails here can fail on a newcomer's loaded machine: that is a defect of
# the test (or of the code), never of the machine.
#
#   scripts/test-stress.sh              the whole stress run
#   scripts/test-stress.sh --load-only  only the background load, until interrupted
#                                       (to run another `make test` beside it)
#
# Environment: STRESS_COUNT (default 3) runs of each suite, STRESS_PKGS (default ./...)
# the Go packages, STRESS_LOAD (default: the number of cores) busy loops.
# Output: build/stress/go.json (go test -json), build/stress/vitest-N.json, and a summary
# of runs, failures and the load average (sampled every 5 s) in build/stress/summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=$PWD/build/stress
COUNT=${STRESS_COUNT:-3}
PKGS=${STRESS_PKGS:-./...}
LOAD=${STRESS_LOAD:-$(nproc)}
TAGS=sqlite_fts5
mkdir -p "$OUT"

loaders=()
sampler=
stop_load() {
  ((${#loaders[@]})) && kill "${loaders[@]}" 2>/dev/null
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
  wait 2>/dev/null
  loaders=()
  sampler=
}
trap 'stop_load' EXIT
trap 'stop_load; exit 130' INT TERM

start_load() {
  local i
  for ((i = 0; i < LOAD; i++)); do
    # A plain busy loop per core: no package to install, and it stops with its shell.
    bash -c 'while :; do :; done' &
    loaders+=($!)
  done
  printf '== stress: %d busy loops started (%d cores)\n' "$LOAD" "$(nproc)"
}

if [ "${1:-}" = --load-only ]; then
  start_load
  echo "== stress: background load running; Ctrl+C (or kill $$) stops it"
  wait
  exit 0
fi

: >"$OUT/loadavg.txt"
start_load
(while :; do cut -d' ' -f1 /proc/loadavg >>"$OUT/loadavg.txt"; sleep 5; done) &
sampler=$!

t0=$SECONDS
printf '== stress: go test -race -count=%d %s\n' "$COUNT" "$PKGS"
# shellcheck disable=SC2086 # PKGS may name several
go test -race -tags "$TAGS" -count="$COUNT" -timeout 90m -json $PKGS >"$OUT/go.json" 2>"$OUT/go.stderr"
go_rc=$?
go_time=$((SECONDS - t0))

vitest_runs=0 vitest_tests=0 vitest_failed=0 vitest_rc=0
t1=$SECONDS
for ((i = 1; i <= COUNT; i++)); do
  printf '== stress: vitest run %d of %d\n' "$i" "$COUNT"
  (cd frontend && npx vitest run --reporter=dot --reporter=json --outputFile="$OUT/vitest-$i.json") >"$OUT/vitest-$i.log" 2>&1 || vitest_rc=1
  read -r n f < <(node -e '
    try { const r = require(process.argv[1]); console.log(r.numTotalTests, r.numFailedTests + (r.numFailedTestSuites || 0)); }
    catch (e) { console.log(0, 1); }' "$OUT/vitest-$i.json")
  vitest_runs=$((vitest_runs + 1)) vitest_tests=$((vitest_tests + n)) vitest_failed=$((vitest_failed + f))
done
vitest_time=$((SECONDS - t1))
stop_load

go_tests=$(grep -c '"Action":"\(pass\|fail\)","Package":"[^"]*","Test":' "$OUT/go.json")
go_failed_lines=$(grep '"Action":"fail","Package":"[^"]*","Test":' "$OUT/go.json" |
  sed -E 's/.*"Package":"([^"]+)","Test":"([^"]+)".*/\1 \2/' | sort | uniq -c)
go_failed=$(grep -c '"Action":"fail","Package":"[^"]*","Test":' "$OUT/go.json")
# A package that failed without a failing test (a build error, a panic, a timeout).
pkg_failed=$(grep '"Action":"fail","Package":"[^"]*","Elapsed"' "$OUT/go.json" | sed -E 's/.*"Package":"([^"]+)".*/\1/')
read -r lmax lmean < <(awk '{s+=$1; if ($1>m) m=$1} END {if (NR) printf "%.2f %.2f\n", m, s/NR; else print "0 0"}' "$OUT/loadavg.txt")

{
  echo "==== make test-stress: summary ($(nproc) cores, $LOAD busy loops; load average over the run: mean $lmean, max $lmax)"
  printf 'go:     %d test runs (-count=%d), %d failed, %dm%02ds\n' "$go_tests" "$COUNT" "$go_failed" $((go_time / 60)) $((go_time % 60))
  [ -n "$go_failed_lines" ] && printf '        failed (times, package, test):\n%s\n' "$go_failed_lines"
  [ -n "$pkg_failed" ] && printf '        packages that failed: %s\n' "$(echo $pkg_failed)"
  ((go_rc != 0)) && [ -s "$OUT/go.stderr" ] && printf '        go test stderr:\n%s\n' "$(tail -20 "$OUT/go.stderr")"
  printf 'vitest: %d runs, %d test runs, %d failed, %dm%02ds\n' "$vitest_runs" "$vitest_tests" "$vitest_failed" $((vitest_time / 60)) $((vitest_time % 60))
  if ((vitest_failed)); then
    for ((i = 1; i <= COUNT; i++)); do grep -E '(FAIL|×|✗) ' "$OUT/vitest-$i.log" | head -20; done
  fi
} | tee "$OUT/summary.txt"

((go_rc == 0 && go_failed == 0 && vitest_rc == 0 && vitest_failed == 0))
