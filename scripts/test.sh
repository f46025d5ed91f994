#!/usr/bin/env bash
# make test: every stage of the test suite, each run even when an earlier one failed,
# then a table of each stage's result and time; exits 1 if any stage failed.
#
#   scripts/test.sh              every stage
#   scripts/test.sh go frontend  only the stages named (see STAGES below)
#
# Each stage is a make target of its own (`make -n test-go` shows what it runs). Its
# output goes to the terminal as it runs and to build/test/<stage>.log; the table is
# also written to build/test/summary.txt. A stage that needs another's product says so
# in its row rather than failing on its own: smoke, desktop and package need `build`
# (the release binary and talaria-drivers).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=build/test
mkdir -p "$OUT"

# name:make-target(s). The order is the cheapest signal first; build comes before the
# stages that run the binary.
STAGES=(
  "vet:vet"
  "lint:lint"
  "vuln:vulncheck"
  "notices:notices-check"
  "go:test-go"
  "frontend:test-frontend"
  "build:build-only build-drivers-only"
  "smoke:smoke"
  "desktop:desktopcheck"
  "window:test-window-only"
  "windows:windows-only"
  "platforms:platforms-only"
  "package:package-only pkgtest-only"
)

want=("$@")
selected() {
  ((${#want[@]} == 0)) && return 0
  local w
  for w in "${want[@]}"; do [ "$w" = "$1" ] && return 0; done
  return 1
}

declare -a rows=()
failed=0
built=1
start_all=$SECONDS
for entry in "${STAGES[@]}"; do
  name=${entry%%:*} targets=${entry#*:}
  selected "$name" || continue
  printf '\n==== stage %s (make %s) ====\n' "$name" "$targets"
  case $name in
  smoke | desktop | package)
    if ((!built)); then
      rows+=("$(printf '%-10s %-8s %9s  %s' "$name" "skipped" "-" "the build stage failed")")
      failed=1
      continue
    fi
    ;;
  esac
  t0=$SECONDS
  # shellcheck disable=SC2086 # several targets on purpose
  make --no-print-directory $targets 2>&1 | tee "$OUT/$name.log"
  rc=${PIPESTATUS[0]}
  dt=$((SECONDS - t0))
  if ((rc == 0)); then
    result=passed
  else
    result=FAILED
    failed=1
    [ "$name" = build ] && built=0
  fi
  rows+=("$(printf '%-10s %-8s %5dm%02ds  %s' "$name" "$result" $((dt / 60)) $((dt % 60)) "$OUT/$name.log")")
done

total=$((SECONDS - start_all))
{
  printf '\n==== make test: summary (load average now: %s) ====\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-10s %-8s %9s  %s\n' stage result time log
  printf '%s\n' "${rows[@]}"
  printf '%-10s %-8s %5dm%02ds\n' total "$( ((failed)) && echo FAILED || echo passed)" $((total / 60)) $((total % 60))
} | tee "$OUT/summary.txt"
exit "$failed"
